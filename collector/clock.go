package collector

import (
	"github.com/ibtracer/ibtracer_exporter/ibmad"
)

// clock is the scheduler's time source, the module's one clock type
// (docs/architecture.md, "One clock"); tests replace it with a fake one
// so that a schedule of many intervals runs without waiting for them.
type clock = ibmad.Clock
