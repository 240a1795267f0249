package wire

// The bridge from go-plugin's hclog to the host's zerolog: plugin log
// lines arrive through go-plugin's logger and are re-emitted as zerolog
// events at the host's level.

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
	"github.com/rs/zerolog"
)

// effectiveLevel is the lowest level log writes at.
func effectiveLevel(log zerolog.Logger) zerolog.Level {
	return max(log.GetLevel(), zerolog.GlobalLevel())
}

// hcLogger is the hclog.Logger go-plugin logs to on the host side, written
// over a zerolog.Logger. The logger named after the plugin executable gets
// the plugin's own stderr lines (decoded from hclog JSON by go-plugin) and
// keeps their levels; go-plugin's messages about the process (starting,
// exiting) are one level quieter (info becomes debug), warnings and errors
// excepted. Every event has a "plugin" field.
type hcLogger struct {
	hclog.Logger // no-op fallback for the methods go-plugin does not need

	log        zerolog.Logger
	plugin     *atomic.Pointer[string]
	exe        string // base name of the plugin executable
	name       string
	fromPlugin bool
	implied    []any
	// quiet, once set (the host is killing the process and reports why
	// itself), makes go-plugin's own messages debug lines: "plugin
	// failed to exit gracefully", "plugin process exited: signal: killed".
	quiet *atomic.Bool
	// group is set for a process serving several plugins: a line that
	// names its plugin (groupPluginField) is that plugin's.
	group bool
}

var _ hclog.Logger = (*hcLogger)(nil)

// Log implements hclog.Logger.
func (h *hcLogger) Log(level hclog.Level, msg string, args ...any) {
	zl := zerologLevel(level)
	if !h.fromPlugin && zl <= zerolog.InfoLevel && zl > zerolog.TraceLevel {
		zl--
	}
	if !h.fromPlugin && (h.quiet != nil && h.quiet.Load() || msg == "plugin process exited") {
		// The host is killing the process, or the process ended: the
		// error of the call that finds it gone says how, in one line.
		zl = min(zl, zerolog.DebugLevel)
	}
	kv := append(slices.Clip(h.implied), args...)
	if h.fromPlugin {
		if len(kv) >= 2 && kv[len(kv)-2] == "timestamp" {
			kv = kv[:len(kv)-2] // go-plugin's copy of the plugin's timestamp
		} else {
			// A raw stderr line (not JSON from Logger): written before
			// Serve or by the runtime (a panic, a fatal error and its
			// goroutine dump, hundreds of lines). It is kept (see
			// output) and comes with the error of a process that
			// fails, in one line with the whole text saved apart, so
			// here it is a debug line.
			zl = zerolog.DebugLevel
		}
	}
	ev := h.log.WithLevel(zl)
	if ev == nil {
		return
	}
	name := *h.plugin.Load()
	if h.fromPlugin && h.group {
		for i := 0; i+1 < len(kv); i += 2 {
			if k, ok := kv[i].(string); ok && k == groupPluginField {
				name = fmt.Sprint(kv[i+1])
				kv = append(kv[:i:i], kv[i+2:]...)
				break
			}
		}
	}
	ev.Str("plugin", name)
	if !h.fromPlugin && h.name != "" {
		ev.Str("logger", h.name)
	}
	type field struct {
		key string
		val any
	}
	fields := make([]field, 0, len(kv)/2+1)
	for i := 0; i < len(kv); i += 2 {
		if i+1 == len(kv) {
			fields = append(fields, field{"EXTRA_VALUE_AT_END", kv[i]})
			break
		}
		key := fmt.Sprint(kv[i])
		if key == "plugin" {
			key = "plugin_arg"
			if !h.fromPlugin {
				key = "path" // go-plugin puts the executable's path there
			}
		}
		fields = append(fields, field{key, kv[i+1]})
	}
	slices.SortStableFunc(fields, func(a, b field) int { return strings.Compare(a.key, b.key) })
	for _, f := range fields {
		switch v := f.val.(type) {
		case error:
			ev.AnErr(f.key, v)
		case string:
			ev.Str(f.key, v)
		default:
			ev.Interface(f.key, v)
		}
	}
	ev.Msg(msg)
}

