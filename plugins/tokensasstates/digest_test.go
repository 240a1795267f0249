package tokensasstates_test

import (
	"context"
	"testing"

	"github.com/tcforge/tcforge/plugins/adder"
	"github.com/tcforge/tcforge/plugins/fusion"
	"github.com/tcforge/tcforge/plugins/keccak"
	"github.com/tcforge/tcforge/plugins/sha2"
	"github.com/tcforge/tcforge/plugins/tokensasstates"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// TestOutputUnchanged pins the mapper's models bit for bit: the SHA-256
// of the encoding (MarshalBinary) of the model it maps from each of a few
// fusion-layered circuits. A refactor must leave these digests alone; a
// change meant to alter the models updates them (the test prints the new
// digest) and says why in its commit.
func TestOutputUnchanged(t *testing.T) {
	toyKeccak := func(logW, rate, rounds int, obj fusion.Objective) func(*testing.T) *layered.Circuit {
		return func(t *testing.T) *layered.Circuit {
			c := sdktest.Build(t, keccak.Plugin, map[string]any{
				"log_w": int64(logW), "rate": int64(rate), "rounds": int64(rounds), "padding": "none"})
			l, err := fusion.Compile(context.Background(), c, fusion.Options{Objective: obj})
			if err != nil {
				t.Fatal(err)
			}
			return l
		}
	}
	point := func(i int) func(*testing.T) *layered.Circuit {
		return func(t *testing.T) *layered.Circuit { return layeredPoint(t, i) }
	}
	adder32 := func(t *testing.T) *layered.Circuit {
		l, err := fusion.Compile(context.Background(), sdktest.Build(t, adder.Plugin, map[string]any{"n": int64(32)}), fusion.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	sha256r4 := func(t *testing.T) *layered.Circuit {
		l, err := fusion.Compile(context.Background(), sdktest.Build(t, sha2.Plugin, map[string]any{"preset": "sha256", "rounds": int64(4)}), fusion.Options{MaxSum: 1 << 16})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	tests := []struct {
		name  string
		build func(*testing.T) *layered.Circuit
		cfg   tokensasstates.Config
		want  string
	}{
		{"keccak w=1 r3 depth", toyKeccak(0, 16, 3, fusion.Depth), tokensasstates.Config{Tokens: 1, Interleave: true}, "a805cec8445089ee0fe192c5359b1198252ac80a9f22d386e633f0ebb92364c2"},
		{"keccak w=1 r1 round", toyKeccak(0, 16, 1, fusion.Round), tokensasstates.Config{Tokens: 1, Interleave: true}, "65264aaf8297522011742f4c5ac1856d3a2c04b377c2e32ada9a9ffcda188c46"},
		{"keccak w=2 r3 depth", toyKeccak(1, 25, 3, fusion.Depth), tokensasstates.Config{Tokens: 2, Interleave: true}, "15ee1e52b1fd49398790c08e297c406f226fd49b9a2c45c3afa072463c98f115"},
		{"keccak w=2 r1 round", toyKeccak(1, 25, 1, fusion.Round), tokensasstates.Config{Tokens: 2, Interleave: true}, "acfe7ad7d51965950a3693e0f82a798d305a867215509c7589e2b96b3cd40c04"},
		{"point keccak-w1", point(0), Points[0].Cfg, "6cafeb6e65a10c97bc3dd0cd8d8c8cfe8cd081ff40b8e463c8239de8f4200d9f"},
		{"point keccak-w2", point(1), Points[1].Cfg, "8369b699a62566fdf6dee166cf4981b4584b1308b1b246e93a8bd0d4961953d0"},
		{"point md", point(3), Points[3].Cfg, "c228759ef637a86e6254644c53112925cf8784ff6400345c90e5411033b57e2a"},
		{"point adder", point(5), Points[5].Cfg, "abd8c50c1f8c5fa1361abe2b9d743e93fb932318303ac8d892800b938d55d179"},
		{"adder n=32", adder32, tokensasstates.Config{Tokens: 32}, "db99881162a175d196d5455a276a68e1710d3e6cb0661392cc2256482159d87f"},
		{"sha256 r=4 8-bit chunks", sha256r4, tokensasstates.Config{}, "2d7fdf4e325a302ed684da2eae1f3b81fc1d66d1be69faaf62345a7f6e4b1bab"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := tokensasstates.Map(context.Background(), tc.build(t), tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got := sdktest.Digest(t, m); got != tc.want {
				t.Errorf("model encoding's digest %s, want %s", got, tc.want)
			}
		})
	}
}
