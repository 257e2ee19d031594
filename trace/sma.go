package trace

import (
	"fmt"
)

// ValidateMode says who validates a trace's hops (docs/architecture.md,
// "The life of a trace", step 5; docs/protocol.md, "Validation by the SMA").
type ValidateMode string

// Validation modes; their values are ibtracer's --validate values.
const (
	// ValidateAuto asks our vendor agent where one answers and the node's
	// own SMA (a LID-routed Get(NodeInfo)) everywhere else: a hop whose
	// agent is missing ("no such class") or does not answer.
	ValidateAuto ValidateMode = "auto"
	// ValidateAgent asks only our vendor agent.
	ValidateAgent ValidateMode = "agent"
	// ValidateSMA asks only the SMAs: no vendor MAD is sent.
	ValidateSMA ValidateMode = "sma"
	// ValidateOff asks nobody: a plain ibtracert-style walk.
	ValidateOff ValidateMode = "off"
)

// ParseValidate parses a validation mode ("" is auto).
func ParseValidate(s string) (ValidateMode, error) {
	switch ValidateMode(s) {
	case "":
		return ValidateAuto, nil
	case ValidateAuto, ValidateAgent, ValidateSMA, ValidateOff:
		return ValidateMode(s), nil
	}
	return "", fmt.Errorf("validate %q: want auto, agent, sma or off", s)
}

// Validator is who gave a hop its verdict: the JSON's validated_by.
type Validator string

// Validators.
const (
	ByAgent Validator = "agent" // our vendor agent (SourceRoute)
	BySMA   Validator = "sma"   // the node's SMA (LID-routed NodeInfo.LocalPortNum)
)