// Trace implements hclog.Logger.
func (h *hcLogger) Trace(msg string, args ...any) { h.Log(hclog.Trace, msg, args...) }

// Debug implements hclog.Logger.
func (h *hcLogger) Debug(msg string, args ...any) { h.Log(hclog.Debug, msg, args...) }

// Info implements hclog.Logger.
func (h *hcLogger) Info(msg string, args ...any) { h.Log(hclog.Info, msg, args...) }

// Warn implements hclog.Logger.
func (h *hcLogger) Warn(msg string, args ...any) { h.Log(hclog.Warn, msg, args...) }

// Error implements hclog.Logger.
func (h *hcLogger) Error(msg string, args ...any) { h.Log(hclog.Error, msg, args...) }

// IsTrace implements hclog.Logger.
func (h *hcLogger) IsTrace() bool { return h.GetLevel() <= hclog.Trace }

// IsDebug implements hclog.Logger.
func (h *hcLogger) IsDebug() bool { return h.GetLevel() <= hclog.Debug }

// IsInfo implements hclog.Logger.
func (h *hcLogger) IsInfo() bool { return h.GetLevel() <= hclog.Info }

// IsWarn implements hclog.Logger.
func (h *hcLogger) IsWarn() bool { return h.GetLevel() <= hclog.Warn }

// IsError implements hclog.Logger.
func (h *hcLogger) IsError() bool { return h.GetLevel() <= hclog.Error }

// ImpliedArgs implements hclog.Logger.
func (h *hcLogger) ImpliedArgs() []any { return h.implied }

// With implements hclog.Logger.
func (h *hcLogger) With(args ...any) hclog.Logger {
	c := *h
	c.implied = append(slices.Clip(h.implied), args...)
	return &c
}

// Name implements hclog.Logger.
func (h *hcLogger) Name() string { return h.name }

// Named implements hclog.Logger.
func (h *hcLogger) Named(name string) hclog.Logger {
	full := name
	if h.name != "" {
		full = h.name + "." + name
	}
	return h.ResetNamed(full)
}

// ResetNamed implements hclog.Logger.
func (h *hcLogger) ResetNamed(name string) hclog.Logger {
	c := *h
	c.name = name
	c.fromPlugin = name == h.exe
	return &c
}

// GetLevel implements hclog.Logger.
func (h *hcLogger) GetLevel() hclog.Level {
	switch l := effectiveLevel(h.log); {
	case l <= zerolog.TraceLevel:
		return hclog.Trace
	case l == zerolog.DebugLevel:
		return hclog.Debug
	case l == zerolog.InfoLevel:
		return hclog.Info
	case l == zerolog.WarnLevel:
		return hclog.Warn
	case l == zerolog.ErrorLevel, l == zerolog.FatalLevel, l == zerolog.PanicLevel:
		return hclog.Error
	case l == zerolog.NoLevel:
		return hclog.Trace
	}
	return hclog.Off
}

// zerologLevel maps an hclog level to zerolog's.
func zerologLevel(l hclog.Level) zerolog.Level {
	switch l {
	case hclog.Trace:
		return zerolog.TraceLevel
	case hclog.Debug:
		return zerolog.DebugLevel
	case hclog.Warn:
		return zerolog.WarnLevel
	case hclog.Error:
		return zerolog.ErrorLevel
	}
	return zerolog.InfoLevel
}

// lineLogger logs what a plugin writes to its (redirected) os.Stdout or
// os.Stderr, one event per line.
type lineLogger struct {
	log    zerolog.Logger
	plugin *atomic.Pointer[string]
	stream string
	level  zerolog.Level

	mu  sync.Mutex
	buf []byte
}

// Write implements io.Writer.
func (l *lineLogger) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		line := strings.TrimRight(string(l.buf[:i]), "\r")
		l.buf = l.buf[i+1:]
		l.log.WithLevel(l.level).Str("plugin", *l.plugin.Load()).Str("stream", l.stream).Msg(line)
	}
	if len(l.buf) > 64<<10 { // an endless line: log what there is
		l.log.WithLevel(l.level).Str("plugin", *l.plugin.Load()).Str("stream", l.stream).Msg(string(l.buf))
		l.buf = l.buf[:0]
	}
	if len(l.buf) == 0 {
		l.buf = nil
	}
	return len(p), nil
}
