package circuit_test

import (
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/circuit"
)

// evalWords evaluates a circuit whose inputs are three 32-bit words x, y,
// z (bit i of word k is input 32k+i) on random lanes and returns, per
// lane, the inputs and the 32-bit output word.
func evalWords(t *testing.T, c *circuit.Circuit, rng *rand.Rand) (in [][3]uint32, out []uint32) {
	t.Helper()
	vecs := make([]bitvec.Vec, 64)
	in = make([][3]uint32, 64)
	for l := range vecs {
		vecs[l] = bitvec.NewVec(96)
		for k := range 3 {
			in[l][k] = rng.Uint32()
			for i := range 32 {
				vecs[l].Set(32*k+i, uint(in[l][k]>>i))
			}
		}
	}
	res, err := bitvec.EvalSliced(vecs, 96, c.Eval)
	if err != nil {
		t.Fatal(err)
	}
	out = make([]uint32, 64)
	for l := range res {
		for i := range 32 {
			out[l] |= uint32(res[l].Get(i)) << i
		}
	}
	return in, out
}

// TestHashWordOps checks every word helper a hash author uses against
// uint32 arithmetic: rotations both ways by any amount (negative and past
// the width too), the bitwise words, Ch, Mux and Maj, and Sum with Terms.
func TestHashWordOps(t *testing.T) {
	rng := rand.New(rand.NewPCG(24, 5))
	for _, tc := range []struct {
		name  string
		build func(b *circuit.Builder, x, y, z circuit.Word) circuit.Word
		want  func(x, y, z uint32) uint32
	}{
		{"RotL 7", func(_ *circuit.Builder, x, _, _ circuit.Word) circuit.Word { return circuit.RotL(x, 7) },
			func(x, _, _ uint32) uint32 { return bits.RotateLeft32(x, 7) }},
		{"RotL -5", func(_ *circuit.Builder, x, _, _ circuit.Word) circuit.Word { return circuit.RotL(x, -5) },
			func(x, _, _ uint32) uint32 { return bits.RotateLeft32(x, -5) }},
		{"RotR 39", func(_ *circuit.Builder, x, _, _ circuit.Word) circuit.Word { return circuit.RotR(x, 39) },
			func(x, _, _ uint32) uint32 { return bits.RotateLeft32(x, -39) }},
		{"RotR -64", func(_ *circuit.Builder, x, _, _ circuit.Word) circuit.Word { return circuit.RotR(x, -64) },
			func(x, _, _ uint32) uint32 { return x }},
		{"AndWords", func(b *circuit.Builder, x, y, z circuit.Word) circuit.Word { return b.AndWords(x, y, z) },
			func(x, y, z uint32) uint32 { return x & y & z }},
		{"OrWords NotWord", func(b *circuit.Builder, x, y, z circuit.Word) circuit.Word { return b.OrWords(x, b.NotWord(z)) },
			func(x, _, z uint32) uint32 { return x | ^z }},
		{"Ch", func(b *circuit.Builder, x, y, z circuit.Word) circuit.Word { return b.Ch(x, y, z).Word(b) },
			func(x, y, z uint32) uint32 { return x&y | ^x&z }},
		{"Mux", func(b *circuit.Builder, x, y, z circuit.Word) circuit.Word { return b.Mux(z, x, y).Word(b) },
			func(x, y, z uint32) uint32 { return z&x | ^z&y }},
		{"Maj", func(b *circuit.Builder, x, y, z circuit.Word) circuit.Word { return b.Maj(x, y, z) },
			func(x, y, z uint32) uint32 { return x&y ^ x&z ^ y&z }},
		{"Sum with Ch", func(b *circuit.Builder, x, y, z circuit.Word) circuit.Word {
			return b.Sum(x, b.Ch(x, y, z), b.ConstWord(0xd76aa478, 32), circuit.RotL(z, 3))
		}, func(x, y, z uint32) uint32 { return x + (x&y | ^x&z) + 0xd76aa478 + bits.RotateLeft32(z, 3) }},
		{"Shr 9", func(b *circuit.Builder, x, _, _ circuit.Word) circuit.Word { return b.Shr(x, 9) },
			func(x, _, _ uint32) uint32 { return x >> 9 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := circuit.NewBuilder()
			x, y, z := circuit.Word(b.Input("x", 32)), circuit.Word(b.Input("y", 32)), circuit.Word(b.Input("z", 32))
			b.Output("out", tc.build(b, x, y, z))
			c := b.Circuit()
			if err := c.Validate(); err != nil {
				t.Fatal(err)
			}
			in, out := evalWords(t, c, rng)
			for l := range in {
				if w := tc.want(in[l][0], in[l][1], in[l][2]); out[l] != w {
					t.Fatalf("x, y, z = %#x: got %#x, want %#x", in[l], out[l], w)
				}
			}
		})
	}
}

