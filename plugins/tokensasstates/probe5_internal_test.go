package tokensasstates

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/tcforge/tcforge/plugins/adder"
	"github.com/tcforge/tcforge/plugins/fusion"
	"github.com/tcforge/tcforge/plugins/keccak"
	"github.com/tcforge/tcforge/plugins/md"
	"github.com/tcforge/tcforge/plugins/merkle"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

func TestProbe5(t *testing.T) {
	if os.Getenv("PROBE5") == "" {
		t.Skip()
	}
	ctx := context.Background()
	type cse struct {
		name string
		p    *sdk.Construction
		v    map[string]any
		o    fusion.Options
		cfg  Config
	}
	cases := []cse{
		{"adder4", adder.Plugin, map[string]any{"n": int64(4)}, fusion.Options{}, Config{Tokens: 4}},
		{"adder8", adder.Plugin, map[string]any{"n": int64(8)}, fusion.Options{}, Config{Tokens: 8}},
		{"adder14", adder.Plugin, map[string]any{"n": int64(14)}, fusion.Options{}, Config{Tokens: 14}},
		{"adder32", adder.Plugin, map[string]any{"n": int64(32)}, fusion.Options{}, Config{}},
		{"md2", md.Plugin, map[string]any{"log_w": int64(1), "rounds": int64(2), "rate": int64(16), "block_bits": int64(8), "chain_bits": int64(8), "blocks": int64(2), "padding": "zero"}, fusion.Options{}, Config{Tokens: 4}},
		{"md2d", md.Plugin, map[string]any{"log_w": int64(1), "rounds": int64(2), "rate": int64(16), "block_bits": int64(8), "chain_bits": int64(8), "blocks": int64(4), "padding": "zero"}, fusion.Options{}, Config{}},
		{"merkle2", merkle.Plugin, map[string]any{"log_w": int64(1), "rounds": int64(2), "rate": int64(12), "block_bits": int64(4), "leaves": int64(2)}, fusion.Options{}, Config{Tokens: 4}},
		{"merkle4d", merkle.Plugin, map[string]any{"log_w": int64(1), "rounds": int64(2), "rate": int64(12), "block_bits": int64(4), "leaves": int64(4)}, fusion.Options{}, Config{}},
		{"keccak16", keccak.Plugin, map[string]any{"log_w": int64(4), "rate": int64(256), "rounds": int64(2)}, fusion.Options{}, Config{Tokens: 16, Interleave: true}},
		{"keccak4r", keccak.Plugin, map[string]any{"log_w": int64(2), "rate": int64(64), "rounds": int64(3), "padding": "none"}, fusion.Options{Objective: fusion.Round}, Config{}},
		// {"sha3", keccak.Plugin, map[string]any{"preset": "sha3-256"}, fusion.Options{}, Config{}},
	}
	for _, c := range cases {
		l, err := fusion.Compile(ctx, sdktest.Build(t, c.p, c.v), c.o)
		if err != nil {
			t.Fatal(err)
		}
		var out [2]string
		for i, nw := range []bool{false, true} {
			cfg := c.cfg
			cfg.NoWords = nw
			m, err := Map(ctx, l, cfg)
			if err != nil {
				out[i] = err.Error()
				continue
			}
			s := m.Stats()
			out[i] = fmt.Sprintf("d %d ffn %d dense %d maxsum %d", s.DModel, s.FFNHidden, s.ParamsDense, m.Attrs["max_sum"])
		}
		fmt.Printf("%-10s words: %s | old: %s\n", c.name, out[0], out[1])
	}
}
