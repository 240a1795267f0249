package tokensasstates_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tcforge/tcforge/plugins/fusion"
	"github.com/tcforge/tcforge/plugins/keccak"
	"github.com/tcforge/tcforge/plugins/tokensasstates"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// TestRoundObjective maps fusion's circuits of toy Keccak (one block,
// padding "none", one token a slice) at two threshold levels a round
// (depth first) and at one (objective "round"), and checks that the
// model has one block per level but the folded last — 2·rounds against
// rounds — and that its float32 forward pass equals the logic circuit on
// 64 random messages, with every step saturated (margin ≥ 0.4). Three
// rounds at w = 1 and 2 (10–15 s each) run in the default tier; four
// rounds and w = 4 (40 s to minutes each, and the whole test near Go's
// 10-minute timeout on a loaded machine) in the heavy tier.
func TestRoundObjective(t *testing.T) {
	sdktest.Short(t, "toy Keccak at one level a round through tokens-as-states (10–15 s a point)")
	for _, tt := range []struct{ logW, rate, rounds int }{
		{0, 16, 3}, {0, 16, 4}, {1, 25, 3}, {1, 25, 4}, {2, 50, 3}, {2, 50, 4},
	} {
		w := 1 << tt.logW
		name := fmt.Sprintf("w%d-r%d", w, tt.rounds)
		t.Run(name, func(t *testing.T) {
			if tt.logW == 2 || tt.rounds == 4 {
				sdktest.Heavy(t, "w = 4 and four rounds at one level a round (40 s to minutes each)")
			}
			ctx := context.Background()
			c := sdktest.Build(t, keccak.Plugin, map[string]any{
				"log_w": int64(tt.logW), "rate": int64(tt.rate), "rounds": int64(tt.rounds), "padding": "none"})
			in := bitvec.Random(rand.New(rand.NewPCG(18, uint64(tt.logW<<4|tt.rounds))), 64, len(c.Inputs))
			want, err := bitvec.EvalSliced(in, len(c.Inputs), c.Eval)
			if err != nil {
				t.Fatal(err)
			}
			for _, obj := range []fusion.Objective{fusion.Depth, fusion.Round} {
				l, err := fusion.Compile(ctx, c, fusion.Options{Objective: obj})
				if err != nil {
					t.Fatal(err)
				}
				wantDepth := 2*tt.rounds + 1
				if obj == fusion.Round {
					wantDepth = tt.rounds + 1
				}
				if l.Depth() != wantDepth {
					t.Fatalf("%s: depth %d, want %d", obj, l.Depth(), wantDepth)
				}
				m, err := tokensasstates.Map(ctx, l, tokensasstates.Config{Tokens: w, Interleave: true})
				if err != nil {
					t.Fatalf("%s: %v", obj, err)
				}
				if !m.IsStock() || len(m.Blocks) != wantDepth-1 {
					t.Fatalf("%s: %d blocks (stock %v), want %d stock layers", obj, len(m.Blocks), m.IsStock(), wantDepth-1)
				}
				res := checkPass(t, fmt.Sprintf("%s: float32 stock pass vs logic circuit", obj), m, in, want, l.NumOutputs())
				s, ls := m.Stats(), l.Stats()
				t.Logf("%s: depth %d width %d; tokens %d, d_model %d, blocks %d, heads %d, FFN %d, params %d dense %d nonzero; attrs %v; margin %.4f",
					obj, ls.Depth, ls.Width, s.Tokens, s.DModel, s.Blocks, s.Heads, s.FFNHidden, s.ParamsDense, s.ParamsNonzero, m.Attrs, res.MinMargin)
			}
		})
	}
}
