// Package config is the exporter's configuration file: strict YAML
// (unknown keys are errors), defaults, and validation whose messages name
// the file, the line and the field.
//
// Its files:
//   - config.go: the keys (Config, AgentConfig, Destination), Load and
//     Parse, the lines of the keys;
//   - check.go: the defaults and checks, one method per part;
//   - destination.go: a destination's checks; its address is read by
//     trace.ParseDestination, once;
//   - fleet.go: mad_rate and the discover selectors;
//   - health.go: the health section;
//   - evidence.go: the evidence section (per-link evidence);
//   - congestion.go: Share, health's xmit_wait_limit;
//   - paths.go: paths and discovery;
//   - validate.go: validate, who validates each hop (auto, agent, sma,
//     off; the old true and false);
//   - nodenames.go: node_name_map;
//   - numbers.go: the integer keys, read strictly before decoding;
//   - errors.go: Error, and yaml's messages made readable;
//   - options.go: TraceOptions, the one translation into trace.Options.
package config
