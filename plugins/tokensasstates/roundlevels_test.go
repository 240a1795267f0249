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

func TestRoundLevelsScratch(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct{ logW, rate, rounds int }{{1, 25, 4}, {1, 25, 6}} {
		c := sdktest.Build(t, keccak.Plugin, map[string]any{
			"log_w": int64(tt.logW), "rate": int64(tt.rate), "rounds": int64(tt.rounds), "padding": "none"})
		in := bitvec.Random(rand.New(rand.NewPCG(18, uint64(tt.logW<<4|tt.rounds))), 64, len(c.Inputs))
		want, err := bitvec.EvalSliced(in, len(c.Inputs), c.Eval)
		if err != nil {
			t.Fatal(err)
		}
		for k := 0; k <= tt.rounds; k++ {
			for _, np := range []bool{false, true} {
				l, err := fusion.Compile(ctx, c, fusion.Options{Objective: fusion.Round, RoundLevels: k, NoPair: np})
				if err != nil {
					t.Fatal(err)
				}
				m, err := tokensasstates.Map(ctx, l, tokensasstates.Config{Tokens: 1 << tt.logW, Interleave: true})
				if err != nil {
					t.Fatal(err)
				}
				res := checkPass(t, fmt.Sprint(k), m, in, want, l.NumOutputs())
				s, ls := m.Stats(), l.Stats()
				t.Logf("r%d k=%d nopair %v: depth %d width %d; d_model %d blocks %d FFN %d dense %d margin %.3f", tt.rounds, k, np, ls.Depth, ls.Width, s.DModel, s.Blocks, s.FFNHidden, s.ParamsDense, res.MinMargin)
			}
		}
	}
}
