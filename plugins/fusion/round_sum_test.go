package fusion_test

import (
	"context"
	"testing"

	"github.com/tcforge/tcforge/plugins/fusion"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
)

// TestRoundSumOperands compiles, with the round objective, tiny circuits
// whose SUMBIT nodes read parities of inputs, and checks them on every
// input. A parity read by a SUMBIT is not read only by parities: bit k of
// a weighted sum needs its operands' exact bits (a parity realised as the
// integer sum a + b of its operands is 2, not 0, when both are 1), and the
// sum's switch points assume operands in [0, 1].
func TestRoundSumOperands(t *testing.T) {
	for _, tt := range []struct {
		name  string
		build func(b *circuit.Builder, x []circuit.Node) []circuit.Node
	}{
		{"bit0(a⊕b)", func(b *circuit.Builder, x []circuit.Node) []circuit.Node {
			return []circuit.Node{b.SumBit(0, []circuit.Node{b.Xor(x[0], x[1])}, []int32{0})}
		}},
		{"bit1((a⊕b)+(c⊕d))", func(b *circuit.Builder, x []circuit.Node) []circuit.Node {
			return []circuit.Node{b.SumBit(1, []circuit.Node{b.Xor(x[0], x[1]), b.Xor(x[2], x[3])}, []int32{0, 0})}
		}},
		{"bit1(2(a⊕b)+c)", func(b *circuit.Builder, x []circuit.Node) []circuit.Node {
			return []circuit.Node{b.SumBit(1, []circuit.Node{b.Xor(x[0], x[1]), x[2]}, []int32{1, 0})}
		}},
		{"bit1(¬(a⊕b⊕c)+d), also a parity", func(b *circuit.Builder, x []circuit.Node) []circuit.Node {
			p := b.Xor(x[0], x[1], x[2])
			return []circuit.Node{b.SumBit(1, []circuit.Node{b.Not(p), x[3]}, []int32{0, 0}), b.Xor(p, x[3])}
		}},
		{"2-bit add of Σ words", func(b *circuit.Builder, x []circuit.Node) []circuit.Node {
			s := []circuit.Node{b.Xor(x[0], x[1], x[2]), b.Xor(x[1], x[3])}
			return b.Add(s, []circuit.Node{x[2], b.Xor(x[0], x[3])})
		}},
	} {
		b := circuit.NewBuilder()
		x := b.Input("x", 4)
		b.Output("y", tt.build(b, x))
		c := b.Circuit()
		l, err := fusion.Compile(context.Background(), c, fusion.Options{Objective: fusion.Round})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if err := l.Validate(); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		in := make([]uint64, 4)
		for lane := 0; lane < 16; lane++ {
			for i := range in {
				in[i] |= uint64(lane>>i&1) << lane
			}
		}
		t.Run(tt.name, func(t *testing.T) {
			equalOn(t, c, in, map[string]*layered.Circuit{"round": l})
		})
	}
}
