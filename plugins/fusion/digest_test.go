package fusion_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tcforge/tcforge/plugins/fusion"
	"github.com/tcforge/tcforge/plugins/sha2"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// TestOutputUnchanged pins fusion's layered circuits bit for bit: the
// SHA-256 of the encoding (MarshalBinary) of its output on a corpus of
// logic circuits, every objective. Changes meant to speed fusion up must
// leave these digests alone; a change meant to alter the output updates
// them (the test prints the new digest) and says why in its commit.
func TestOutputUnchanged(t *testing.T) {
	depth, size, round := fusion.Options{}, fusion.Options{Objective: fusion.Size}, fusion.Options{Objective: fusion.Round}
	asap := fusion.Options{ASAP: true}
	tests := []struct {
		name  string
		build func(t *testing.T) []*circuit.Circuit
		opts  []fusion.Options
		want  string
	}{
		{"SHA3-256 depth", one(sha3Circuit(135)), []fusion.Options{depth}, "2817ce65db736a79a8b00be6ff7faaadbbce29455e556a2300829cc5db3b46df"},
		{"SHA3-256 size", one(sha3Circuit(135)), []fusion.Options{size}, "a1b4a3984dc7a8442cd9e1458fd35c1ebd9a7700d6f3992bffacd6738b1e58fa"},
		{"Keccak w=8 3 rounds 2 blocks", one(sponge(3, 3, 72, 2)), []fusion.Options{depth, size, round, asap}, "9ddbf2e1ccb0b3f6c6965b6036502300d85ed09f2b315342b0adf714d08ec5bd"},
		{"Keccak w=16 24 rounds", one(sponge(4, 24, 144, 1)), []fusion.Options{depth, size}, "bfa1e32fbe8b4a4cfcac2172b0f57b37504adaa8b67f242b623aeedffdf77a9c"},
		{"Keccak w=16 4 rounds", one(sponge(4, 4, 144, 1)), []fusion.Options{round}, "e19d6448197ed713ecc664679223a8fd870e54a7c493d1ba6a9f0374ba704108"},
		{"SHA-256 4 rounds", func(t *testing.T) []*circuit.Circuit {
			return []*circuit.Circuit{sdktest.Build(t, sha2.Plugin, map[string]any{"preset": "sha256", "rounds": int64(4), "message_bits": int64(8 * 55)})}
		}, []fusion.Options{depth, round}, "9e2565dbc0d822203e70a318062a1b2b17b6e9b11fe731e5db48901096412f25"},
		{"random circuits", func(*testing.T) []*circuit.Circuit {
			rng := rand.New(rand.NewPCG(14, 14))
			var cs []*circuit.Circuit
			for range 40 {
				nIn := 1 + rng.IntN(12)
				cs = append(cs, randomCircuit(rng, nIn, 5+rng.IntN(120), 1+rng.IntN(8)))
			}
			return cs
		}, []fusion.Options{depth, size, round, asap}, "6ea05de2b6f02dfd1067a845805ded225dc88f5dab8ca0fb2b6d941fc2858860"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := sha256.New()
			for _, c := range tc.build(t) {
				for _, opt := range tc.opts {
					l, err := fusion.Compile(context.Background(), c, opt)
					if err != nil {
						t.Fatalf("%+v: %v", opt, err)
					}
					b, err := l.MarshalBinary()
					if err != nil {
						t.Fatal(err)
					}
					fmt.Fprintf(h, "%d:", len(b))
					h.Write(b)
				}
			}
			if got := hex.EncodeToString(h.Sum(nil)); got != tc.want {
				t.Errorf("encodings' digest %s, want %s", got, tc.want)
			}
		})
	}
}

func one(c *circuit.Circuit) func(*testing.T) []*circuit.Circuit {
	return func(*testing.T) []*circuit.Circuit { return []*circuit.Circuit{c} }
}
