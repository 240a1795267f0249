package wire

import (
	"strconv"
	"strings"
	"testing"
)

// TestOutputKeepsHeadAndTail: a process's standard error is kept whole up
// to twice outputKeep; beyond, its first and last outputKeep bytes, with
// how much was left out between them.
func TestOutputKeepsHeadAndTail(t *testing.T) {
	line := func(i int) string { return strings.Repeat(string(rune('a'+i%26)), 99) + "\n" }
	for _, n := range []int{0, 10, 2 * outputKeep / 100, 2*outputKeep/100 + 7, 5 * outputKeep / 100} {
		var o output
		var all strings.Builder
		for i := range n {
			// Written in pieces, as go-plugin does (the line, then "\n").
			l := line(i)
			o.Write([]byte(l[:len(l)-1]))
			o.Write([]byte("\n"))
			all.WriteString(l)
		}
		got, want := o.String(), all.String()
		dropped := len(want) - 2*outputKeep
		if dropped <= 0 {
			if got != want {
				t.Errorf("%d lines: kept %d bytes, want all %d", n, len(got), len(want))
			}
			continue
		}
		note := "\n[… " + strconv.Itoa(dropped) + " bytes left out …]\n"
		if exp := want[:outputKeep] + note + want[len(want)-outputKeep:]; got != exp {
			t.Errorf("%d lines: kept %d bytes, want head, %q and tail (%d bytes)", n, len(got), note, len(exp))
		}
	}
}

// TestCrashCause: the cause of a Go program's crash is its panic or fatal
// error line; at start-up, failing that, the last line outside its log.
func TestCrashCause(t *testing.T) {
	tests := []struct {
		out  string
		last bool
		want string
	}{
		{"runtime: out of memory: cannot allocate 4194304-byte block\nfatal error: out of memory\n\ngoroutine 1 [running]:\n", false, "fatal error: out of memory"},
		{"{\"@level\":\"info\"}\npanic: boom\n\ngoroutine 7 [running]:\nmain.f()\n", false, "panic: boom"},
		{"no test fixture \"x\"\n", false, ""},
		{"no test fixture \"x\"\n{\"@level\":\"info\"}\n", true, "no test fixture \"x\""},
		{"", true, ""},
	}
	for _, tt := range tests {
		if got := crashCause(tt.out, tt.last); got != tt.want {
			t.Errorf("crashCause(%q, %v) = %q, want %q", tt.out, tt.last, got, tt.want)
		}
	}
}
