package main

import (
	"io"
	"log/slog"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	sloggokit "github.com/tjhop/slog-gokit"
)

// newLoggers returns the exporter's go-kit logger and the *slog.Logger the
// web toolkit logs through. Both write ts, caller and level once: the
// go-kit logger adds ts and caller itself; the slog bridge already carries
// the call site's caller and the record's time, so it writes to the bare
// logger, with its time key renamed to ts.
func newLoggers(w io.Writer, lvl, format string) (log.Logger, *slog.Logger) {
	w = log.NewSyncWriter(w)
	var raw log.Logger
	if format == "json" {
		raw = log.NewJSONLogger(w)
	} else {
		raw = log.NewLogfmtLogger(w)
	}
	allow := level.Allow(level.ParseDefault(lvl, level.InfoValue()))
	l := log.With(raw, "ts", log.DefaultTimestampUTC, "caller", log.Caller(5)) // 5: past the level filter
	bridge := level.NewFilter(tsFirst{raw}, allow)
	return level.NewFilter(l, allow), slog.New(sloggokit.NewGoKitHandler(bridge, slogLevel(lvl)))
}

// tsFirst writes the slog bridge's time key as ts, first, formatted as
// the go-kit logger's ts (RFC 3339, UTC).
type tsFirst struct{ next log.Logger }

func (t tsFirst) Log(kv ...any) error {
	out := make([]any, 0, len(kv)+2)
	for i := 0; i+1 < len(kv); i += 2 {
		if k, ok := kv[i].(string); ok && k == slog.TimeKey {
			v := kv[i+1]
			if tm, ok := v.(time.Time); ok {
				v = tm.UTC().Format(time.RFC3339Nano)
			}
			out = append([]any{"ts", v}, out...)
			continue
		}
		out = append(out, kv[i], kv[i+1])
	}
	return t.next.Log(out...)
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
