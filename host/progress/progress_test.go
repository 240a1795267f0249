package progress

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
)

// fakeClock returns a bar whose clock advances only when told.
func fakeBar(w *bytes.Buffer, on bool) (*Bar, *time.Time) {
	b := New(w, on, 60)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b.now = func() time.Time { return now }
	return b, &now
}

func TestLine(t *testing.T) {
	var buf bytes.Buffer
	b, now := fakeBar(&buf, true)
	b.AddTotal(12)
	tests := []struct {
		steps int
		label string
		after time.Duration
		want  string
	}{
		{0, "keccak log_w=1", 0, "[>                       ] 0/12  0:00  keccak log_w=1"},
		{3, "keccak log_w=2", 5 * time.Second, "[======>                 ] 3/12  0:05  keccak log_w=2"},
		{9, "md blocks=4 with a very long point description that does not fit", 75 * time.Second,
			"[========================] 12/12  1:20  md blocks=4 with a…"},
	}
	for _, tt := range tests {
		for i := 0; i < tt.steps; i++ {
			b.Step()
		}
		*now = now.Add(tt.after)
		b.Begin(tt.label)
		if got := b.Line(); got != tt.want {
			t.Errorf("line\n %q, want\n %q", got, tt.want)
		}
		if n := len([]rune(b.Line())); n > 59 {
			t.Errorf("line of %d columns in a 60-column terminal", n)
		}
	}
	if d, tot := b.Done(); d != 12 || tot != 12 {
		t.Errorf("Done() = %d, %d", d, tot)
	}
	// Every redraw returns to the line's start and clears it.
	out := buf.String()
	if !strings.HasPrefix(out, "\r\x1b[K[") || strings.Contains(out, "\n") {
		t.Errorf("bar output %q", out[:min(40, len(out))])
	}
	buf.Reset()
	b.Finish()
	if buf.String() != "\r\x1b[K" {
		t.Errorf("Finish wrote %q", buf.String())
	}
}

func TestWriterKeepsLogsOffTheBar(t *testing.T) {
	var buf bytes.Buffer
	b, _ := fakeBar(&buf, true)
	b.AddTotal(2)
	b.Begin("p x=1")
	buf.Reset()
	w := b.Writer()
	fmt.Fprint(w, "10:00:00 INF point 1/2\n")
	got := buf.String()
	want := "\r\x1b[K" + "10:00:00 INF point 1/2\n" + "\r\x1b[K" + b.Line()
	if got != want {
		t.Errorf("log write produced %q, want %q", got, want)
	}
	// A partial line is not followed by the bar.
	buf.Reset()
	fmt.Fprint(w, "partial")
	if got := buf.String(); got != "\r\x1b[Kpartial" {
		t.Errorf("partial write produced %q", got)
	}
}

func TestDisabled(t *testing.T) {
	var buf bytes.Buffer
	b, _ := fakeBar(&buf, false)
	b.AddTotal(3)
	b.Begin("x")
	b.Step()
	b.Finish()
	fmt.Fprint(b.Writer(), "log line\n")
	if got := buf.String(); got != "log line\n" {
		t.Errorf("disabled bar wrote %q", got)
	}
	var nilBar *Bar
	nilBar.AddTotal(1)
	nilBar.Begin("x")
	nilBar.Step()
	nilBar.Finish()
	if nilBar.Enabled() {
		t.Error("nil bar enabled")
	}
}

func TestEnabled(t *testing.T) {
	var buf bytes.Buffer
	tests := []struct {
		mode Mode
		ci   string
		want bool
		err  bool
	}{
		{Always, "", true, false},
		{Always, "true", true, false},
		{Never, "", false, false},
		{Auto, "", false, false}, // a buffer is not a terminal
		{Auto, "true", false, false},
		{"sometimes", "", false, true},
	}
	for _, tt := range tests {
		t.Run(string(tt.mode)+"/"+tt.ci, func(t *testing.T) {
			t.Setenv("CI", tt.ci)
			got, err := Enabled(tt.mode, &buf)
			if got != tt.want || (err != nil) != tt.err {
				t.Errorf("Enabled(%q) = %v, %v", tt.mode, got, err)
			}
		})
	}
	if IsTerminal(&buf) {
		t.Error("a buffer is a terminal")
	}
	b := New(&buf, true, 0)
	if IsTerminal(b.Writer()) {
		t.Error("the writer of a bar on a buffer claims a terminal")
	}
}
