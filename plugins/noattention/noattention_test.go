package noattention_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tcforge/tcforge/plugins/noattention"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/model"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// state reads every dimension of the single token after the first blocks
// blocks (the last without its FFN if attnOnly).
func state(t *testing.T, m *model.Model, blocks int, attnOnly bool, in []bitvec.Vec) [][]float64 {
	t.Helper()
	if attnOnly {
		pm := *m
		pm.Blocks = append([]model.Block(nil), m.Blocks[:blocks]...)
		pm.Blocks[blocks-1].FFN = nil
		m = &pm
	}
	tokens, dims := make([]int32, m.DModel), make([]int32, m.DModel)
	for d := range dims {
		dims[d] = int32(d)
	}
	return sdktest.Stream(t, m, in, blocks, tokens, dims)
}

func TestMLPThreeGates(t *testing.T) {
	m, err := noattention.MLP(context.Background(), sdktest.ThreeGates())
	if err != nil {
		t.Fatal(err)
	}
	// d = 1 + width: slot 0 is the constant, slots 1, 2 the level's gates.
	if s := m.Stats(); s.Tokens != 1 || s.DModel != 3 || s.Blocks != 2 || s.Heads != 0 || s.FFNHidden != 5 {
		t.Fatalf("stats %+v", s)
	}
	// Block 1: g0 = [a + b ≥ 2] is (r(1) − r(2))/κ with the ramps
	// r(k) = SiLU(κ(a + b − k)), κ = 1024 (units 1, 2); g1 = [−a + b ≥ 1]
	// is (r(0) − r(1))/κ of its own row (units 3, 4; r(0) has no bias).
	gate, out := m.Tensor("blocks.0.ffn.gate"), m.Tensor("blocks.0.ffn.out")
	for _, c := range []struct {
		t    *model.Tensor
		r, c int
		want float32
	}{
		{gate, 0, 0, 64}, // the constant's pass-through
		{gate, 1, 1, 1024}, {gate, 1, 2, 1024}, {gate, 1, 0, -1024},
		{gate, 2, 1, 1024}, {gate, 2, 2, 1024}, {gate, 2, 0, -2048},
		{gate, 3, 1, -1024}, {gate, 3, 2, 1024}, {gate, 3, 0, 0},
		{gate, 4, 1, -1024}, {gate, 4, 2, 1024}, {gate, 4, 0, -1024},
		{out, 1, 1, 1.0 / 1024}, {out, 1, 2, -1.0 / 1024}, {out, 2, 3, 1.0 / 1024}, {out, 2, 4, -1.0 / 1024}, {out, 0, 0, 1.0 / 64},
	} {
		if got := c.t.At(c.r, c.c); got != c.want {
			t.Errorf("%s[%d, %d] = %v, want %v", c.t.Name, c.r, c.c, got, c.want)
		}
	}
	in := sdktest.AllInputs(2)
	for s := range in {
		a, b := s&1, s>>1
		// Every ramp's argument is 0 or at least 1024 in magnitude, where
		// SiLU is exactly 0 or the identity in float32 and float64 (this
		// pass is float64).
		for _, c := range []struct {
			blocks int
			want   []float64
		}{
			{1, []float64{1, float64(a & b), float64(b &^ a)}},
			{2, []float64{1, float64(b), 0}},
		} {
			got := state(t, m, c.blocks, false, in)[s]
			for d, w := range c.want {
				if got[d] != w {
					t.Errorf("a=%d b=%d: after block %d dim %d = %v, want %v", a, b, c.blocks, d, got[d], w)
				}
			}
		}
	}
}

func TestResidualThreeGates(t *testing.T) {
	m, err := noattention.Residual(context.Background(), sdktest.ThreeGates())
	if err != nil {
		t.Fatal(err)
	}
	// d = width + 1: slots 0, 1 and the anchor C = 65536 at dim 2. Block 1:
	// clear both input slots, two step units per gate; block 2: clear both,
	// two step units for g2.
	if s := m.Stats(); s.Tokens != 1 || s.DModel != 3 || s.Blocks != 2 || s.Heads != 1 || s.FFNHidden != 6 {
		t.Fatalf("stats %+v", s)
	}
	for _, b := range m.Blocks {
		if b.Attn == nil || b.Attn.Norm == nil || b.FFN.Norm == nil || !b.Attn.Residual || !b.FFN.Residual {
			t.Fatalf("block %+v is not a pre-norm residual block", b)
		}
		for _, h := range b.Attn.Heads {
			for _, n := range []string{h.Q, h.K, h.V, h.O} {
				if tt := m.Tensor(n); tt.NNZ() != 0 || tt.Rows != 3 || tt.Cols != 3 {
					t.Errorf("attention tensor %s: %d×%d with %d entries, want a zero 3×3", n, tt.Rows, tt.Cols, tt.NNZ())
				}
			}
		}
	}
	in := sdktest.AllInputs(2)
	for s := range in {
		a, b := float64(s&1), float64(s>>1)
		for _, c := range []struct {
			blocks   int
			attnOnly bool
			want     []float64
		}{
			{1, true, []float64{a, b, noattention.Anchor}}, // the zero attention changes nothing
			{1, false, []float64{float64(s & (s >> 1) & 1), float64((s >> 1) &^ s & 1), noattention.Anchor}},
			{2, false, []float64{b, 0, noattention.Anchor}},
		} {
			got := state(t, m, c.blocks, c.attnOnly, in)[s]
			for d, w := range c.want {
				// RMSNorm scales by ρ = √d/√(C² + Σv²): relative error Σv²/C² ≤ 1e-9.
				if math.Abs(got[d]-w) > 1e-6 {
					t.Errorf("a=%v b=%v: after block %d (attention only %v) dim %d = %v, want %v", a, b, c.blocks, c.attnOnly, d, got[d], w)
				}
			}
		}
	}
}

// randomCircuit is a random layered circuit with copies, integer weights
// up to ±3 and thresholds around half the fan-in.
func randomCircuit(rng *rand.Rand, nIn, depth, width int) *layered.Circuit {
	lb := layered.NewBuilder(nIn, nil)
	tag := lb.Tag("r")
	prev := nIn
	for L := 0; L < depth; L++ {
		w := 1 + rng.IntN(width)
		if L == depth-1 {
			w = 3
		}
		for g := 0; g < w; g++ {
			if rng.IntN(3) == 0 {
				lb.Copy(int32(rng.IntN(prev)), tag)
				continue
			}
			k := 1 + rng.IntN(min(prev, 4))
			perm := rng.Perm(prev)[:k]
			src, wt := make([]int32, k), make([]int32, k)
			for i := range src {
				src[i] = int32(perm[i])
				wt[i] = int32(rng.IntN(7) - 3)
			}
			lb.Gate(layered.KindGate, int32(rng.IntN(k+1)-1), src, wt, tag)
		}
		lb.Level()
		prev = w
	}
	return lb.Circuit(nil)
}

func TestRandomCircuits(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for k := 0; k < 20; k++ {
		c := randomCircuit(rng, 5, 1+rng.IntN(6), 8)
		in := bitvec.Random(rng, 64, 5)
		for _, variant := range []string{"mlp", "residual"} {
			mc := sdktest.CheckMapper(t, noattention.Plugin, map[string]any{"variant": variant}, c, sdktest.ModelOptions{In: in, MinMargin: 0.49})
			if m := mc.Model; m.DModel != 1+c.Stats().Forms {
				t.Errorf("circuit %d, %s: d_model %d, want 1 + %d forms", k, variant, m.DModel, c.Stats().Forms)
			}
		}
	}
}
