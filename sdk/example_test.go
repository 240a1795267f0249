package sdk_test

import (
	"context"
	"fmt"

	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/circuit"
)

// parity is a construction plugin: the parity of n input bits. Prepare
// resolves and checks the parameters once per call (the host runs it for
// every point before the first point runs); the other funcs read what it
// returned from Pass.Prepared.
var parity = &sdk.Construction{
	Name:    "parity",
	Version: "1.0.0",
	Doc:     "parity of n bits",
	Params: []sdk.Param{
		{Name: "n", Type: sdk.Int, Default: 8, Min: sdk.Bound(1), Doc: "number of input bits"},
	},
	Prepare: func(_ context.Context, pass *sdk.Pass) (any, error) {
		n := pass.Params.Int("n")
		if n%2 == 0 && n > 64 {
			return nil, pass.Params.Errorf("n", "an even n above 64 is not supported, got %d", n)
		}
		return n, nil
	},
	Build: func(ctx context.Context, pass *sdk.Pass) (*circuit.Circuit, error) {
		n := pass.Prepared.(int)
		pass.Log.Debug().Int("n", n).Msg("building parity")
		b := circuit.NewBuilder()
		b.Output("digest", []circuit.Node{b.Xor(b.Input("msg", n)...)})
		return b.Circuit(), nil
	},
	Reference: func(ctx context.Context, pass *sdk.Pass, inputs []bitvec.Vec) ([]bitvec.Vec, error) {
		n := pass.Prepared.(int)
		out := make([]bitvec.Vec, len(inputs))
		for k, v := range inputs {
			var x uint
			for i := range n {
				x ^= v.Get(i)
			}
			out[k] = bitvec.NewVec(1)
			out[k].Set(0, x)
		}
		return out, nil
	},
}

// A construction plugin is one value; Validate checks its declaration (the
// host and serve.Main run it), and its main is one line:
//
//	func main() { serve.Main(parity) }
func Example() {
	fmt.Println(sdk.Validate(parity))
	// Output:
	// <nil>
}

// NewPass is what the host does before every call, and what a plugin's
// own tests do.
func ExampleNewPass() {
	ctx := context.Background()
	pass, err := sdk.NewPass(ctx, parity, map[string]any{"n": 3})
	if err != nil {
		panic(err)
	}
	c, _ := parity.Build(ctx, pass)
	fmt.Println(len(c.Inputs), len(c.Outputs))
	_, err = sdk.NewPass(ctx, parity, map[string]any{"n": 100})
	fmt.Println(err)
	// Output:
	// 3 1
	// parameter "n": an even n above 64 is not supported, got 100
}

// Validate reports every mistake in a declaration; serve.Main and the host run it.
func ExampleValidate() {
	bad := &sdk.Layerer{
		Name: "bad",
		Doc:  "a layerer declared wrongly",
		Params: []sdk.Param{
			{Name: "k", Type: sdk.Int, Default: int32(8), Doc: "an int32 default"},
			{Name: "mode", Type: sdk.Int, Enum: []string{"a"}, Doc: "an Enum on an Int"},
			{Name: "mode", Type: sdk.String, Doc: "declared twice"},
		},
	}
	fmt.Println(sdk.Validate(bad))
	// Output:
	// plugin "bad": a layerer needs Layer
	// plugin "bad": no Prepare: every plugin resolves and checks its parameters before it is called
	// plugin "bad": parameter "k": Default 8 (int32) is not a int value
	// plugin "bad": parameter "mode": Enum applies to String parameters only, not int
	// plugin "bad": parameter "mode" declared twice
}
