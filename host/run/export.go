package run

import (
	"math/big"

	"github.com/zclconf/go-cty/cty"

	"github.com/tcforge/tcforge/internal/safetensors"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/circuit"
)

// computes describes what the models of one point's logic circuit c
// compute (safetensors.Describe), from the construction's resolved
// parameters and attributes (scope).
func computes(name string, scope map[string]cty.Value, c *circuit.Circuit) *safetensors.Computes {
	return safetensors.Describe(name, plainValues(scope), c)
}

// blockParams returns a plugin block's resolved parameters at one point.
func blockParams(schema []sdk.Param, pass *sdk.Pass) map[string]any {
	if pass == nil {
		return nil
	}
	return plainValues(constructionScope(schema, pass.Params, nil))
}

// plainValues converts cty numbers, strings and bools to int64, float64,
// string and bool.
func plainValues(vs map[string]cty.Value) map[string]any {
	out := make(map[string]any, len(vs))
	for k, v := range vs {
		if v.IsNull() || !v.IsKnown() {
			continue
		}
		switch v.Type() {
		case cty.Number:
			bf := v.AsBigFloat()
			if i, acc := bf.Int64(); acc == big.Exact {
				out[k] = i
			} else {
				f, _ := bf.Float64()
				out[k] = f
			}
		case cty.String:
			out[k] = v.AsString()
		case cty.Bool:
			out[k] = v.True()
		}
	}
	return out
}
