package logonce_test

import (
	"fmt"
	"time"

	"github.com/ibtracer/ibtracer_exporter/internal/logonce"
)

// A check that fails three times and recovers is logged twice: when it
// starts failing and when it recovers, with how long and how often it
// failed.
func Example() {
	var st logonce.State[bool] // failing
	at := time.Unix(1800000000, 0)
	for i, failing := range []bool{false, true, true, true, false, false} {
		now := at.Add(time.Duration(i) * time.Minute)
		c, changed := st.Observe(failing, now)
		switch {
		case !changed || !c.Known:
		case failing:
			fmt.Println("failing")
		default:
			fmt.Println("recovered after", c.Count, "failures in", now.Sub(c.Since))
		}
	}
	// Output:
	// failing
	// recovered after 3 failures in 3m0s
}
