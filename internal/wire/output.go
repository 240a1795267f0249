package wire

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
)

// outputKeep is how much of a plugin process's raw standard error is
// kept: its first and its last outputKeep bytes.
const outputKeep = 256 << 10

// output keeps what a plugin process writes to its standard error (file
// descriptor 2: its log lines, and what bypasses the log, such as the Go
// runtime's panic or fatal error with its goroutine dump), so that a
// process that fails can be reported in one line with the whole text
// saved apart. It keeps the first and last outputKeep bytes.
type output struct {
	mu      sync.Mutex
	head    []byte
	tail    []byte // a ring once full: tail[next:] then tail[:next]
	next    int
	dropped int64
}

// Write implements io.Writer.
func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := len(p)
	if room := outputKeep - len(o.head); room > 0 {
		k := min(room, len(p))
		o.head = append(o.head, p[:k]...)
		p = p[k:]
	}
	for len(p) > 0 {
		if len(o.tail) < outputKeep {
			k := min(outputKeep-len(o.tail), len(p))
			o.tail = append(o.tail, p[:k]...)
			p = p[k:]
			continue
		}
		k := copy(o.tail[o.next:], p)
		o.dropped += int64(k)
		o.next = (o.next + k) % outputKeep
		p = p[k:]
	}
	return n, nil
}

// String returns the text kept, with a line saying how much was left out
// between its head and tail.
func (o *output) String() string {
	if o == nil {
		return ""
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	var b bytes.Buffer
	b.Write(o.head)
	if o.dropped > 0 {
		fmt.Fprintf(&b, "\n[… %d bytes left out …]\n", o.dropped)
	}
	b.Write(o.tail[o.next:])
	b.Write(o.tail[:o.next])
	return b.String()
}

// crashCause returns the line of a Go program's standard error that says
// why it crashed ("fatal error: out of memory", "panic: boom"), or, with
// last, the last line not from its log (not JSON), or "".
func crashCause(out string, last bool) string {
	cause := ""
	for line := range strings.Lines(out) {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "panic: ") || strings.HasPrefix(line, "fatal error: ") {
			return line
		}
		if last && line != "" && !strings.HasPrefix(line, "{") {
			cause = line
		}
	}
	if r := []rune(cause); len(r) > 200 {
		cause = string(r[:200]) + "…"
	}
	return cause
}

// StartError reports a plugin process that failed its start-up handshake
// in a way go-plugin explains at length (a plugin that wrote to its
// standard output before the handshake, say). Error is one line; Detail
// holds go-plugin's full text and the process's standard error.
type StartError struct {
	Plugin string
	Reason string // one line
	Full   string // go-plugin's error text, several lines
	Output string // the process's standard error
}

// Error implements error.
func (e *StartError) Error() string {
	return fmt.Sprintf("plugin %q %s", e.Plugin, e.Reason)
}

// Detail returns the full text behind the one-line error.
func (e *StartError) Detail() string {
	return detail(e.Full, e.Output)
}

// Detail returns the process's standard error (with the Go runtime's
// crash report, if any), "" if it wrote nothing.
func (e *ExitError) Detail() string {
	return detail("", e.Output)
}

// detail joins an error's full text and a process's standard error.
func detail(full, out string) string {
	var b strings.Builder
	if full != "" {
		b.WriteString(strings.TrimRight(full, "\n"))
		b.WriteString("\n")
	}
	if out != "" {
		if full != "" {
			b.WriteString("\n")
		}
		b.WriteString("The plugin process's standard error:\n")
		b.WriteString(out)
		if !strings.HasSuffix(out, "\n") {
			b.WriteString("\n")
		}
	}
	return b.String()
}
