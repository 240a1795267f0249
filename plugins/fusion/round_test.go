package fusion_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/tcforge/tcforge/sdk/keccak/keccakref"
	"github.com/tcforge/tcforge/sdk/sdktest"

	"github.com/tcforge/tcforge/plugins/fusion"
	"github.com/tcforge/tcforge/sdk/layered"
)

// TestRoundObjectiveKeccakLaw checks the round objective's Keccak laws on
// toy sponges: one level a round (the last one's output bits exact, as one
// switching function of (S_a, S_h): rule 10), one output level,
// depth = rounds·blocks + 1; every round between the first and the last
// one level of 286 gates a state bit (22 parity counters of a θ sum in
// [0, 22] and 264 switch points of [S_b even ∧ S_c odd]); and the circuit
// equal to the logic circuit (evaluated on its forms where the flattened
// circuit is too large).
func TestRoundObjectiveKeccakLaw(t *testing.T) {
	for _, tt := range []struct{ logW, rounds, blocks int }{
		{0, 1, 1}, {0, 2, 1}, {0, 3, 1}, {1, 3, 1}, {0, 2, 2}, {1, 4, 1},
	} {
		rate := 25 << tt.logW / 2
		c := sponge(tt.logW, tt.rounds, rate, tt.blocks)
		d, err := fusion.Compile(context.Background(), c, fusion.Options{})
		if err != nil {
			t.Fatal(err)
		}
		l, err := fusion.Compile(context.Background(), c, fusion.Options{Objective: fusion.Round})
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Validate(); err != nil {
			t.Fatal(err)
		}
		s := l.Stats()
		t.Logf("%+v: depth %d width %d gates %d edges %d forms %d nonzeros %d (depth first: %d)", tt, s.Depth, s.Width, s.Gates, s.Edges, s.Forms, s.Nonzeros, d.Depth())
		if want := tt.rounds*tt.blocks + 1; s.Depth != want {
			t.Errorf("%+v: depth %d, want %d (widths %v)", tt, s.Depth, want, s.Widths)
		}
		if tt.blocks == 1 {
			for L := 2; L < tt.rounds; L++ {
				if want := 286 * 25 << tt.logW; s.Widths[L-1] != want {
					t.Errorf("%+v: level %d has %d gates, want %d", tt, L, s.Widths[L-1], want)
				}
			}
		}
		rng := rand.New(rand.NewPCG(uint64(tt.logW), 1))
		in := make([]uint64, len(c.Inputs))
		for i := range in {
			in[i] = rng.Uint64()
		}
		equalOn(t, c, in, map[string]*layered.Circuit{"fusion": l})
	}
}

// TestSHA3_256Round compiles full SHA3-256 (one block) with the round
// objective: depth 25 = 24 rounds + the output level, 457,600 gates (286 a
// state bit) on every level but the first and the last, and 64 random
// messages equal to crypto/sha3 (evaluated on the forms: the flattened
// circuit has 66 G edges). It takes 1½–3½ minutes and 7 GB, so it runs
// only with TCFORGE_HEAVY=1.
func TestSHA3_256Round(t *testing.T) {
	sdktest.Heavy(t, "full SHA3-256 at one level a round: 1½–3½ minutes, 7 GB")
	const msgBytes = 135
	c := sha3Circuit(msgBytes)
	l, err := fusion.Compile(context.Background(), c, fusion.Options{Objective: fusion.Round})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Validate(); err != nil {
		t.Fatal(err)
	}
	s := l.Stats()
	t.Logf("depth %d width %d gates %d copies %d edges %d forms %d nonzeros %d", s.Depth, s.Width, s.Gates, s.Copies, s.Edges, s.Forms, s.Nonzeros)
	if s.Depth != 25 {
		t.Errorf("depth %d, want 25", s.Depth)
	}
	for L := 2; L <= 23; L++ {
		if s.Widths[L-1] != 286*1600 {
			t.Errorf("level %d: %d gates, want 286·1600", L, s.Widths[L-1])
		}
	}
	rng := rand.New(rand.NewPCG(256, 3))
	msgs, in := laneMessages(rng, msgBytes, len(c.Inputs), keccakref.BytesToBits)
	out, err := l.Eval(in)
	if err != nil {
		t.Fatal(err)
	}
	checkLanes(t, "against crypto/sha3", out, msgs, sha3Digest)
}
