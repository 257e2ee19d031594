package main

import (
	"sync"

	"github.com/ibtracer/ibtracer_exporter/internal/nodenamemap"
	"github.com/ibtracer/ibtracer_exporter/trace"
)

// each runs f(0) .. f(n-1), at most conc of them at once (--concurrency),
// and returns when all have returned.
func each(n, conc int, f func(i int)) {
	sem := make(chan struct{}, conc)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			f(i)
		}()
	}
	wg.Wait()
}

// nameHops gives every hop of rs its site name from the node-name-map
// (--node-name-map); a nil map names nothing.
func nameHops(names nodenamemap.Map, rs []*trace.Result) {
	if names != nil {
		trace.NameHops(names.Name, rs...)
	}
}
