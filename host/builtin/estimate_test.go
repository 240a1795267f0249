package builtin_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/tcforge/tcforge/host/builtin"
	"github.com/tcforge/tcforge/sdk"
)

// TestHugeEstimates: parameters near 2⁶³ (rounds, leaves, blocks,
// message_bits) are refused by Prepare or Estimate with an error blaming
// the parameter, or estimated at a size past any --max-edges; never a
// wrapped (small or negative) estimate, never a panic. Before checked
// arithmetic, keccak's rounds = 720575940379280 estimated a few thousand
// edges and the plugin panicked in Build.
func TestHugeEstimates(t *testing.T) {
	const sane = int64(1) << 40 // past any --max-edges anyone sets
	huge := []int64{720575940379280, 1 << 40, 1 << 53, 1<<62 + 12345, math.MaxInt64 - 7, math.MaxInt64}
	tests := []struct {
		plugin string
		base   map[string]any
		param  string
	}{
		{"keccak", map[string]any{"preset": "sha3-256"}, "rounds"},
		{"keccak", map[string]any{"preset": "sha3-256"}, "message_bits"},
		{"keccak", map[string]any{"preset": "sha3-256"}, "blocks"},
		{"keccak", map[string]any{"log_w": int64(0), "rate": int64(12), "padding": "none"}, "blocks"},
		{"merkle", map[string]any{"log_w": int64(3)}, "leaves"},
		{"merkle", map[string]any{"log_w": int64(3)}, "message_bits"},
		{"merkle", map[string]any{"log_w": int64(3)}, "rounds"},
		{"md", map[string]any{"log_w": int64(3)}, "blocks"},
		{"md", map[string]any{"log_w": int64(3)}, "message_bits"},
		{"md", map[string]any{"log_w": int64(3)}, "rounds"},
		{"sha2", map[string]any{}, "rounds"},
		{"sha2", map[string]any{}, "message_bits"},
		{"sha2", map[string]any{}, "blocks"},
		{"ascon", map[string]any{}, "message_bits"},
		{"ascon", map[string]any{}, "blocks"},
		{"ascon", map[string]any{"mode": "xof128"}, "output_bits"},
		{"blake2s", map[string]any{}, "message_bits"},
		{"blake2s", map[string]any{}, "blocks"},
		{"blake3", map[string]any{}, "message_bits"},
		{"blake3", map[string]any{}, "blocks"},
	}
	plugins := builtin.Plugins()
	for _, tt := range tests {
		c := plugins[tt.plugin].(*sdk.Construction)
		known := false
		for _, p := range c.Params {
			known = known || p.Name == tt.param
		}
		if !known {
			t.Fatalf("%s has no parameter %q", tt.plugin, tt.param)
		}
		for _, v := range huge {
			t.Run(fmt.Sprintf("%s/%s=%d", tt.plugin, tt.param, v), func(t *testing.T) {
				vals := map[string]any{tt.param: v}
				for k, x := range tt.base {
					vals[k] = x
				}
				size, err := estimate(c, vals)
				if err != nil {
					if pe, ok := sdk.AsParamError(err); !ok || pe.Param == "" {
						t.Errorf("error blames no parameter: %v", err)
					}
					return
				}
				if size.Nodes < sane || size.Edges < sane {
					t.Errorf("estimated %d nodes, %d edges: wrapped", size.Nodes, size.Edges)
				}
			})
		}
	}
}

// estimate runs Prepare and Estimate as the host does, turning a panic
// into a test failure's message.
func estimate(c *sdk.Construction, vals map[string]any) (size sdk.Size, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("PANIC: %v", r)
			size = sdk.Size{}
		}
	}()
	pass, err := sdk.NewPass(context.Background(), c, vals)
	if err != nil {
		return sdk.Size{}, err
	}
	return c.Estimate(context.Background(), pass)
}
