package circuit_test

import (
	"fmt"

	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/circuit"
)

// A step in the style of MD5 and SHA-1: read big-endian words from message
// bits, choose with Ch, add it (Sum adds Ch's two disjoint terms as words of
// their own), rotate left and write the word back as bits.
func ExampleBuilder_Sum() {
	b := circuit.NewBuilder()
	m := b.BigEndianWords(b.Input("msg", 96), 32) // x, y, z
	x, y, z := m[0], m[1], m[2]
	t := b.Sum(x, b.Ch(x, y, z), b.ConstWord(0x5a827999, 32))
	b.Output("digest", circuit.BigEndianBits([]circuit.Word{circuit.RotL(t, 5)}))
	c := b.Circuit()

	in := bitvec.FromBigEndianWords([]uint64{0x01234567, 0x89abcdef, 0xfedcba98}, 32)
	out, _ := bitvec.EvalSliced([]bitvec.Vec{in}, 96, c.Eval)
	fmt.Printf("%#x\n", out[0].BigEndianWords(1, 32)[0])
	x0, y0, z0 := uint32(0x01234567), uint32(0x89abcdef), uint32(0xfedcba98)
	sum := x0 + (x0&y0 | ^x0&z0) + 0x5a827999
	fmt.Printf("%#x\n", sum<<5|sum>>27)
	// Output:
	// 0x74b7dfeb
	// 0x74b7dfeb
}

// Word bit i has weight 2^i; RotL moves bits away from bit 0 and RotR
// toward it, by any amount (negative: the other way).
func ExampleRotL() {
	b := circuit.NewBuilder()
	w := circuit.Word(b.Input("w", 8)) // w[0] is the least significant bit
	fmt.Println(circuit.RotL(w, 1)[1] == w[0], circuit.RotR(w, 1)[0] == w[1], circuit.RotL(w, -3)[0] == circuit.RotR(w, 3)[0], circuit.RotL(w, 9)[1] == w[0])
	// Output: true true true true
}
