// Package progress draws a one-line progress bar for long runs on a
// terminal: points done out of the total, the point being run and the
// elapsed time. Log lines written through Bar.Writer clear the bar first
// and redraw it after, so the two never share a line. A disabled bar
// draws nothing and its Writer passes writes through unchanged.
package progress

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mattn/go-isatty"
)

// Mode says when a bar is drawn.
type Mode string

// Modes accepted by Enabled.
const (
	Auto   Mode = "auto"   // on a terminal, unless $CI is set
	Always Mode = "always" // even when not on a terminal
	Never  Mode = "never"
)

// Enabled decides whether a bar is drawn on w: Always and Never say so;
// Auto draws only when w is a terminal and the CI environment variable is
// unset or "false". An unknown mode is an error.
func Enabled(mode Mode, w io.Writer) (bool, error) {
	switch mode {
	case Always:
		return true, nil
	case Never:
		return false, nil
	case Auto, "":
		if ci := os.Getenv("CI"); ci != "" && ci != "false" && ci != "0" {
			return false, nil
		}
		return IsTerminal(w), nil
	}
	return false, fmt.Errorf("progress mode must be auto, always or never, got %q", mode)
}

// IsTerminal reports whether w is a terminal: an *os.File on a TTY, or a
// writer that says so through an IsTerminal method (like Bar's Writer).
func IsTerminal(w io.Writer) bool {
	if t, ok := w.(interface{ IsTerminal() bool }); ok {
		return t.IsTerminal()
	}
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// Bar is a progress bar. Its methods are safe for concurrent use; a nil
// *Bar is a disabled bar.
type Bar struct {
	mu      sync.Mutex
	w       io.Writer
	on      bool
	width   int // columns of the line
	total   int
	done    int
	current string
	start   time.Time
	shown   bool // the bar is on the screen
	now     func() time.Time
}

// New returns a bar drawing on w when enabled, in a line of the given
// number of columns (0: $COLUMNS, or 80).
func New(w io.Writer, enabled bool, columns int) *Bar {
	if columns <= 0 {
		columns = 80
		if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 20 {
			columns = n
		}
	}
	return &Bar{w: w, on: enabled, width: columns, now: time.Now}
}

// Enabled reports whether the bar draws anything.
func (b *Bar) Enabled() bool { return b != nil && b.on }

// AddTotal adds n to the number of steps expected.
func (b *Bar) AddTotal(n int) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.start.IsZero() {
		b.start = b.now()
	}
	b.total += n
	b.redraw()
}

// Begin shows label as the step being worked on.
func (b *Bar) Begin(label string) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.start.IsZero() {
		b.start = b.now()
	}
	b.current = label
	b.redraw()
}

// Step marks one step done.
func (b *Bar) Step() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.done++
	b.redraw()
}

// Done returns the steps done and expected.
func (b *Bar) Done() (done, total int) {
	if b == nil {
		return 0, 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.done, b.total
}

// Finish removes the bar from the screen; later steps draw it again.
func (b *Bar) Finish() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.clear()
}

// Line returns the bar's text (without control characters):
// "[=========>          ] 5/12  0:03  keccak log_w=1 blocks=2".
func (b *Bar) Line() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.line()
}

func (b *Bar) line() string {
	const cells = 24
	filled := 0
	if b.total > 0 {
		filled = min(cells, b.done*cells/b.total)
	}
	bar := strings.Repeat("=", filled)
	if filled < cells {
		bar += ">" + strings.Repeat(" ", cells-filled-1)
	}
	el := time.Duration(0)
	if !b.start.IsZero() {
		el = b.now().Sub(b.start)
	}
	s := fmt.Sprintf("[%s] %d/%d  %d:%02d", bar, b.done, b.total, int(el.Minutes()), int(el.Seconds())%60)
	if b.current != "" {
		s += "  " + b.current
	}
	if utf8.RuneCountInString(s) > b.width-1 {
		r := []rune(s)
		s = string(r[:b.width-2]) + "…"
	}
	return s
}

// clear erases the bar's line if it is shown. Callers hold mu.
func (b *Bar) clear() {
	if b.on && b.shown {
		io.WriteString(b.w, "\r\x1b[K")
		b.shown = false
	}
}

// redraw draws the bar over its line. Callers hold mu.
func (b *Bar) redraw() {
	if !b.on {
		return
	}
	io.WriteString(b.w, "\r\x1b[K"+b.line())
	b.shown = true
}

// Writer returns a writer to the bar's stream for log output: each write
// clears the bar, writes, and redraws the bar after a complete line.
// It reports the underlying stream's IsTerminal, so a logger choosing its
// format by the stream still sees a terminal. b must not be nil.
func (b *Bar) Writer() io.Writer { return &writer{b: b} }

type writer struct{ b *Bar }

// Write implements io.Writer.
func (w *writer) Write(p []byte) (int, error) {
	b := w.b
	// Concurrent loggers write here: writes are serialised even with the
	// bar off, as the stream (a bytes.Buffer in tests) may not be safe
	// for concurrent use.
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.on {
		return b.w.Write(p)
	}
	b.clear()
	n, err := b.w.Write(p)
	if err == nil && len(p) > 0 && p[len(p)-1] == '\n' && (b.total > 0 || b.current != "") {
		b.redraw()
	}
	return n, err
}

// IsTerminal reports whether the bar's stream is a terminal.
func (w *writer) IsTerminal() bool { return IsTerminal(w.b.w) }

// Fd returns the stream's file descriptor when it is a file, for code
// that asks it directly (^uintptr(0) otherwise).
func (w *writer) Fd() uintptr {
	if f, ok := w.b.w.(*os.File); ok {
		return f.Fd()
	}
	return ^uintptr(0)
}
