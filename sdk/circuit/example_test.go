package circuit_test

import (
	"fmt"

	"github.com/tcforge/tcforge/sdk/circuit"
)

// A full adder: the sum is the parity of the three inputs (one n-ary XOR)
// and the carry their majority (one threshold gate). Eval runs 64
// assignments at once, one per bit lane; here lane l holds assignment l.
func Example() {
	b := circuit.NewBuilder()
	in := b.Input("abc", 3)
	var sum, carry circuit.Node
	b.Scope("adder", func() {
		sum = b.Xor(in...)
		carry = b.Threshold(2, in, []int32{1, 1, 1})
	})
	b.Output("sum", []circuit.Node{sum})
	b.Output("carry", []circuit.Node{carry})
	c := b.Circuit()
	if err := c.Validate(); err != nil {
		panic(err)
	}

	// Input bit i of lane l is bit i of l: lanes 0..7 enumerate all inputs.
	words := make([]uint64, 3)
	for i := range words {
		for l := 0; l < 8; l++ {
			words[i] |= uint64(l>>i&1) << l
		}
	}
	out, err := c.Eval(words)
	if err != nil {
		panic(err)
	}
	fmt.Println("a b c | sum carry")
	for l := 0; l < 8; l++ {
		fmt.Printf("%d %d %d |  %d    %d\n", l&1, l>>1&1, l>>2&1, out[0]>>l&1, out[1]>>l&1)
	}
	fmt.Printf("sum is node %d, %s, tagged %q\n", sum, c.Ops[sum], c.Tags[c.Tag[sum]])
	// Output:
	// a b c | sum carry
	// 0 0 0 |  0    0
	// 1 0 0 |  1    0
	// 0 1 0 |  1    0
	// 1 1 0 |  0    1
	// 0 0 1 |  1    0
	// 1 0 1 |  0    1
	// 0 1 1 |  0    1
	// 1 1 1 |  1    1
	// sum is node 3, XOR, tagged "adder"
}

// Stats counts nodes by op and measures the logic depth: the longest path
// of ops from an input (inputs and constants are at depth 0).
func ExampleCircuit_Stats() {
	b := circuit.NewBuilder()
	x := b.Input("x", 4)
	// χ of Keccak on one bit: x0 ⊕ (¬x1 ∧ x2).
	chi := b.Xor(x[0], b.AndNot(x[1], x[2]))
	b.Output("y", []circuit.Node{chi, b.Not(x[3])})
	s := b.Circuit().Stats()
	fmt.Println("nodes", s.Nodes, "edges", s.Edges, "depth", s.Depth)
	for op := circuit.OpInput; op <= circuit.OpThreshold; op++ {
		if s.ByOp[op] > 0 {
			fmt.Println(op, s.ByOp[op])
		}
	}
	// Output:
	// nodes 7 edges 5 depth 2
	// INPUT 4
	// NOT 1
	// XOR 1
	// ANDNOT 1
}

// A circuit crosses process boundaries in its compact binary form;
// decoding validates it.
func ExampleCircuit_MarshalBinary() {
	b := circuit.NewBuilder()
	x := b.Input("x", 2)
	b.Output("y", []circuit.Node{b.And(x...)})
	b.SetAttr("arity", 2)
	data, err := b.Circuit().MarshalBinary()
	if err != nil {
		panic(err)
	}
	var c circuit.Circuit
	if err := c.UnmarshalBinary(data); err != nil {
		panic(err)
	}
	fmt.Println(c.NumNodes(), "nodes,", c.OutputRanges[0].Name, "has", c.OutputRanges[0].Len, "bit, arity", c.Attrs["arity"])
	err = c.UnmarshalBinary(data[:len(data)-1])
	fmt.Println(err)
	// Output:
	// 3 nodes, y has 1 bit, arity 2
	// decoding logic circuit: binenc: truncated data
}

// Position hints say which position of a construction each value belongs
// to, for a mapper that spreads values over tokens: here a 3-bit ripple
// adder hints every node with its bit index. Inputs made in one call get
// their hints with SetPos; nodes built inside At get At's.
func ExampleBuilder_At() {
	b := circuit.NewBuilder()
	x, y := b.Input("x", 3), b.Input("y", 3)
	var sum []circuit.Node
	var carry circuit.Node = -1
	for i := range 3 {
		b.SetPos(x[i], i)
		b.SetPos(y[i], i)
		b.At(i, func() {
			if carry < 0 {
				sum = append(sum, b.Xor(x[i], y[i]))
				carry = b.And(x[i], y[i])
				return
			}
			sum = append(sum, b.Xor(x[i], y[i], carry))
			carry = b.Threshold(2, []circuit.Node{x[i], y[i], carry}, []int32{1, 1, 1})
		})
	}
	b.Output("sum", sum)
	c := b.Circuit()
	for i, op := range c.Ops {
		fmt.Printf("node %d %-9s at %d\n", i, op, c.Pos[i])
	}
	// Output:
	// node 0 INPUT     at 0
	// node 1 INPUT     at 1
	// node 2 INPUT     at 2
	// node 3 INPUT     at 0
	// node 4 INPUT     at 1
	// node 5 INPUT     at 2
	// node 6 XOR       at 0
	// node 7 AND       at 0
	// node 8 XOR       at 1
	// node 9 THRESHOLD at 1
	// node 10 XOR       at 2
	// node 11 THRESHOLD at 2
}
