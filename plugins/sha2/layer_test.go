package sha2_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/tcforge/tcforge/plugins/fusion"
	"github.com/tcforge/tcforge/plugins/reifier"
	"github.com/tcforge/tcforge/plugins/sha2"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
)

// layerAndCheck layers c and checks the layered circuit against the
// logic circuit on random inputs.
func layerAndCheck(t *testing.T, c *circuit.Circuit, layer func(*circuit.Circuit) (*layered.Circuit, error)) *layered.Circuit {
	t.Helper()
	l, err := layer(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Validate(); err != nil {
		t.Fatal(err)
	}
	in := bitvec.Random(rand.New(rand.NewPCG(7, 8)), 128, len(c.Inputs))
	want := evalAll(t, c, in)
	ev := l.Evaluator()
	got, err := bitvec.EvalSliced(in, len(c.Inputs), ev)
	if err != nil {
		t.Fatal(err)
	}
	for s := range in {
		if !bitvec.Equal(got[s], want[s], len(c.Outputs)) {
			t.Fatalf("sample %d: layered circuit differs from the logic circuit", s)
		}
	}
	return l
}

// TestLayered layers SHA-2 instances with both backends (default bound
// 2^22 on the sums of additions: chunks of 16 bits) and checks each
// against the logic circuit and the measured depth and width: with
// c = w/16 chunks, fusion's depth is n_b·((1 + c)·rounds + 1) and
// reifier's n_b·(2(1 + c)·rounds + 2) + 2 (docs/sha2.md).
func TestLayered(t *testing.T) {
	tests := []struct {
		values         map[string]any
		rDepth, rWidth int
		fDepth, fWidth int
	}{
		{map[string]any{"preset": "sha256"}, 388, 2720, 193, 2476},
		{map[string]any{"preset": "sha256", "rounds": int64(4), "blocks": int64(2)}, 54, 1104, 26, 932},
		{map[string]any{"preset": "sha512", "rounds": int64(4)}, 44, 1665, 21, 1154},
	}
	for _, tt := range tests {
		c, err := sha2.Plugin.Build(context.Background(), params(t, tt.values))
		if err != nil {
			t.Fatal(err)
		}
		r := layerAndCheck(t, c, func(c *circuit.Circuit) (*layered.Circuit, error) { return reifier.Compile(context.Background(), c) })
		f := layerAndCheck(t, c, func(c *circuit.Circuit) (*layered.Circuit, error) {
			return fusion.Compile(context.Background(), c, fusion.Options{})
		})
		rs, fs := r.Stats(), f.Stats()
		if rs.Depth != tt.rDepth || rs.Width != tt.rWidth || fs.Depth != tt.fDepth || fs.Width != tt.fWidth {
			t.Errorf("%v: reifier depth %d width %d, fusion depth %d width %d; want %d %d, %d %d",
				tt.values, rs.Depth, rs.Width, fs.Depth, fs.Width, tt.rDepth, tt.rWidth, tt.fDepth, tt.fWidth)
		}
		// 16-bit chunks: weights up to 2^15, pre-activations far below 2^24.
		if fs.MaxWeight != 1<<15 || rs.MaxWeight != 1<<15 {
			t.Errorf("%v: max weight %d (reifier), %d (fusion), want 2^15", tt.values, rs.MaxWeight, fs.MaxWeight)
		}
		for _, l := range []*layered.Circuit{r, f} {
			if pre := l.MaxPreActivation(); pre >= 1<<20 || layered.FloatFormat(pre) != "fp32" {
				t.Errorf("%v: pre-activations up to %d (%s), want below 2^20 (fp32)", tt.values, pre, layered.FloatFormat(pre))
			}
			// Position hints carried through the split additions: every
			// input, gate and form at a bit index 0…w−1.
			w := int32(c.Attrs["w"])
			for _, hints := range [][]int32{l.InputPos, l.Pos, l.FormPos} {
				for i, p := range hints {
					if p < 0 || p >= w {
						t.Fatalf("%v: value %d hinted %d", tt.values, i, p)
					}
				}
			}
			if len(l.Pos) != l.NumGates() {
				t.Errorf("%v: %d gate hints for %d gates", tt.values, len(l.Pos), l.NumGates())
			}
		}
	}
}
