package config_test

import (
	"fmt"
	"time"

	"github.com/ibtracer/ibtracer_exporter/collector/config"
)

// Parse a configuration and read a destination: the keys left out hold
// their defaults.
func Example() {
	c, err := config.Parse("exporter.yml", []byte(`interval: 30s
destinations:
  - name: storage
    lid: 0x1a
    labels: {rack: r12}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	d := c.Destinations[0]
	fmt.Println(d.Name, d.Target().LID, time.Duration(d.Interval), d.Paths, d.HopSeries(), d.Labels["rack"])
	fmt.Println(c.Validate, c.Discovery, *c.Retries, c.LabelNames())
	// Output:
	// storage 26 30s one true r12
	// auto auto 2 [rack]
}

// A bad file is refused with the file, the line and the field.
func ExampleParse_error() {
	_, err := config.Parse("exporter.yml", []byte(`destinations:
  - name: storage
    lid: 0x1a
    paths: some
`))
	fmt.Println(err)
	// Output:
	// exporter.yml:4: destinations[0] (storage).paths: "some": want one (the LID given) or all (every LID of the port's LMC range)
}
