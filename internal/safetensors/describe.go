package safetensors

import "github.com/tcforge/tcforge/sdk/circuit"

// Describe says what the models of construction's logic circuit c
// compute, for their exported configs (docs/export.md, "computes"):
// params are the construction's resolved parameters and c's attributes;
// the caller fills in the layerer and mapper.
func Describe(construction string, params map[string]any, c *circuit.Circuit) *Computes {
	cp := &Computes{Construction: construction, Params: params}
	for _, r := range c.InputRanges {
		cp.Inputs = append(cp.Inputs, BitRange{Name: r.Name, Start: r.Start, Bits: r.Len})
	}
	for _, r := range c.OutputRanges {
		cp.Outputs = append(cp.Outputs, BitRange{Name: r.Name, Start: r.Start, Bits: r.Len})
	}
	cp.BitOrder, cp.Padding = bitLayout(construction, cp.Params)
	return cp
}

// bitLayout returns how the constructions tcforge ships map bytes to bits
// ("bits" for one it does not know: an external plugin's) and who pads the
// message: the caller when the circuit reads as many bits as it absorbs
// (attributes message_bits = padded_bits; padding adds at least two bits),
// the model otherwise, "none" for SHA-2's bare compression; SHA-2's block
// mode reads one block the caller padded.
func bitLayout(construction string, params map[string]any) (order, padding string) {
	order = map[string]string{"keccak": "lsb-first", "sha2": "msb-first", "ascon": "msb-first", "blake2s": "msb-first"}[construction]
	if order == "" {
		order = "bits"
	}
	msg, ok1 := params["message_bits"].(int64)
	padded, ok2 := params["padded_bits"].(int64)
	switch {
	case construction == "sha2" && params["mode"] == "compress":
		padding = "none"
	case construction == "sha2" && params["mode"] == "block":
		padding = "caller"
	case construction == "sha2":
		padding = "model"
	case ok1 && ok2 && msg == padded:
		padding = "caller"
	case ok1 && ok2:
		padding = "model"
	}
	return order, padding
}
