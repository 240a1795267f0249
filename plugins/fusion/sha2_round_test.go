package fusion_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tcforge/tcforge/plugins/fusion"
	"github.com/tcforge/tcforge/plugins/sha2"
	"github.com/tcforge/tcforge/plugins/sha2/sha2ref"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// sha256Digests evaluates l, a layered SHA-256 of rounds rounds on
// 55-byte messages (one block), on 64 random messages and compares each
// digest with crypto/sha256 (64 rounds) or sha2ref's reduced-round
// compression (checked against crypto/sha256 and NIST vectors in
// sha2ref's tests).
func sha256Digests(t *testing.T, c *circuit.Circuit, l *layered.Circuit, rounds int) {
	t.Helper()
	const msgBytes = 55
	rng := rand.New(rand.NewPCG(256, uint64(rounds)))
	msgs, in := laneMessages(rng, msgBytes, len(c.Inputs), sha2ref.BytesToBits)
	out, err := l.Evaluator()(in)
	if err != nil {
		t.Fatal(err)
	}
	checkLanes(t, fmt.Sprintf("rounds %d", rounds), out, msgs, func(m []byte) []byte {
		if rounds == 64 {
			d := sha256.Sum256(m)
			return sha2ref.BytesToBits(d[:])
		}
		return sha2ref.SHA256.Sum(sha2ref.BytesToBits(m), rounds)
	})
}

// TestSHA256Round layers SHA-256 (one block) with the round objective at
// 1…8 rounds (and 64 unless -short) and checks the digests of 64 random
// messages against the reference: the additions' SUMBITs read parities
// (Σ and σ outputs, Ch and Maj), which must stay exact, not sums known
// modulo 2. It also checks the depth law 3·rounds + 1 and that the round
// objective falls back to the depth-first plan, which is not deeper.
func TestSHA256Round(t *testing.T) {
	rounds := []int{1, 2, 3, 4, 5, 6, 7, 8, 17}
	if !testing.Short() {
		rounds = append(rounds, 64)
	}
	for _, r := range rounds {
		c := sdktest.Build(t, sha2.Plugin, map[string]any{"preset": "sha256", "rounds": int64(r), "message_bits": int64(8 * 55)})
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
		s, ds := l.Stats(), d.Stats()
		t.Logf("rounds %d: round depth %d width %d gates %d nonzeros %d; depth first %d %d %d %d",
			r, s.Depth, s.Width, s.Gates, s.Nonzeros, ds.Depth, ds.Width, ds.Gates, ds.Nonzeros)
		// 16-bit chunks (c = 2): 3 levels a round, one output level
		// (docs/sha2.md); the round objective's sums known modulo 2 do not
		// make SHA-2 shallower, so it keeps the depth-first plan.
		if s.Depth != 3*r+1 || s.Width != ds.Width || s.Gates != ds.Gates || s.Nonzeros != ds.Nonzeros {
			t.Errorf("rounds %d: round objective depth %d width %d gates %d nonzeros %d, want depth 3·%d + 1 and the depth-first plan's %d %d %d",
				r, s.Depth, s.Width, s.Gates, s.Nonzeros, r, ds.Width, ds.Gates, ds.Nonzeros)
		}
		sha256Digests(t, c, l, r)
	}
}
