// Package reifier is the Reifier-style layerer: it lowers each logic op to
// threshold gates the way the Reifier compiler does and layers them as soon
// as possible, carrying values across levels with copy gates. Its job is to
// reproduce the paper's tables exactly.
//
// Lowering (a gate fires iff Σ wᵢxᵢ ≥ θ):
//
//	NOT x            [−x ≥ 0]
//	AND x₁..xₙ       [Σx ≥ n]
//	OR x₁..xₙ        [Σx ≥ 1]          (one operand: an explicit register)
//	ANDNOT x₀,x₁..xₙ [−x₀ + Σx₁.. ≥ n]
//	XOR x₁..xₙ       counters cₖ = [Σx ≥ k], k = 1..n; then [c₁ − c₂ + c₃ − … ≥ 1]
//	SUMBIT k         counters cⱼ = [Σ 2^eᵢ·xᵢ ≥ j·2^k], j = 1..⌊Σ 2^eᵢ / 2^k⌋ (eᵢ ≤ k);
//	                 then [c₁ − c₂ + c₃ − … ≥ 1] (bit k of S flips at each j·2^k)
//	THRESHOLD        itself
//	CONST 1 / 0      a gate with no inputs and θ = 0 / θ = 1
//
// Layering: a gate sits one level above its latest input. A constant has no
// inputs, so it is placed one level below each level that reads it (a gate
// reading a constant sits at level 2 or above): a constant read at several
// levels is made again below each, never carried, so a construction need
// not make its constants again for a reader far above the first (an MD
// feed-forward reading the IV). Any other value needed later is carried by
// one copy gate per level in between; a final level holds copies of the
// outputs, in order.
package reifier

import (
	"context"
	"fmt"

	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
)

// Plugin is the reifier layerer.
var Plugin = &sdk.Layerer{
	Name:    "reifier",
	Version: "0.1.0",
	Doc:     "Reifier-style backend: the paper's lowering and as-soon-as-possible layering with copy gates; reproduces the paper's tables.",
	Params: []sdk.Param{
		{Name: "mode", Type: sdk.String, Default: "paper", Enum: []string{"paper", "current"},
			Doc: "\"paper\": the form behind the paper's tables (state level, two-level absorb, ι levels, output copies); \"current\": today's Reifier release (compile_keccak): constants in thresholds, NOT and copies free, output row with the last NOTs (see current.go); it has no modular additions (SUMBIT)"},
		MaxWeightParam(),
	},
	Prepare: func(_ context.Context, pass *sdk.Pass) (any, error) {
		return Config{Mode: pass.Params.String("mode"), MaxWeight: int64(pass.Params.Int(sdk.MaxWeightParam))}, nil
	},
	Layer: func(ctx context.Context, pass *sdk.Pass, c *circuit.Circuit) (*layered.Circuit, error) {
		cfg := pass.Prepared.(Config)
		if cfg.Mode == "current" {
			return CompileCurrent(ctx, c)
		}
		return CompileBounded(ctx, c, cfg.MaxWeight)
	},
}

// Config is the reifier's resolved parameters (its Prepare's result).
type Config struct {
	// Mode is "paper" (Compile) or "current" (CompileCurrent).
	Mode string
	// MaxWeight bounds the sums of modular additions (SUMBIT nodes) in
	// paper mode; see MaxWeightParam.
	MaxWeight int64
}

// MaxWeightParam is the layerers' bound on the sums of modular additions
// (SUMBIT nodes), shared by reifier and fusion.
func MaxWeightParam() sdk.Param {
	return sdk.Param{Name: sdk.MaxWeightParam, Type: sdk.Int, Default: int64(circuit.DefaultMaxSum), Min: sdk.Bound(2), Max: sdk.Bound(1 << 27),
		Doc: "bound on the weights and the reachable sum of the gates realising a modular addition (SUMBIT): wider additions are cut into chunks of b bits with carries (circuit.SplitSums), one more level per chunk; the default 2^22 keeps every pre-activation below 2^24, exact in float32; left unset under a mapper that needs less (tokens-as-states: 2^16), the mapper's bound"}
}

// tagTable interns the layered circuit's provenance tags in order of first
// use, as layered.Builder does.
type tagTable struct {
	names []string
	index map[string]int32
}

// intern returns the index of tag name, adding it if it is new.
func (t *tagTable) intern(name string) int32 {
	if i, ok := t.index[name]; ok {
		return i
	}
	i := int32(len(t.names))
	t.names = append(t.names, name)
	t.index[name] = i
	return i
}

// Compile lowers and layers c.
//
// It works on the logic ops directly rather than on a lowered gate graph:
// every op but an XOR lowers to one gate; an n-ary XOR lowers to n
// counters, which read the XOR's operands and so sit together one level
// below the XOR's parity gate. Compile first lays out every level (plan),
// then writes the gate arrays on two goroutines (emit).
func Compile(ctx context.Context, c *circuit.Circuit) (*layered.Circuit, error) {
	return CompileBounded(ctx, c, circuit.DefaultMaxSum)
}

// CompileBounded is Compile with additions (SUMBIT nodes) split so that
// no sum exceeds maxSum (see circuit.SplitSums): the counters of each
// chunk then have weights below maxSum and thresholds up to it.
func CompileBounded(ctx context.Context, c *circuit.Circuit, maxSum int64) (*layered.Circuit, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("reifier: invalid logic circuit: %w", err)
	}
	c, err := circuit.SplitSums(c, maxSum)
	if err != nil {
		return nil, fmt.Errorf("reifier: %w", err)
	}
	for i, op := range c.Ops {
		if op != circuit.OpSumBit {
			continue
		}
		var sum int64
		for _, e := range c.Weights[c.ArgStart[i]:c.ArgStart[i+1]] {
			if e <= c.Param[i] {
				sum += 1 << uint(e)
			}
		}
		if sum > 1<<30 {
			return nil, fmt.Errorf("reifier: node %d: SUMBIT sums to %d, more than int32 weights hold even after splitting", i, sum)
		}
	}
	s, err := plan(ctx, c)
	if err != nil {
		return nil, err
	}
	return s.emit(ctx)
}
