package merkle_test

import (
	"context"
	"testing"

	"github.com/tcforge/tcforge/plugins/merkle"
	"github.com/tcforge/tcforge/plugins/reifier"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// compile builds the construction and layers it with the Reifier-style
// backend, checking the layered circuit against the logic circuit.
func compile(t *testing.T, v map[string]any) (*circuit.Circuit, layered.Stats) {
	t.Helper()
	c := sdktest.Build(t, merkle.Plugin, v)
	l, err := reifier.Compile(context.Background(), c)
	if err != nil {
		t.Fatalf("%v: %v", v, err)
	}
	sdktest.CheckLayered(t, c, l, 64)
	return c, l.Stats()
}

// TestPaperMerkleTree reproduces every row of the paper's table "Formula
// verification for the Merkle tree construction" (blocks of 4 bits, r = 12,
// as in the paper's text).
func TestPaperMerkleTree(t *testing.T) {
	rows := sdktest.IntTable(t, "testdata/merkle_tree.csv")
	if len(rows) != 16 {
		t.Fatalf("%d rows, want 16", len(rows))
	}
	for _, r := range rows {
		_, s := compile(t, map[string]any{
			"log_w": r["log_w"], "rounds": r["rounds"], "leaves": r["leaves"], "rate": 12, "block_bits": 4,
		})
		if s.Depth != r["actual_depth"] || s.Width != r["actual_width"] {
			t.Errorf("row %v: depth %d width %d, want %d %d", r, s.Depth, s.Width, r["actual_depth"], r["actual_width"])
		}
		// The paper's formulas.
		log2 := 0
		for 1<<log2 < r["leaves"] {
			log2++
		}
		if d := log2*(3+6*r["rounds"]) + 2 + 6*r["rounds"]; d != r["expected_depth"] {
			t.Errorf("row %v: depth formula gives %d", r, d)
		}
		if wd := r["leaves"] * 11 * 25 * r["w"]; wd != r["expected_width"] {
			t.Errorf("row %v: width formula gives %d", r, wd)
		}
	}
}

// TestScalingLaws checks the laws derived past the paper (see the package
// documentation) on trees of any number of leaves, padded messages,
// digests shorter or longer than the blocks and rounds with zero round
// constants.
func TestScalingLaws(t *testing.T) {
	var cases []map[string]any
	for _, logW := range []int{0, 1, 2} {
		for _, rounds := range []int{1, 2} {
			for leaves := 1; leaves <= 17; leaves++ {
				cases = append(cases, map[string]any{"log_w": logW, "rounds": rounds, "block_bits": 4, "leaves": leaves})
			}
			for _, sizes := range [][2]int{{4, 4}, {3, 7}, {9, 2}, {25, 25}} {
				for _, msg := range []int{0, 1, 9, 25, 26, 50, 61} {
					for _, pad := range []string{"zero", "10*"} {
						cases = append(cases, map[string]any{"log_w": logW, "rounds": rounds, "block_bits": sizes[0], "digest_bits": sizes[1], "message_bits": msg, "padding": pad})
					}
				}
			}
		}
	}
	// Rounds with an all-zero w-bit round constant lose their ι level.
	cases = append(cases,
		map[string]any{"log_w": 2, "rounds": 13, "block_bits": 8, "leaves": 5},
		map[string]any{"log_w": 2, "rounds": 19, "block_bits": 8, "message_bits": 40, "padding": "10*"},
		map[string]any{"log_w": 3, "rounds": 15, "block_bits": 16, "digest_bits": 8, "leaves": 6},
	)
	for _, v := range cases {
		c, s := compile(t, v)
		a := c.Attrs
		w, rounds, z, h := int(a["w"]), int(a["rounds"]), int(a["zero_rc_rounds"]), int(a["height"])
		depth := 2 + 6*rounds - z + h*(3+6*rounds-z)
		width := int(a["leaves"]) * 11 * 25 * w
		if s.Depth != depth || s.Width != width {
			t.Errorf("%v: depth %d width %d, laws give %d %d (widths %v)", v, s.Depth, s.Width, depth, width, s.Widths)
		}
		// The height is ⌈log₂ leaves⌉, independently of the attribute.
		if n := int(a["leaves"]); 1<<h < n || (h > 0 && 1<<(h-1) >= n) {
			t.Errorf("%v: height %d for %d leaves", v, h, n)
		}
	}
}
