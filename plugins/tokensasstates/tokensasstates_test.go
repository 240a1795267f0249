package tokensasstates_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tcforge/tcforge/internal/forward"
	"github.com/tcforge/tcforge/internal/point"
	"github.com/tcforge/tcforge/plugins/adder"
	"github.com/tcforge/tcforge/plugins/fusion"
	"github.com/tcforge/tcforge/plugins/keccak"
	"github.com/tcforge/tcforge/plugins/md"
	"github.com/tcforge/tcforge/plugins/merkle"
	"github.com/tcforge/tcforge/plugins/tokensasstates"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/model"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// Points are the circuits the mapper is tested on (fusion-layered).
var Points = []struct {
	Name   string
	Plugin *sdk.Construction
	Values map[string]any
	Cfg    tokensasstates.Config
}{
	{"keccak-w1", keccak.Plugin, map[string]any{"log_w": int64(0), "rate": int64(16), "rounds": int64(2)}, tokensasstates.Config{Tokens: 4}},
	{"keccak-w2", keccak.Plugin, map[string]any{"log_w": int64(1), "rate": int64(25), "rounds": int64(2)}, tokensasstates.Config{Tokens: 2, Interleave: true}},
	{"keccak-w8", keccak.Plugin, map[string]any{"log_w": int64(3), "rate": int64(100), "rounds": int64(2)}, tokensasstates.Config{Tokens: 8, Interleave: true}},
	{"md", md.Plugin, map[string]any{"log_w": int64(1), "rounds": int64(3), "block_bits": int64(25), "blocks": int64(2)}, tokensasstates.Config{Tokens: 4}},
	{"merkle", merkle.Plugin, map[string]any{"log_w": int64(1), "rounds": int64(3), "block_bits": int64(25), "leaves": int64(2)}, tokensasstates.Config{Tokens: 4}},
	{"adder", adder.Plugin, map[string]any{"n": int64(8)}, tokensasstates.Config{Tokens: 8, Interleave: true}},
}

// Layered builds point i and layers it with fusion.
func layeredPoint(t *testing.T, i int) *layered.Circuit {
	t.Helper()
	p := Points[i]
	c := sdktest.Build(t, p.Plugin, p.Values)
	l, err := fusion.Compile(context.Background(), c, fusion.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestPoints(t *testing.T) {
	for i, p := range Points {
		t.Run(p.Name, func(t *testing.T) {
			l := layeredPoint(t, i)
			m, err := tokensasstates.Map(context.Background(), l, p.Cfg)
			if err != nil {
				t.Fatal(err)
			}
			// The last level is folded into the readout.
			if !m.IsStock() || len(m.Blocks) != l.Depth()-1 {
				t.Fatalf("%d blocks (stock %v), want %d stock layers", len(m.Blocks), m.IsStock(), l.Depth()-1)
			}
			in := bitvec.Random(rand.New(rand.NewPCG(1, uint64(i))), 64, l.NumInputs)
			want, err := bitvec.EvalSliced(in, l.NumInputs, l.Eval)
			if err != nil {
				t.Fatal(err)
			}
			res, err := forward.Forward(m, in, forward.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := point.FirstMismatch("float32 stock pass vs layered circuit", res.Outputs, want, l.NumOutputs()); err != nil {
				t.Fatal(err)
			}
			if res.MinMargin < 0.4 {
				t.Errorf("margin %v, want ≥ 0.4", res.MinMargin)
			}
			// The wire encoding keeps the stock layers.
			b, err := m.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			var back model.Model
			if err := back.UnmarshalBinary(b); err != nil || !back.IsStock() {
				t.Fatalf("round trip: %v (stock %v)", err, back.IsStock())
			}
			s := m.Stats()
			t.Logf("%s: depth %d, tokens %d, d_model %d, blocks %d, heads %d, FFN %d, params %d dense %d nonzero, margin %.4f",
				p.Name, l.Depth(), s.Tokens, s.DModel, s.Blocks, s.Heads, s.FFNHidden, s.ParamsDense, s.ParamsNonzero, res.MinMargin)
		})
	}
}

// TestRefusesInexact: the 15-bit adder's carry sums (fusion: Σ|w·x| up to
// 5.7·10⁶) cannot be exact through float32 LayerNorm; the mapper says so
// instead of building a model that is wrong on some inputs.
func TestRefusesInexact(t *testing.T) {
	c := sdktest.Build(t, adder.Plugin, map[string]any{"n": int64(15)})
	l, err := fusion.Compile(context.Background(), c, fusion.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = tokensasstates.Map(context.Background(), l, tokensasstates.Config{Tokens: 15})
	if err == nil || !strings.Contains(err.Error(), "reaches 5668218 > 262144") {
		t.Fatalf("err = %v, want the float32 refusal", err)
	}
}
