package sdk_test

import (
	"context"

	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/circuit"
)

// A construction plugin is one value and one line of main. This one
// computes the parity of n input bits; the host decodes "n" from the
// plugin's HCL block against the declared schema.
func Example() {
	parity := &sdk.Construction{
		Name:    "parity",
		Version: "1.0.0",
		Doc:     "parity of n bits",
		Params: []sdk.Param{
			{Name: "n", Type: sdk.Int, Default: 8, Min: sdk.Bound(1), Doc: "number of input bits"},
		},
		Build: func(ctx context.Context, p sdk.Params) (*circuit.Circuit, error) {
			sdk.Logger(ctx).Debug().Int("n", p.Int("n")).Msg("building parity")
			b := circuit.NewBuilder()
			in := b.Input("msg", p.Int("n"))
			b.Output("digest", []circuit.Node{b.Xor(in...)})
			return b.Circuit(), nil
		},
		Reference: func(ctx context.Context, p sdk.Params, inputs []bitvec.Vec) ([]bitvec.Vec, error) {
			out := make([]bitvec.Vec, len(inputs))
			for k, v := range inputs {
				var x uint
				for i := range p.Int("n") {
					x ^= v.Get(i)
				}
				out[k] = bitvec.NewVec(1)
				out[k].Set(0, x)
			}
			return out, nil
		},
	}

	// The plugin's main: serve until the host is done with it.
	sdk.Serve(parity)
}
