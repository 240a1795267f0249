package noattention_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tcforge/tcforge/plugins/fusion"
	"github.com/tcforge/tcforge/plugins/keccak"
	"github.com/tcforge/tcforge/plugins/noattention"
	"github.com/tcforge/tcforge/plugins/sha2"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// TestResidualSHA256Sums maps reduced-round SHA-256 layered by fusion with
// 8-bit addition chunks (max_weight 2^16): its forms hold sums of bits with
// weights up to 2^15, so the residual stream carries values far above the
// 0/1 bits of SHA-3. Both variants must compute the layered circuit
// exactly in float32, every readout ½ from its threshold (up to float32's
// rounding of the RMSNorm scale).
func TestResidualSHA256Sums(t *testing.T) {
	for _, rounds := range []int64{2, 6} {
		c, err := sha2.Plugin.Build(context.Background(), sdktest.Pass(t, sha2.Plugin, map[string]any{"preset": "sha256", "rounds": rounds}))
		if err != nil {
			t.Fatal(err)
		}
		l, err := fusion.Compile(context.Background(), c, fusion.Options{MaxSum: 1 << 16})
		if err != nil {
			t.Fatal(err)
		}
		in := bitvec.Random(rand.New(rand.NewPCG(3, uint64(rounds))), 64, len(c.Inputs))
		for _, variant := range []string{"mlp", "residual"} {
			mc := sdktest.CheckMapper(t, noattention.Plugin, map[string]any{"variant": variant}, l, sdktest.ModelOptions{In: in, MinMargin: 0.49})
			t.Logf("rounds %d, %s: depth %d, d_model %d, anchor %d, min margin %v", rounds, variant, l.Depth(), mc.Model.DModel, mc.Model.Attrs["anchor"], mc.MinMargin)
		}
	}
}

// TestResidualRefusesWideSums checks that the residual variant refuses, up
// front and with its reason, SHA-256 layered with the default 16-bit
// addition chunks (pre-activations near 2^20: κ times them is beyond what
// float32 keeps exact), while the mlp variant maps it.
func TestResidualRefusesWideSums(t *testing.T) {
	c, err := sha2.Plugin.Build(context.Background(), sdktest.Pass(t, sha2.Plugin, map[string]any{"preset": "sha256", "rounds": int64(2)}))
	if err != nil {
		t.Fatal(err)
	}
	l, err := fusion.Compile(context.Background(), c, fusion.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := noattention.MLP(context.Background(), l); err != nil {
		t.Errorf("mlp: %v", err)
	}
	_, err = noattention.Residual(context.Background(), l)
	if err == nil || !strings.Contains(err.Error(), "exceeds 2^26") || strings.Contains(err.Error(), "\n") {
		t.Errorf("residual: error %v, want a one-line refusal naming the 2^26 bound", err)
	}
}

// TestMLPExactInFloat64 runs the mlp models of full SHA3-256 and SHA-256
// (fusion; SHA-256 at max_weight 2^16 and 2^22) in float32 and float64:
// both passes must give every output bit of the layered circuit with the
// margin ½ exactly (at κ = 128 and a pass-through gate of 32, float64
// SiLU's residues gave 996 wrong bits of 2,048 on SHA3-256).
func TestMLPExactInFloat64(t *testing.T) {
	for _, tc := range []struct {
		name   string
		plugin *sdk.Construction
		values map[string]any
		opts   fusion.Options
	}{
		{"sha3-256", keccak.Plugin, map[string]any{"preset": "sha3-256"}, fusion.Options{}},
		{"sha256 max_weight 2^16", sha2.Plugin, map[string]any{"preset": "sha256"}, fusion.Options{MaxSum: 1 << 16}},
		{"sha256 max_weight 2^22", sha2.Plugin, map[string]any{"preset": "sha256"}, fusion.Options{MaxSum: 1 << 22}},
	} {
		if testing.Short() && tc.plugin == sha2.Plugin {
			continue // -short: SHA3-256 only (SHA-256's two models take seconds each)
		}
		c := sdktest.Build(t, tc.plugin, tc.values)
		l, err := fusion.Compile(context.Background(), c, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		m, err := noattention.MLP(context.Background(), l)
		if err != nil {
			t.Fatal(err)
		}
		in := bitvec.Random(rand.New(rand.NewPCG(1, 2)), 8, l.NumInputs)
		mc := sdktest.CheckModel(t, m, l, sdktest.ModelOptions{In: in, ExactIn: "fp64 fp32", MinMargin: 0.5})
		if res := sdktest.Forward(t, m, in, sdktest.PassOptions{Float64: true}); res.MinMargin != 0.5 || mc.MinMargin != 0.5 {
			t.Errorf("%s: min margin %v in float32, %v in float64; want exactly 0.5", tc.name, mc.MinMargin, res.MinMargin)
		}
	}
}
