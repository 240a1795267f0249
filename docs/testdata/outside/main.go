// Command tcforge-plugin-parity is a construction plugin written outside
// the tcforge module, against its SDK only: the parity and the AND of n
// input bits. docs/plugins.md, "Out-of-tree modules", says how to build
// and run it; go test ./docs (TestOutsideModule) does.
package main

import (
	"context"

	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/serve"
)

// Plugin is the parity construction: output bit 0 is x_0 ⊕ … ⊕ x_{n-1},
// bit 1 is x_0 ∧ … ∧ x_{n-1}.
var Plugin = &sdk.Construction{
	Name:    "parity",
	Version: "0.1.0",
	Doc:     "The parity and the AND of n input bits (an out-of-tree example).",
	Params: []sdk.Param{
		{Name: "n", Type: sdk.Int, Default: 8, Min: sdk.Bound(2), Max: sdk.Bound(4096), Doc: "input bits"},
	},
	Prepare:   func(_ context.Context, pass *sdk.Pass) (any, error) { return pass.Params.Int("n"), nil },
	Build:     build,
	Reference: reference,
}

// build is the circuit: one XOR and one AND of all inputs.
func build(_ context.Context, pass *sdk.Pass) (*circuit.Circuit, error) {
	n := pass.Prepared.(int)
	b := circuit.NewBuilder()
	x := b.Input("x", n)
	b.Output("out", []circuit.Node{b.Xor(x...), b.And(x...)})
	return b.Circuit(), nil
}

// reference computes the two bits without the circuit.
func reference(ctx context.Context, pass *sdk.Pass, inputs []bitvec.Vec) ([]bitvec.Vec, error) {
	n := pass.Prepared.(int)
	return sdk.EachInput(ctx, inputs, func(in bitvec.Vec) (bitvec.Vec, error) {
		parity, all := uint(0), uint(1)
		for i := range n {
			parity ^= in.Get(i)
			all &= in.Get(i)
		}
		out := bitvec.NewVec(2)
		out.Set(0, parity)
		out.Set(1, all)
		return out, nil
	})
}

func main() { serve.Main(Plugin) }
