package layered_test

import (
	"fmt"

	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
)

// XOR is not a threshold function, but it is two levels of them:
// a ⊕ b = [a∨b − a∧b ≥ 1] with a∨b = [a+b ≥ 1] and a∧b = [a+b ≥ 2]. Level
// 1 reads the inputs; level 2 reads level 1 by index within that level.
func Example() {
	b := layered.NewBuilder(2, []circuit.Range{{Name: "ab", Start: 0, Len: 2}})
	tag := b.Tag("xor")
	b.Gate(layered.KindGate, 1, []int32{0, 1}, []int32{1, 1}, tag) // a∨b
	b.Gate(layered.KindGate, 2, []int32{0, 1}, []int32{1, 1}, tag) // a∧b
	b.Level()
	b.Gate(layered.KindGate, 1, []int32{0, 1}, []int32{1, -1}, tag) // a∨b − a∧b ≥ 1
	b.Level()
	c := b.Circuit([]circuit.Range{{Name: "xor", Start: 0, Len: 1}})
	if err := c.Validate(); err != nil {
		panic(err)
	}

	// Lanes 0..3 of the input words hold (a, b) = (0,0), (1,0), (0,1), (1,1).
	out, err := c.Eval([]uint64{0b1010, 0b1100})
	if err != nil {
		panic(err)
	}
	fmt.Printf("a⊕b over the 4 lanes: %04b\n", out[0]&0xf)
	// Output:
	// a⊕b over the 4 lanes: 0110
}

// Stats reports the paper's figures: depth counts gate levels only (not
// the inputs), width is the widest gate level, copies included.
func ExampleCircuit_Stats() {
	b := layered.NewBuilder(3, nil)
	tag := b.Tag("")
	// Level 1: majority of the three inputs, and a copy of input 2.
	b.Gate(layered.KindGate, 2, []int32{0, 1, 2}, []int32{1, 1, 1}, tag)
	b.Copy(2, tag)
	b.Level()
	// Level 2: majority ∧ ¬x2.
	b.Gate(layered.KindGate, 1, []int32{0, 1}, []int32{1, -1}, tag)
	b.Level()
	s := b.Circuit(nil).Stats()
	fmt.Printf("depth %d, width %d, widths %v\n", s.Depth, s.Width, s.Widths)
	fmt.Printf("%d gates (%d copies), %d edges, max fan-in %d, max |weight| %d\n",
		s.Gates, s.Copies, s.Edges, s.MaxFanIn, s.MaxWeight)
	// Output:
	// depth 2, width 2, widths [2 1]
	// 3 gates (1 copies), 6 edges, max fan-in 3, max |weight| 1
}

// Position hints say where a value sits (see Circuit.Pos): here two
// independent bit positions 0 and 1, each computing the AND of its two
// inputs and copying one of them up. PosAt reads the hints a mapper
// would place values by (FormPosAt those of forms).
func ExampleBuilder_At() {
	b := layered.NewBuilder(4, nil) // inputs: x0 y0 x1 y1
	tag := b.Tag("and")
	for i := range 4 {
		b.SetInputPos(i, i/2)
	}
	for p := range 2 {
		b.At(p, func() {
			b.Gate(layered.KindGate, 2, []int32{int32(2 * p), int32(2*p + 1)}, []int32{1, 1}, tag)
			b.Copy(int32(2*p), tag)
		})
	}
	b.Level()
	c := b.Circuit(nil)
	if err := c.Validate(); err != nil {
		panic(err)
	}
	for L := 0; L <= c.Depth(); L++ {
		fmt.Printf("level %d:", L)
		for i := range c.LevelWidth(L) {
			fmt.Printf(" %d", c.PosAt(L, i))
		}
		fmt.Println()
	}
	// Output:
	// level 0: 0 0 1 1
	// level 1: 0 0 1 1
}
