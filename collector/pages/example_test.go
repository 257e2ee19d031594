package pages_test

import (
	"fmt"
	"net/http/httptest"

	"github.com/ibtracer/ibtracer_exporter/collector/pages"
)

// /traces of one destination not traced yet, as JSON.
func ExampleTraces() {
	snapshot := func() pages.Snapshot {
		return pages.Snapshot{Device: "open", Destinations: []pages.Destination{
			{Name: "db01", Address: "lid 12", IntervalSeconds: 30},
		}}
	}
	w := httptest.NewRecorder()
	pages.Traces(snapshot).ServeHTTP(w, httptest.NewRequest("GET", "/traces?destination=db01", nil))
	fmt.Println(w.Code, w.Header().Get("Content-Type"))
	fmt.Print(w.Body.String())
	// Output:
	// 200 application/json
	// [
	//   {
	//     "name": "db01",
	//     "address": "lid 12",
	//     "interval_seconds": 30,
	//     "traces": 0,
	//     "path_changes": 0,
	//     "last_trace": null
	//   }
	// ]
}
