package main

import "github.com/ibtracer/ibtracer_exporter/internal/readlimit"

// checkWebConfig refuses a --web.config.file over readlimit.WebConfig's
// bound at start-up: exporter-toolkit reads the whole file, without a
// bound, when it starts serving (and again on each request), so a wrong
// path such as /dev/zero would exhaust memory (docs/runbook.md, "File
// size limits").
func checkWebConfig(path string) error {
	if path == "" {
		return nil
	}
	_, err := readlimit.ReadFile(path, readlimit.WebConfig)
	return err
}
