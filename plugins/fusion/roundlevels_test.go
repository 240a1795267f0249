package fusion_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tcforge/tcforge/plugins/fusion"
	"github.com/tcforge/tcforge/sdk/layered"
)

// TestRoundLevels checks Options.RoundLevels on toy Keccak sponges: with
// the round objective's modular forms kept on levels 1..k, the first k
// rounds take one level and the rest two, depth 2·rounds + 1 − k for
// 1 ≤ k < rounds (k = 1 is already one level shallower than depth first,
// 7 and 9 here: the first round reads exact inputs), as wide as the round
// objective's middle rounds (286 gates a state bit) from k = 2 on, where
// the first round's sums are read by a second round at one level; k =
// rounds is the round objective (or, without rule 10, its plan one level
// deeper). Outputs equal the logic circuit's.
func TestRoundLevels(t *testing.T) {
	type fig struct{ depth, width int }
	w1r3 := sponge(0, 3, 12, 1) // w = 1: round (4, 40216), depth first (7, 275)
	w4r4 := sponge(2, 4, 50, 1) // w = 4: round (5, 162866), depth first (9, 1100)
	for _, tt := range []struct {
		name string
		logW int
		opts fusion.Options
		want fig
	}{
		{"w1r3 k=1", 0, fusion.Options{RoundLevels: 1}, fig{6, 610}},
		{"w1r3 k=2", 0, fusion.Options{RoundLevels: 2}, fig{5, 7150}},
		{"w1r3 k=3", 0, fusion.Options{RoundLevels: 3}, fig{4, 40216}},
		{"w4r4 k=1", 2, fusion.Options{RoundLevels: 1}, fig{8, 2600}},
		{"w4r4 k=2", 2, fusion.Options{RoundLevels: 2}, fig{7, 28600}},
		{"w4r4 k=3", 2, fusion.Options{RoundLevels: 3}, fig{6, 28600}},
		{"w4r4 k=4 NoPair", 2, fusion.Options{RoundLevels: 4, NoPair: true}, fig{6, 28600}},
		{"w4r4 k=4", 2, fusion.Options{RoundLevels: 4}, fig{5, 162866}},
		{"w4r4 k=2 max_width 28599", 2, fusion.Options{RoundLevels: 2, MaxWidth: 28599}, fig{9, 1100}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := w1r3
			if tt.logW == 2 {
				c = w4r4
			}
			tt.opts.Objective = fusion.Round
			l, err := fusion.Compile(context.Background(), c, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			s := l.Stats()
			if got := (fig{s.Depth, s.Width}); got != tt.want {
				t.Errorf("depth %d width %d, want %d, %d (widths %v)", got.depth, got.width, tt.want.depth, tt.want.width, s.Widths)
			}
			rng := rand.New(rand.NewPCG(uint64(len(c.Inputs)), 18))
			for i := range 4 {
				in := make([]uint64, len(c.Inputs))
				for j := range in {
					in[j] = rng.Uint64()
				}
				t.Run(fmt.Sprint(i), func(t *testing.T) {
					equalOn(t, c, in, map[string]*layered.Circuit{"fusion": l})
				})
			}
		})
	}
}
