// Package config is the exporter's configuration file: strict YAML
// (unknown keys are errors), defaults, and validation whose messages name
// the file, the line and the field.
package config
