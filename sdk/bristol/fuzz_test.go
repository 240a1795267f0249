package bristol_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tcforge/tcforge/sdk/bristol"
)

// FuzzParse feeds arbitrary text to the parser: it must not panic, and a
// netlist it accepts must evaluate, and write out text that parses back
// to the same netlist.
func FuzzParse(f *testing.F) {
	f.Add(adder2)
	f.Add("1 3\n1 2\n1 1\n\n2 1 0 1 2 AND\n")
	f.Add("2 4\n1 2\n1 1\n\n1 1 0 2 EQ\n2 1 2 1 3 XOR\n")
	f.Add("1 5\n1 2\n1 2\n\n4 2 0 1 1 0 3 4 MAND\n")
	f.Add("3 5\n1 2\n1 1\n\n2 1 0 3 2 XOR\n2 1 2 1 3 AND\n2 1 2 3 4 XOR\n")
	f.Fuzz(func(t *testing.T, src string) {
		nl, err := bristol.Parse(strings.NewReader(src), "fuzz")
		if err != nil {
			return
		}
		if _, err := nl.Eval(make([]uint64, nl.NumInputs())); err != nil {
			t.Fatal(err)
		}
		_ = nl.Stats()
		var buf bytes.Buffer
		if err := nl.Write(&buf); err != nil {
			t.Fatal(err)
		}
		back, err := bristol.Parse(&buf, "rewritten")
		if err != nil {
			t.Fatalf("a parsed netlist writes text that does not parse: %v", err)
		}
		if !equalNetlists(nl, back) {
			t.Fatal("a parsed netlist reads back differently")
		}
	})
}