// TestSumOfTerms: Sum adds Ch's two terms as two operands (no OR node), so
// a SUMBIT of bit 0 reads one operand more than the words given.
func TestSumOfTerms(t *testing.T) {
	b := circuit.NewBuilder()
	x, y, z := circuit.Word(b.Input("x", 8)), circuit.Word(b.Input("y", 8)), circuit.Word(b.Input("z", 8))
	s := b.Sum(x, b.Ch(x, y, z))
	c := b.Circuit()
	if c.Ops[s[0]] != circuit.OpSumBit || int(c.ArgStart[s[0]+1]-c.ArgStart[s[0]]) != 3 {
		t.Errorf("bit 0 of x + Ch: %s of %d operands, want SUMBIT of 3", c.Ops[s[0]], int(c.ArgStart[s[0]+1]-c.ArgStart[s[0]]))
	}
	for _, op := range c.Ops {
		if op == circuit.OpOr {
			t.Errorf("Sum built an OR")
		}
	}
}

// TestWordHints: the word helpers give bit i of what they make the hint i,
// leave a bit that has one alone, and rotations make no nodes.
func TestWordHints(t *testing.T) {
	b := circuit.NewBuilder()
	m := b.BigEndianWords(b.Input("m", 64), 32)
	r := circuit.RotL(m[0], 5)
	x := b.XorWords(r, m[1])
	k := b.ConstWord(5, 32)
	s := b.Add(x, k)
	c := b.Circuit()
	for i := range 32 {
		for _, tc := range []struct {
			what string
			n    circuit.Node
			want int
		}{{"input word 0", m[0][i], i}, {"rotated", r[i], (i + 27) % 32}, {"xor", x[i], i}, {"const", k[i], i}, {"sum", s[i], i}} {
			if p := c.PosOf(tc.n); p != int32(tc.want) {
				t.Errorf("%s bit %d: hint %d, want %d", tc.what, i, p, tc.want)
			}
		}
	}
	if len(c.Ops) != 64+32+32+32 {
		t.Errorf("%d nodes, want 64 inputs, 32 XORs, 32 constants, 32 SUMBITs", len(c.Ops))
	}
}

// TestEndianWords: the builder's word orders and bitvec's agree, and the
// bit orders invert.
func TestEndianWords(t *testing.T) {
	msg := []byte{0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef}
	v := bitvec.FromPackedMSB(msg, 64)
	if got := v.BigEndianWords(2, 32); got[0] != 0x01234567 || got[1] != 0x89abcdef {
		t.Errorf("big-endian words %#x", got)
	}
	if got := v.LittleEndianWords(2, 32); got[0] != 0x67452301 || got[1] != 0xefcdab89 {
		t.Errorf("little-endian words %#x", got)
	}
	if got := bitvec.FromLittleEndianWords([]uint64{0x67452301, 0xefcdab89}, 32).PackMSB(64); string(got) != string(msg) {
		t.Errorf("FromLittleEndianWords: %x", got)
	}
	if got := bitvec.FromBigEndianWords([]uint64{0x0123456789abcdef}, 64).PackMSB(64); string(got) != string(msg) {
		t.Errorf("FromBigEndianWords: %x", got)
	}
	for _, le := range []bool{false, true} {
		b := circuit.NewBuilder()
		in := b.Input("m", 64)
		words, back := b.BigEndianWords(in, 32), circuit.BigEndianBits
		if le {
			words, back = b.LittleEndianWords(in, 32), circuit.LittleEndianBits
		}
		var out []circuit.Node
		for _, w := range words {
			out = append(out, w...) // word bits, least significant first
		}
		b.Output("words", out)
		b.Output("back", back(words))
		res, err := bitvec.EvalSliced([]bitvec.Vec{v}, 64, b.Circuit().Eval)
		if err != nil {
			t.Fatal(err)
		}
		want := v.BigEndianWords(2, 32)
		if le {
			want = v.LittleEndianWords(2, 32)
		}
		for k := range 2 {
			var got uint64
			for i := range 32 {
				got |= uint64(res[0].Get(32*k+i)) << i
			}
			if got != want[k] {
				t.Errorf("little-endian %v: word %d is %#x, bitvec says %#x", le, k, got, want[k])
			}
		}
		for i := range 64 {
			if res[0].Get(64+i) != v.Get(i) {
				t.Fatalf("little-endian %v: bits back differ at %d", le, i)
			}
		}
	}
}
