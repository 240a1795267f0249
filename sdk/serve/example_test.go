package serve_test

import (
	"context"

	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/serve"
)

// notPlugin is a construction: the NOT of one bit.
var notPlugin = &sdk.Construction{
	Name: "not",
	Doc:  "NOT of one bit",
	Prepare: func(context.Context, *sdk.Pass) (any, error) {
		return nil, nil
	},
	Build: func(context.Context, *sdk.Pass) (*circuit.Circuit, error) {
		b := circuit.NewBuilder()
		b.Output("digest", []circuit.Node{b.Not(b.Input("msg", 1)[0])})
		return b.Circuit(), nil
	},
	Reference: func(ctx context.Context, _ *sdk.Pass, inputs []bitvec.Vec) ([]bitvec.Vec, error) {
		return sdk.EachInput(ctx, inputs, func(in bitvec.Vec) (bitvec.Vec, error) {
			out := bitvec.NewVec(1)
			out.Set(0, 1^in.Get(0))
			return out, nil
		})
	},
}

// Main is the whole main of a plugin executable: it serves the plugin
// until the host is done with it.
func ExampleMain() {
	serve.Main(notPlugin)
}
