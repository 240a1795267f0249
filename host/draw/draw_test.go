package draw_test

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/tcforge/tcforge/host/draw"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
)

// toy builds a 3-input circuit: level 1 has three XOR counters and a copy
// of input 2, level 2 the XOR's output and a copy, level 3 two outputs.
func toy() *layered.Circuit {
	b := layered.NewBuilder(3, []circuit.Range{{Name: "msg", Start: 0, Len: 2}, {Name: "key", Start: 2, Len: 1}})
	counters := b.Tag("round 1/theta counters")
	theta := b.Tag("round 1/theta")
	in := b.Tag("input")
	out := b.Tag("block 1/output")
	for k := int32(1); k <= 3; k++ {
		b.Gate(layered.KindGate, k, []int32{0, 1, 2}, []int32{1, 1, 1}, counters)
	}
	b.Copy(2, in)
	b.Level()
	b.Gate(layered.KindGate, 1, []int32{0, 1, 2}, []int32{1, -1, 1}, theta)
	b.Copy(3, in)
	b.Level()
	b.Gate(layered.KindGate, 2, []int32{0, 1}, []int32{1, 1}, out)
	b.Copy(0, theta)
	b.Level()
	return b.Circuit([]circuit.Range{{Name: "digest", Start: 0, Len: 2}})
}

func TestLevels(t *testing.T) {
	c := toy()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	levels := draw.Levels(c)
	tests := []struct {
		width, gates, copies, edges, fanin int
		kinds, provenance                  string
	}{
		{3, 0, 0, 0, 0, "3 inputs", "2 input msg, 1 input key"},
		{4, 3, 1, 10, 3, "3 gates + 1 copy", "3 round 1/theta counters, 1 copy of input"},
		{2, 1, 1, 4, 3, "1 gate + 1 copy", "1 round 1/theta, 1 copy of input"},
		{2, 1, 1, 3, 2, "1 gate + 1 copy", "1 block 1/output, 1 copy of round 1/theta"},
	}
	if len(levels) != len(tests) {
		t.Fatalf("%d levels, want %d", len(levels), len(tests))
	}
	for i, tt := range tests {
		l := levels[i]
		if l.Level != i || l.Width != tt.width || l.Gates != tt.gates || l.Copies != tt.copies || l.Edges != tt.edges || l.MaxFanIn != tt.fanin {
			t.Errorf("level %d = %+v", i, l)
		}
		if got := l.Kinds(); got != tt.kinds {
			t.Errorf("level %d kinds %q, want %q", i, got, tt.kinds)
		}
		if got := l.Provenance(0); got != tt.provenance {
			t.Errorf("level %d provenance %q, want %q", i, got, tt.provenance)
		}
	}
	if got := levels[1].Provenance(1); got != "3 round 1/theta counters, … 1 more in 1 groups" {
		t.Errorf("truncated provenance %q", got)
	}
}

func TestStepAndColors(t *testing.T) {
	for tag, want := range map[string]string{
		"block 2/round 5/theta counters": "theta counters",
		"round 1/chi":                    "chi",
		"input":                          "input",
		"":                               "(untagged)",
	} {
		if got := draw.Step(tag); got != want {
			t.Errorf("Step(%q) = %q, want %q", tag, got, want)
		}
	}
	keys := draw.Colors(toy())
	var steps []string
	col := map[string]string{}
	for _, k := range keys {
		steps = append(steps, k.Step)
		col[k.Step] = k.Color
	}
	if got := strings.Join(steps, ","); got != "input,theta counters,theta,output" {
		t.Errorf("steps %s", got)
	}
	// Counters are a lighter shade of their XOR's colour; steps differ.
	if col["theta counters"] == col["theta"] || col["theta"] == col["output"] || col["input"] == col["theta"] {
		t.Errorf("colours %v", col)
	}
	if col["theta"] != "#0072B2" || col["theta counters"] != "#80b9d9" {
		t.Errorf("theta %s, counters %s", col["theta"], col["theta counters"])
	}
}

func TestSVG(t *testing.T) {
	var buf bytes.Buffer
	if err := draw.SVG(&buf, toy(), draw.Options{Title: "toy <circuit>"}); err != nil {
		t.Fatal(err)
	}
	s := buf.String()
	for _, want := range []string{
		`<svg xmlns="http://www.w3.org/2000/svg"`,
		`>toy &lt;circuit&gt;</text>`,
		`depth 3 · width 4 · 8 gates (3 copies) · 17 edges · max fan-in 3 · max |weight| 1`,
		`>level 0</text>`, `>level 3</text>`,
		`<title>level 1: 3 gates + 1 copy — 3 round 1/theta counters, 1 copy of input</title>`,
		`>theta counters</text>`, `>faded: copy gate</text>`,
		"</svg>\n",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	if strings.Contains(s, ">level 4</text>") {
		t.Error("SVG has a level 4")
	}
	// One box per gate and input: count the rectangles' "h…v…h-…z" subpaths.
	if n := len(regexp.MustCompile(`h[0-9.]+v[0-9.]+h-[0-9.]+z`).FindAllString(s, -1)); n != 8+3 {
		t.Errorf("%d boxes, want 11", n)
	}
	// One line per edge.
	if n := len(regexp.MustCompile(`M[0-9.]+ [0-9.]+L`).FindAllString(s, -1)); n != 17 {
		t.Errorf("%d edges drawn, want 17", n)
	}
	buf.Reset()
	if err := draw.SVG(&buf, toy(), draw.Options{MaxEdges: 5}); err != nil {
		t.Fatal(err)
	}
	if s := buf.String(); !strings.Contains(s, "17 edges: not drawn") || strings.Contains(s, "L") && regexp.MustCompile(`M[0-9.]+ [0-9.]+L`).MatchString(s) {
		t.Error("edges drawn beyond MaxEdges")
	}
}
