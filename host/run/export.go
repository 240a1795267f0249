package run

import (
	"math/big"

	"github.com/zclconf/go-cty/cty"

	"github.com/tcforge/tcforge/internal/safetensors"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/circuit"
)

// computes describes what the models of one point's logic circuit c
// compute, for their exported configs (docs/export.md, "computes"); the
// layerer and mapper are filled in per model.
func computes(name string, scope map[string]cty.Value, c *circuit.Circuit) *safetensors.Computes {
	cp := &safetensors.Computes{Construction: name, Params: plainValues(scope)}
	for _, r := range c.InputRanges {
		cp.Inputs = append(cp.Inputs, safetensors.BitRange{Name: r.Name, Start: r.Start, Bits: r.Len})
	}
	for _, r := range c.OutputRanges {
		cp.Outputs = append(cp.Outputs, safetensors.BitRange{Name: r.Name, Start: r.Start, Bits: r.Len})
	}
	cp.BitOrder, cp.Padding = bitLayout(name, cp.Params)
	return cp
}

// bitLayout returns how the constructions tcforge ships map bytes to bits
// ("bits" for one it does not know: an external plugin's) and who pads the
// message: the caller when the circuit reads as many bits as it absorbs
// (attributes message_bits = padded_bits; padding adds at least two bits),
// the model otherwise, "none" for SHA-2's bare compression.
func bitLayout(construction string, params map[string]any) (order, padding string) {
	order = map[string]string{"keccak": "lsb-first", "sha2": "msb-first"}[construction]
	if order == "" {
		order = "bits"
	}
	msg, ok1 := params["message_bits"].(int64)
	padded, ok2 := params["padded_bits"].(int64)
	switch {
	case construction == "sha2" && params["mode"] == "compress":
		padding = "none"
	case construction == "sha2":
		padding = "model"
	case ok1 && ok2 && msg == padded:
		padding = "caller"
	case ok1 && ok2:
		padding = "model"
	}
	return order, padding
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
