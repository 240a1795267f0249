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
	"github.com/tcforge/tcforge/sdk/sdktest"
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
		{map[string]any{"preset": "sha256"}, 388, 2464, 193, 2476},
		// Reduced rounds read padding and K constants at several levels:
		// reifier places them below each (1,072 and 1,633 wide when it
		// carried them from their first reader).
		{map[string]any{"preset": "sha256", "rounds": int64(4), "blocks": int64(2)}, 54, 976, 26, 932},
		{map[string]any{"preset": "sha512", "rounds": int64(4)}, 44, 1377, 21, 1154},
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

// isConst reports whether gate i of level L−1 (an input if L is 1) is a
// constant: a gate with no operands.
func isConst(l *layered.Circuit, L, i int) bool {
	if L <= 1 {
		return false
	}
	g := int(l.LevelStart[L-2]) + i
	return l.Kind[g] != layered.KindCopy && l.RowStart[g+1] == l.RowStart[g]
}

// sumGates is reifier's gate count for one modular addition of m w-bit
// words cut into chunks of b bits (circuit.SplitSums), derived from the
// lowering and not from the circuit: bit k of a chunk whose carry in has
// n bits is a SUMBIT over m·(k+1) operand bits and the carry bits up to
// k, so it has ⌊S/2^k⌋ counters, S = m·(2^(k+1) − 1) + (2^min(n, k+1) − 1),
// and one parity gate; every chunk but the top one also computes its
// carry out, the bits b, b+1, … of U ≤ m·(2^b − 1) + 2^n − 1, each with
// ⌊U/2^(b+t)⌋ counters and a parity.
func sumGates(m, w, b int) int {
	gates, n := 0, 0
	for lo := 0; lo < w; lo += b {
		for k := 0; k < b; k++ {
			s := m*(1<<(k+1)-1) + (1<<min(n, k+1) - 1)
			gates += s>>k + 1
		}
		if lo+b < w {
			u := m*(1<<b-1) + (1<<n - 1)
			n = 0
			for ; u>>(b+n) > 0; n++ {
				gates += u>>(b+n) + 1
			}
		}
	}
	return gates
}

// TestReifierGateLaw checks reifier's gates other than copies and
// constants against the law derived from the construction (docs/sha2.md),
// with 16-bit chunks (the default bound) and c = w/16:
//
//	round     G_r = 2w·4 (Σ₀, Σ₁: 3 counters and a parity a bit)
//	              + 3w (e∧f, ¬e∧g, Maj) + add(8) + add(7)
//	schedule  G_s = 2w·4 (σ₀, σ₁) + add(4)
//	feed-fwd  G_f = 8·add(2)
//
// gates besides copies and constants = n_b·(G_r·r + G_s·(r − 16)⁺ + G_f).
// The constants are placed below every level that reads them: at least
// one gate for each constant of the circuit, n_b·(w·r (K_t) + (s₀ +
// s₁)·(r − 16)⁺ (the shifts' zeros)) + 8w (IV) + (n_b·16w − m) (padding)
// for the hash with r ≥ 16 (every padding constant read), the first two
// terms for the compression function; and no copy gate carries one.
// SHA-256: G_r = 1,318, G_s = 512, G_f = 1,032; SHA-512: 2,686, 1,032,
// 2,088.
func TestReifierGateLaw(t *testing.T) {
	tests := []map[string]any{
		{"preset": "sha256", "rounds": int64(16)},
		{"preset": "sha256", "rounds": int64(17)},
		{"preset": "sha224", "rounds": int64(40)},
		{"preset": "sha256"},
		{"preset": "sha256", "message_bits": int64(1000)},
		{"preset": "sha256", "rounds": int64(20), "blocks": int64(2)},
		{"preset": "sha512", "rounds": int64(16)},
		{"preset": "sha384", "rounds": int64(23)},
		{"preset": "sha512", "rounds": int64(40)},
		{"preset": "sha512"},
		{"preset": "sha512-256", "rounds": int64(30), "message_bits": int64(900)},
		{"preset": "sha256", "mode": "compress", "rounds": int64(3)},
		{"preset": "sha256", "mode": "compress", "rounds": int64(33)},
		{"preset": "sha512", "mode": "compress", "rounds": int64(5)},
	}
	for _, values := range tests {
		c := sdktest.Build(t, sha2.Plugin, values)
		l, err := reifier.Compile(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		w, r, nb, m := int(c.Attrs["w"]), int(c.Attrs["rounds"]), int(c.Attrs["blocks"]), int(c.Attrs["message_bits"])
		rot := map[int][2]int{32: {3, 10}, 64: {7, 6}}[w]
		gr := 2*w*4 + 3*w + sumGates(8, w, 16) + sumGates(7, w, 16)
		gs := 2*w*4 + sumGates(4, w, 16)
		gf := 8 * sumGates(2, w, 16)
		want := nb * (gr*r + gs*max(0, r-16) + gf)
		minConsts := nb * (w*r + (rot[0]+rot[1])*max(0, r-16))
		if values["mode"] != "compress" {
			minConsts += 8*w + nb*16*w - m
		}
		st := l.Stats()
		consts := 0
		for L := 1; L <= st.Depth; L++ {
			for g := int(l.LevelStart[L-1]); g < int(l.LevelStart[L]); g++ {
				switch src, _ := l.Row(g); {
				case l.Kind[g] == layered.KindCopy && isConst(l, L, int(src[0])):
					t.Errorf("%v: copy gate %d carries a constant", values, g)
				case l.Kind[g] != layered.KindCopy && len(src) == 0:
					consts++
				}
			}
		}
		if got := st.Gates - st.Copies - consts; got != want {
			t.Errorf("%v: %d gates besides copies and constants, law %d (G_r %d, G_s %d, G_f %d)", values, got, want, gr, gs, gf)
		}
		if consts < minConsts {
			t.Errorf("%v: %d constant gates, fewer than the circuit's %d constants", values, consts, minConsts)
		}
	}
	if g := [3]int{2*32*4 + 3*32 + sumGates(8, 32, 16) + sumGates(7, 32, 16), 2*32*4 + sumGates(4, 32, 16), 8 * sumGates(2, 32, 16)}; g != [3]int{1318, 512, 1032} {
		t.Errorf("SHA-256: G_r, G_s, G_f = %v, want 1318, 512, 1032", g)
	}
}
