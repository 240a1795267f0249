package tokensasgates_test

import (
	"context"
	"math"
	"reflect"
	"testing"

	"github.com/tcforge/tcforge/plugins/tokensasgates"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/model"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// probe reads dims of every token after the first `blocks` blocks (the last
// one without its FFN if attnOnly): out[s][len(dims)·token + k] is dims[k]
// of token on input s.
func probe(t *testing.T, m *model.Model, blocks int, attnOnly bool, dims []int, in []bitvec.Vec) [][]float64 {
	t.Helper()
	if attnOnly {
		pm := *m
		pm.Blocks = append([]model.Block(nil), m.Blocks[:blocks]...)
		pm.Blocks[blocks-1].FFN = nil
		m = &pm
	}
	var tokens, ds []int32
	for tok := 0; tok < m.Tokens; tok++ {
		for _, d := range dims {
			tokens, ds = append(tokens, int32(tok)), append(ds, int32(d))
		}
	}
	return sdktest.Stream(t, m, in, blocks, tokens, ds)
}

func TestHardThreeGates(t *testing.T) {
	m, err := tokensasgates.Map(context.Background(), sdktest.ThreeGates(), tokensasgates.Options{Mode: model.Hard})
	if err != nil {
		t.Fatal(err)
	}
	// Tokens a, b, g0, g1, g2; d = T + 4 with VAL, ACC, THR, ONE after the one-hot.
	const T, VAL, ACC, THR, ONE = 5, 5, 6, 7, 8
	if s := m.Stats(); s.Tokens != T || s.DModel != 9 || s.Blocks != 2 || s.Heads != 2 || s.FFNHidden != 4 {
		t.Fatalf("stats %+v", s)
	}
	// K of the + head: inputs attend to themselves, g0 ← a, b; g1 ← b; g2 ← g0, g1.
	// K of the − head: g1 ← a. O writes ±1 into ACC; thresholds are θ − ½.
	kPos, kNeg := m.Tensor("attn.head0.k"), m.Tensor("attn.head1.k")
	want := map[[2]int]bool{{0, 0}: true, {1, 1}: true, {2, 0}: true, {2, 1}: true, {3, 1}: true, {4, 2}: true, {4, 3}: true}
	got := map[[2]int]bool{}
	for r := 0; r < kPos.Rows; r++ {
		cols, vals := kPos.Row(r)
		for k, c := range cols {
			if vals[k] != 1 {
				t.Errorf("K+ (%d, %d) = %v, want 1", r, c, vals[k])
			}
			got[[2]int{r, int(c)}] = true
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("K+ entries %v, want %v", got, want)
	}
	if kNeg.NNZ() != 1 || kNeg.At(3, 0) != 1 {
		t.Errorf("K− has %d entries, (3, 0) = %v; want only (3, 0) = 1", kNeg.NNZ(), kNeg.At(3, 0))
	}
	if o := m.Tensor("attn.head1.o"); o.At(ACC, 0) != -1 {
		t.Errorf("O− = %v, want −1 into ACC", o.At(ACC, 0))
	}
	base := m.Tensor("embed.base")
	for tok, th := range []float32{0.5, 0.5, 1.5, 0.5, 0.5} {
		if base.At(tok, THR) != th || base.At(tok, tok) != 1 || base.At(tok, ONE) != 1 {
			t.Errorf("token %d embeds THR %v one-hot %v ONE %v", tok, base.At(tok, THR), base.At(tok, tok), base.At(tok, ONE))
		}
	}

	in := sdktest.AllInputs(2)
	dims := []int{VAL, ACC}
	// After block 1's attention: ACC is the weighted sum of the predecessors'
	// values (all 0 but the inputs); VAL untouched (inputs hold their bit).
	att := probe(t, m, 1, true, dims, in)
	for s := range in {
		a, b := float64(s&1), float64(s>>1)
		wantACC := []float64{a, b, a + b, b - a, 0}
		wantVAL := []float64{a, b, 0, 0, 0}
		for tok := 0; tok < T; tok++ {
			if v := att[s][2*tok+1]; v != wantACC[tok] {
				t.Errorf("a=%v b=%v: token %d ACC after attention = %v, want %v", a, b, tok, v, wantACC[tok])
			}
			if v := att[s][2*tok]; v != wantVAL[tok] {
				t.Errorf("a=%v b=%v: token %d VAL after attention = %v, want %v", a, b, tok, v, wantVAL[tok])
			}
		}
	}
	// After block 1: VAL = [ACC ≥ θ] through the SiLU steps, ACC cleared.
	// The step is (SiLU(κy + A) − SiLU(κy − A))/(2A), y = ACC − θ + ½,
	// κ = 320, A = 64: y = ±½ gives SiLU(224) − SiLU(96) = 128 → 1, or
	// SiLU(−96) − SiLU(−224) ≈ −5e-40 → 0.
	blk := probe(t, m, 1, false, dims, in)
	for s := range in {
		a, b := s&1, s>>1
		wantVAL := []int{a, b, a & b, b &^ a, 0}
		for tok := 0; tok < T; tok++ {
			if v := blk[s][2*tok]; math.Abs(v-float64(wantVAL[tok])) > 1e-12 {
				t.Errorf("a=%d b=%d: token %d VAL after block 1 = %v, want %d", a, b, tok, v, wantVAL[tok])
			}
			if v := blk[s][2*tok+1]; math.Abs(v) > 1e-12 {
				t.Errorf("a=%d b=%d: token %d ACC after block 1 = %v, want 0", a, b, tok, v)
			}
		}
	}
	// The readout after both blocks: g2 = b, every readout ½ from its
	// threshold.
	sdktest.CheckModel(t, m, sdktest.ThreeGates(), sdktest.ModelOptions{In: in, ExactIn: "fp64 fp32", MinMargin: 0.5})
}

func TestSoftmaxThreeGates(t *testing.T) {
	const beta = 6.0
	m, err := tokensasgates.Map(context.Background(), sdktest.ThreeGates(), tokensasgates.Options{Mode: model.Softmax, Beta: beta})
	if err != nil {
		t.Fatal(err)
	}
	// Padding: g0 and g2 have 2 positive predecessors and no negative one,
	// so their − head attends 2 null tokens; the inputs' − head 1.
	const T, real = 7, 5
	if m.Tokens != T || m.Attrs["null_tokens"] != 2 {
		t.Fatalf("%d tokens, %d null tokens; want 7 and 2", m.Tokens, m.Attrs["null_tokens"])
	}
	VAL, ACC, THR := T, T+1, T+2
	N := []float64{1, 1, 2, 1, 2, 1, 1}
	theta := []float64{1, 1, 2, 1, 1, 1, 1}
	base := m.Tensor("embed.base")
	for tok := range N {
		if got, want := float64(base.At(tok, THR)), (theta[tok]-0.5)/N[tok]; math.Abs(got-want) > 1e-7 {
			t.Errorf("token %d THR %v, want (θ−½)/N = %v", tok, got, want)
		}
	}
	in := sdktest.AllInputs(2)
	att := probe(t, m, 1, true, []int{VAL, ACC}, in)
	// ACC_i = Σ_h σ_h o_h with o_h = ((e^β−1)·S_h + Σ_all v)/((e^β−1)·N_i + T):
	// the implicit-zero leak Σ_all v = a + b cancels between the two heads.
	e := math.Exp(beta) - 1
	for s := range in {
		a, b := float64(s&1), float64(s>>1)
		z := []float64{a, b, a + b, b - a, 0, 0, 0}
		for tok := 0; tok < T; tok++ {
			want := e * z[tok] / (e*N[tok] + T)
			if got := att[s][2*tok+1]; math.Abs(got-want) > 1e-12 {
				t.Errorf("a=%v b=%v: token %d ACC = %v, want %v", a, b, tok, got, want)
			}
		}
	}
	sdktest.CheckModel(t, m, sdktest.ThreeGates(), sdktest.ModelOptions{In: in})
	// At β = 0.5 the shrink factor f = (e^β−1)N/((e^β−1)N + T) is far from 1
	// and g0 = AND no longer fires on a = b = 1.
	low := sdktest.Forward(t, m, in, sdktest.PassOptions{Beta: 0.5})
	if got := low.Outputs[3].Get(0); got != 0 {
		t.Errorf("β = 0.5: output %d on a = b = 1, want the wrong 0 (f too small for g0 = AND)", got)
	}
	_ = real
}

// TestWeightedEdges maps a gate with weights beyond ±1 (bit-plane heads)
// and checks it on every input, in both modes.
func TestWeightedEdges(t *testing.T) {
	// g = [3x0 − 2x1 + x2 − 5x3 ≥ 1] and its complement at level 1.
	lb := layered.NewBuilder(4, nil)
	tag := lb.Tag("w")
	lb.Gate(layered.KindGate, 1, []int32{0, 1, 2, 3}, []int32{3, -2, 1, -5}, tag)
	lb.Gate(layered.KindGate, 0, []int32{0, 1, 2, 3}, []int32{-3, 2, -1, 5}, tag)
	lb.Level()
	c := lb.Circuit(nil)
	for _, mode := range []string{"hard", "softmax"} {
		mc := sdktest.CheckMapper(t, tokensasgates.Plugin, map[string]any{"attention": mode}, c, sdktest.ModelOptions{In: sdktest.AllInputs(4)})
		// |w| ≤ 5 with both signs on bits 0..2: six heads (σ, b).
		if h := mc.Model.Stats().Heads; h != 6 {
			t.Errorf("%s: %d heads, want 6", mode, h)
		}
	}
}

func TestExportReadBack(t *testing.T) {
	for _, mode := range []string{"hard", "softmax"} {
		m := sdktest.Map(t, tokensasgates.Plugin, map[string]any{"attention": mode}, sdktest.ThreeGates())
		sdktest.CheckExport(t, m, sdktest.AllInputs(2))
	}
}
