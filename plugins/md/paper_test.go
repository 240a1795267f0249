package md_test

import (
	"context"
	"testing"

	"github.com/tcforge/tcforge/plugins/md"
	"github.com/tcforge/tcforge/plugins/reifier"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// compile builds the construction and layers it with the Reifier-style
// backend, checking the layered circuit against the logic circuit.
func compile(t *testing.T, v map[string]any) (*circuit.Circuit, layered.Stats) {
	t.Helper()
	c := sdktest.Build(t, md.Plugin, v)
	l, err := reifier.Compile(context.Background(), c)
	if err != nil {
		t.Fatalf("%v: %v", v, err)
	}
	sdktest.CheckLayered(t, c, l, 64)
	return c, l.Stats()
}

// TestPaperMDSequential reproduces every row of the paper's table
// "Formula verification for the sequential Merkle–Damgård construction".
func TestPaperMDSequential(t *testing.T) {
	rows := sdktest.IntTable(t, "testdata/md_sequential.csv")
	if len(rows) != 32 {
		t.Fatalf("%d rows, want 32", len(rows))
	}
	for _, r := range rows {
		_, s := compile(t, map[string]any{
			"log_w": r["log_w"], "rate": r["rate"], "block_bits": r["block_bits"], "chain_bits": r["chain_bits"],
			"blocks": r["blocks"], "rounds": r["rounds"], "padding": "zero",
		})
		if s.Depth != r["actual_depth"] || s.Width != r["actual_width"] {
			t.Errorf("row %v: depth %d width %d, want %d %d", r, s.Depth, s.Width, r["actual_depth"], r["actual_width"])
		}
		// The paper's formulas.
		w := 1 << r["log_w"]
		if d := 1 + r["blocks"]*(3+6*r["rounds"]) + 1; d != r["expected_depth"] {
			t.Errorf("row %v: depth formula gives %d", r, d)
		}
		if wd := 11*25*w + (r["blocks"]-1)*r["block_bits"]; wd != r["expected_width"] {
			t.Errorf("row %v: width formula gives %d", r, wd)
		}
	}
}

// TestScalingLaws checks the laws derived past the paper (see the package
// documentation) on chains with unequal block and chain sizes, messages
// that are not whole blocks, strengthened padding and rounds with zero
// round constants.
func TestScalingLaws(t *testing.T) {
	var cases []map[string]any
	for _, logW := range []int{0, 1, 2} {
		for _, rounds := range []int{1, 2} {
			for _, sizes := range [][2]int{{4, 4}, {3, 5}, {6, 2}, {25, 25}} {
				for _, msg := range []int{1, 4, 11, 17} {
					for _, pad := range []string{"zero", "strengthened"} {
						if pad == "strengthened" && msg >= 1<<sizes[0] {
							continue // the length does not fit its block
						}
						cases = append(cases, map[string]any{"log_w": logW, "rounds": rounds, "block_bits": sizes[0], "chain_bits": sizes[1], "message_bits": msg, "padding": pad})
					}
				}
			}
		}
	}
	// Rounds with an all-zero w-bit round constant lose their ι level.
	cases = append(cases,
		map[string]any{"log_w": 2, "rounds": 13, "block_bits": 8, "message_bits": 20, "padding": "strengthened"},
		map[string]any{"log_w": 3, "rounds": 15, "block_bits": 16, "chain_bits": 8, "blocks": 2},
		map[string]any{"log_w": 1, "rounds": 2, "block_bits": 4, "message_bits": 0, "padding": "strengthened"},
	)
	for _, v := range cases {
		c, s := compile(t, v)
		a := c.Attrs
		w, rounds, z := int(a["w"]), int(a["rounds"]), int(a["zero_rc_rounds"])
		depth := 2 + int(a["compressions"])*(3+6*rounds-z)
		width := 11*25*w + max(0, int(a["message_bits"])-int(a["block_bits"]))
		if s.Depth != depth || s.Width != width {
			t.Errorf("%v: depth %d width %d, laws give %d %d (widths %v)", v, s.Depth, s.Width, depth, width, s.Widths)
		}
	}
}
