package config

import (
	"errors"
	"io/fs"
	"path/filepath"
	"testing"
)

// A missing configuration file says which and what to do (the packages
// install it; a source checkout names one with --config.file).
func TestLoadMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ibtracer.yml")
	_, err := Load(path)
	want := "open " + path + ": no such file or directory: the configuration file is missing; " +
		"create it (config.example.yml shows every key) or name another with --config.file"
	if err == nil || err.Error() != want || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Load of a missing file: %v\nwant %s", err, want)
	}
	if err := Check(path); err == nil || err.Error() != want {
		t.Fatalf("Check: %v", err)
	}
}
