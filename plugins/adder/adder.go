// Package adder is the example construction plugin: an n-bit ripple-carry
// adder. It is deliberately small — one file a plugin author can read top
// to bottom — and it is not bundled into tcforge: build it with
//
//	go build -o ~/.tcforge/plugins/tcforge-plugin-adder ./plugins/adder/cmd/tcforge-plugin-adder
//
// and the host finds it on its plugin path (see README "Writing a plugin").
package adder

import (
	"context"
	"math/big"
	"strconv"

	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/circuit"
)

// Plugin is the adder construction: digest = (x + y) mod 2^n, plus the
// carry out as bit n when carry_out is set.
var Plugin = &sdk.Construction{
	Name:    "adder",
	Version: "1.0.0",
	Doc:     "n-bit ripple-carry adder (the example plugin): inputs x and y, output x + y.",
	Params: []sdk.Param{
		{Name: "n", Type: sdk.Int, Default: 8, Min: sdk.Bound(1), Max: sdk.Bound(4096), Doc: "operand width in bits"},
		{Name: "carry_out", Type: sdk.Bool, Default: true, Doc: "append the carry out as the last output bit"},
	},
	Prepare:   prepare,
	Build:     build,
	Reference: reference,
}

// config is the resolved parameters every call gets as Pass.Prepared.
type config struct {
	n, outBits int
	carryOut   bool
}

// prepare resolves the parameters (the schema's bounds already hold n to
// 1..4096, so there is nothing more to check).
func prepare(_ context.Context, pass *sdk.Pass) (any, error) {
	cfg := config{n: pass.Params.Int("n"), carryOut: pass.Params.Bool("carry_out")}
	cfg.outBits = cfg.n
	if cfg.carryOut {
		cfg.outBits++
	}
	return cfg, nil
}

// build returns the circuit: inputs "x" (bits 0..n-1, least significant
// first) and "y" (bits n..2n-1); output "sum". Every node is hinted with
// its bit index (the carry out of bit i with i).
func build(ctx context.Context, pass *sdk.Pass) (*circuit.Circuit, error) {
	cfg := pass.Prepared.(config)
	n := cfg.n
	b := circuit.NewBuilder()
	x := b.Input("x", n)
	y := b.Input("y", n)
	for i := range n {
		b.SetPos(x[i], i)
		b.SetPos(y[i], i)
	}
	sum := make([]circuit.Node, 0, n+1)
	var carry circuit.Node
	for i := range n {
		b.Scope(bitScope(i), func() {
			b.At(i, func() {
				if i == 0 {
					// Half adder.
					sum = append(sum, b.Xor(x[i], y[i]))
					carry = b.And(x[i], y[i])
					return
				}
				sum = append(sum, b.Xor(x[i], y[i], carry))
				// carry = majority(x, y, carry): one threshold gate.
				carry = b.Threshold(2, []circuit.Node{x[i], y[i], carry}, []int32{1, 1, 1})
			})
		})
	}
	if cfg.carryOut {
		sum = append(sum, carry)
	}
	b.Output("sum", sum)
	b.SetAttr("n", int64(n))
	return b.Circuit(), nil
}

// reference adds the operands as big integers: no circuit involved.
func reference(ctx context.Context, pass *sdk.Pass, inputs []bitvec.Vec) ([]bitvec.Vec, error) {
	cfg := pass.Prepared.(config)
	n, outBits := cfg.n, cfg.outBits
	return sdk.EachInput(ctx, inputs, func(in bitvec.Vec) (bitvec.Vec, error) {
		x, y := new(big.Int), new(big.Int)
		for i := range n {
			x.SetBit(x, i, in.Get(i))
			y.SetBit(y, i, in.Get(n+i))
		}
		s := x.Add(x, y)
		out := bitvec.NewVec(outBits)
		for i := range outBits {
			out.Set(i, s.Bit(i))
		}
		return out, nil
	})
}

func bitScope(i int) string { return "bit " + strconv.Itoa(i) }
