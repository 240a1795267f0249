package decoder_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tcforge/tcforge/plugins/adder"
	"github.com/tcforge/tcforge/plugins/decoder"
	"github.com/tcforge/tcforge/plugins/fusion"
	"github.com/tcforge/tcforge/plugins/keccak"
	"github.com/tcforge/tcforge/plugins/reifier"
	"github.com/tcforge/tcforge/plugins/sha2"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

func randomInputs(n, bits int) []bitvec.Vec {
	return bitvec.Random(rand.New(rand.NewPCG(1, 2)), n, bits)
}

func TestToy(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name    string
		pl      *sdk.Construction
		values  map[string]any
		layerer string
		k       int
	}{
		{"adder8 fusion k1", adder.Plugin, map[string]any{"n": int64(8)}, "fusion", 1},
		{"adder8 fusion k2", adder.Plugin, map[string]any{"n": int64(8)}, "fusion", 2},
		{"adder8 reifier k3", adder.Plugin, map[string]any{"n": int64(8)}, "reifier", 3},
		{"keccak w1 r2 k1", keccak.Plugin, map[string]any{"log_w": int64(0), "rate": int64(13), "rounds": int64(2)}, "fusion", 1},
		{"keccak w1 r2 k2", keccak.Plugin, map[string]any{"log_w": int64(0), "rate": int64(13), "rounds": int64(2)}, "fusion", 2},
		{"sha256 r2 k3", sha2.Plugin, map[string]any{"preset": "sha256", "rounds": int64(2)}, "fusion", 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := sdktest.Build(t, tc.pl, tc.values)
			var l *layered.Circuit
			var err error
			if tc.layerer == "fusion" {
				l, err = fusion.Compile(ctx, c, fusion.Options{MaxSum: 1 << 16})
			} else {
				l, err = reifier.CompileBounded(ctx, c, 1<<16)
			}
			if err != nil {
				t.Fatal(err)
			}
			m, err := decoder.Map(ctx, l, decoder.Config{LevelsPerStep: tc.k})
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Validate(); err != nil {
				t.Fatal(err)
			}
			s := m.Stats()
			fmt.Printf("%s: depth %d, layers %d, d_model %d, heads %d, ffn %d, prompt %d, generated %d, kinds %d, params %d\n",
				tc.name, l.Depth(), s.Blocks, s.DModel, s.Heads, s.FFNHidden, m.Decoder.Prompt, m.Decoder.Generated(), m.Attrs["kinds"], s.ParamsDense)
			// Every generated token of 16 samples, in float32 and
			// float64, as a run checks a decoder.
			mc := sdktest.CheckModel(t, m, l, sdktest.ModelOptions{In: randomInputs(16, l.NumInputs), ExactIn: "fp64 fp32", MinMargin: 0.99})
			fmt.Printf("  margin %.4f\n", mc.MinMargin)
		})
	}
	_ = circuit.NoPos
}

// TestBitOrderAuto checks that the default bit order makes the prompt and
// the digest the construction's bytes: SHA-2's msb-first (bit h of a word
// is token bit h mod 8), Keccak's lsb-first, from the position hints.
func TestBitOrderAuto(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		pl     *sdk.Construction
		values map[string]any
		want   [8]int32
	}{
		{"sha256", sha2.Plugin, map[string]any{"preset": "sha256", "mode": "block", "rounds": int64(1)}, [8]int32{7, 6, 5, 4, 3, 2, 1, 0}},
		{"keccak", keccak.Plugin, map[string]any{"log_w": int64(3), "rate": int64(64), "rounds": int64(1)}, [8]int32{0, 1, 2, 3, 4, 5, 6, 7}},
	} {
		c := sdktest.Build(t, tc.pl, tc.values)
		l, err := reifier.CompileBounded(ctx, c, 1<<16)
		if err != nil {
			t.Fatal(err)
		}
		m, err := decoder.Map(ctx, l, decoder.Config{LevelsPerStep: 2})
		if err != nil {
			t.Fatal(err)
		}
		d := m.Decoder
		for j := range 2 {
			for b := range 8 {
				if got, want := d.PromptBits[8*j+b], tc.want[b]+int32(8*j); got != want {
					t.Errorf("%s: prompt token %d bit %d is input %d, want %d", tc.name, j, b, got, want)
				}
				if got, want := d.DigestBits[8*j+b], tc.want[b]+int32(8*j); got != want {
					t.Errorf("%s: digest token %d bit %d is output %d, want %d", tc.name, j, b, got, want)
				}
			}
		}
	}
}
