package main

import (
	"log/slog"
	"os"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
)

func newLogger(lvl, format string) log.Logger {
	w := log.NewSyncWriter(os.Stderr)
	var l log.Logger
	if format == "json" {
		l = log.NewJSONLogger(w)
	} else {
		l = log.NewLogfmtLogger(w)
	}
	l = log.With(l, "ts", log.DefaultTimestampUTC, "caller", log.Caller(5)) // 5: past the level filter
	return level.NewFilter(l, level.Allow(level.ParseDefault(lvl, level.InfoValue())))
}

func slogLevel(lvl string) slog.Level {
	switch lvl {
	case "debug":
		return slog.LevelDebug
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	}
	return slog.LevelInfo
}
