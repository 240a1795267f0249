package forward_test

import (
	"context"
	"math"
	"testing"

	"github.com/tcforge/tcforge/internal/forward"
	"github.com/tcforge/tcforge/internal/point"
	"github.com/tcforge/tcforge/plugins/keccak"
	"github.com/tcforge/tcforge/plugins/reifier"
	"github.com/tcforge/tcforge/plugins/tokensasgates"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/model"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// reifierKeccak is the reifier-layered circuit of a keccak point.
func reifierKeccak(t testing.TB, values map[string]any) *layered.Circuit {
	t.Helper()
	l, err := reifier.Compile(context.Background(), sdktest.Build(t, keccak.Plugin, values))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestBetaProbe checks the one-pass β bound of softmax tokens-as-gates
// models: the probed pass at the model's β reports a bound below it, the
// weights are exact at the bound, and a pass a little below the bound is
// either wrong or reported unsaturated.
func TestBetaProbe(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    *layered.Circuit
	}{
		{"three gates", sdktest.ThreeGates()},
		{"keccak-f[50] 1 round", reifierKeccak(t, map[string]any{"log_w": 1, "rate": 25, "rounds": 1, "blocks": 1, "padding": "none"})},
		{"keccak-f[100] 2 rounds, 2 blocks", reifierKeccak(t, map[string]any{"log_w": 2, "rate": 50, "rounds": 2, "blocks": 2, "padding": "none"})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := tokensasgates.Map(context.Background(), tc.c, tokensasgates.Options{Mode: model.Softmax})
			if err != nil {
				t.Fatal(err)
			}
			beta, _ := m.SoftmaxBeta()
			in := point.Samples(1, 64, tc.c.NumInputs)
			want, err := bitvec.EvalSliced(in, tc.c.NumInputs, tc.c.Eval)
			if err != nil {
				t.Fatal(err)
			}
			prog, err := forward.Compile(m)
			if err != nil {
				t.Fatal(err)
			}
			exact := func(b float64, probe bool) (*forward.Result, bool) {
				res, err := prog.Run(in, forward.Options{Beta: b, ProbeBeta: probe})
				if err != nil {
					t.Fatal(err)
				}
				return res, point.FirstMismatch("", res.Outputs, want, tc.c.NumOutputs()) == nil
			}
			res, ok := exact(0, true)
			if !ok {
				t.Fatal("not exact at the model's β")
			}
			bb := res.Beta
			if bb == nil || !bb.Supported || !bb.Saturated {
				t.Fatalf("probe at β = %v: %+v", beta, bb)
			}
			if !(bb.Min > 0 && bb.Min < beta) {
				t.Fatalf("bound %v not in (0, %v)", bb.Min, beta)
			}
			t.Logf("β = %.4f, bound %.4f (T = %d)", beta, bb.Min, m.Tokens)
			at, ok := exact(bb.Min*(1+1e-6), true)
			if !ok {
				t.Errorf("not exact at the bound %v", bb.Min)
			}
			// The same stream in exact arithmetic; float32 rounds κy ± A
			// differently at another β.
			if math.Abs(at.MinMargin-res.MinMargin) > 1e-5 {
				t.Errorf("min margin %v at the bound, %v at β", at.MinMargin, res.MinMargin)
			}
			below, ok := exact(bb.Min-0.01, true)
			if ok && below.Beta.Saturated {
				t.Errorf("at β = %v (below the bound %v) exact and reported saturated", bb.Min-0.01, bb.Min)
			}
		})
	}
}

// TestBetaProbeHard: a hard-attention model has no β to bound.
func TestBetaProbeHard(t *testing.T) {
	m, err := tokensasgates.Map(context.Background(), sdktest.ThreeGates(), tokensasgates.Options{Mode: model.Hard})
	if err != nil {
		t.Fatal(err)
	}
	in := point.Samples(1, 8, 2)
	res, err := forward.Forward(m, in, forward.Options{ProbeBeta: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Beta == nil || !res.Beta.Supported || res.Beta.Min != 0 {
		t.Errorf("hard attention: bound %+v, want supported with β 0", res.Beta)
	}
}
