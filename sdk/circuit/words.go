package circuit

import "fmt"

// MaxSumBit is the largest bit index and exponent of an OpSumBit node.
const MaxSumBit = 63

// Word is an n-bit word of circuit nodes, least significant bit first: bit
// i (w[i]) has weight 2^i, whatever byte order the standard writes the word
// in (BigEndianWords and LittleEndianWords turn message bits into words,
// BigEndianBits and LittleEndianBits turn words back into bits). A []Node
// is a Word and back.
//
// The word helpers build the word operations of ARX constructions (MD5,
// SHA-1, SHA-2): rotations are wiring (RotR, RotL: no nodes), a bitwise
// operation is one node a bit (XorWords, AndWords, OrWords, NotWord, Maj),
// and an addition modulo 2^n is one OpSumBit node a bit (Add, Sum). Every
// helper that makes nodes gives bit i of its result the position hint i,
// unless the bit already has one (see Builder.At), so constructions built
// from words get the hints the tokens-as-states mapper reads without a
// call of At or SetPos.
type Word []Node

// Addend is an operand of Sum: a Word, or Terms (a value known to be a sum
// of words, such as Ch's).
type Addend interface {
	// words returns the words the addend adds.
	words() []Word
}

// words implements Addend.
func (w Word) words() []Word { return []Word{w} }

// Terms is a word value held as words that are never 1 at the same bit, so
// that the value (their OR) is their sum: Ch and Mux return it. Sum adds
// each term as a word of its own, one operand each, instead of building
// the OR and adding it; Word gives the value as one word when it is read
// otherwise.
type Terms []Word

// words implements Addend.
func (t Terms) words() []Word { return t }

// Word returns the value as one word: the OR of the terms, bit by bit.
func (t Terms) Word(b *Builder) Word { return b.OrWords(toNodes(t)...) }

// toNodes returns ws as [][]Node.
func toNodes(ws []Word) [][]Node {
	out := make([][]Node, len(ws))
	for i, w := range ws {
		out[i] = w
	}
	return out
}

// hintWord gives bit i of w the position hint i where it has none yet (a
// fresh result, an input, a constant; a bit that already belongs to
// another word, as a rotated or shifted one does, keeps its own).
func (b *Builder) hintWord(w []Node) {
	for i, n := range w {
		if b.PosOf(n) == NoPos {
			b.SetPos(n, i)
		}
	}
}

// SumBit returns bit k of Σ 2^exps[i]·xs[i] (an OpSumBit node).
func (b *Builder) SumBit(k int, xs []Node, exps []int32) Node {
	if len(xs) != len(exps) {
		panic(fmt.Sprintf("circuit.Builder: SUMBIT with %d operands and %d exponents", len(xs), len(exps)))
	}
	if k < 0 || k > MaxSumBit {
		panic(fmt.Sprintf("circuit.Builder: SUMBIT of bit %d, want 0…%d", k, MaxSumBit))
	}
	return b.node(OpSumBit, int32(k), xs, exps)
}

// Add returns the sum of words modulo 2^n, n their common width: bit k is
// the SUMBIT of bits 0…k of every word, operands in the order of words.
func (b *Builder) Add(words ...[]Node) Word {
	if len(words) == 0 {
		panic("circuit.Builder: Add of no words")
	}
	n := len(words[0])
	for _, w := range words {
		if len(w) != n {
			panic(fmt.Sprintf("circuit.Builder: Add of words of %d and %d bits", n, len(w)))
		}
	}
	out := make(Word, n)
	xs := make([]Node, 0, n*len(words))
	exps := make([]int32, 0, n*len(words))
	for k := range out {
		xs, exps = xs[:0], exps[:0]
		for i := 0; i <= k; i++ {
			for _, w := range words {
				xs = append(xs, w[i])
				exps = append(exps, int32(i))
			}
		}
		out[k] = b.SumBit(k, xs, exps)
	}
	b.hintWord(out)
	return out
}

// Sum returns the sum of addends modulo 2^n: Add of their words in order,
// the terms of a Terms (Ch, Mux) as words of their own.
func (b *Builder) Sum(addends ...Addend) Word {
	var ws [][]Node
	for _, a := range addends {
		for _, w := range a.words() {
			ws = append(ws, w)
		}
	}
	return b.Add(ws...)
}

// bitwise returns the word whose bit i is op of bit i of every word.
func (b *Builder) bitwise(what string, op func(...Node) Node, words [][]Node) Word {
	if len(words) == 0 {
		panic(fmt.Sprintf("circuit.Builder: %s of no words", what))
	}
	out := make(Word, len(words[0]))
	xs := make([]Node, len(words))
	for i := range out {
		for j, w := range words {
			if len(w) != len(out) {
				panic(fmt.Sprintf("circuit.Builder: %s of words of %d and %d bits", what, len(out), len(w)))
			}
			xs[j] = w[i]
		}
		out[i] = op(xs...)
	}
	b.hintWord(out)
	return out
}

// XorWords returns the bitwise parity of words of one width.
func (b *Builder) XorWords(words ...[]Node) Word { return b.bitwise("XorWords", b.Xor, words) }

// AndWords returns the bitwise AND of words of one width.
func (b *Builder) AndWords(words ...[]Node) Word { return b.bitwise("AndWords", b.And, words) }

// OrWords returns the bitwise OR of words of one width.
func (b *Builder) OrWords(words ...[]Node) Word { return b.bitwise("OrWords", b.Or, words) }

// NotWord returns the bitwise complement of w.
func (b *Builder) NotWord(w []Node) Word {
	return b.bitwise("NotWord", func(x ...Node) Node { return b.Not(x[0]) }, [][]Node{w})
}

// Ch returns the choice x ? y : z, bit by bit (SHA-1, SHA-2; MD5's F), as
// the Terms x∧y and ¬x∧z: never both 1, so Sum adds them as two words
// (two threshold ops a bit, no OR).
func (b *Builder) Ch(x, y, z []Node) Terms {
	return Terms{b.AndWords(x, y), b.bitwise("Ch", func(a ...Node) Node { return b.AndNot(a[0], a[1]) }, [][]Node{x, z})}
}

// Mux returns s ? x : y, bit by bit: Ch(s, x, y) (MD5's G is Mux(z, x, y)).
func (b *Builder) Mux(s, x, y []Node) Terms { return b.Ch(s, x, y) }

// Maj returns the bitwise majority of x, y and z: one threshold op a bit,
// [x + y + z ≥ 2].
func (b *Builder) Maj(x, y, z []Node) Word {
	return b.bitwise("Maj", func(a ...Node) Node { return b.Threshold(2, a, []int32{1, 1, 1}) }, [][]Node{x, y, z})
}

// ConstWord returns the n-bit constant x as fresh constant nodes.
func (b *Builder) ConstWord(x uint64, n int) Word {
	out := make(Word, n)
	for i := range out {
		out[i] = b.Const(int(x >> uint(i) & 1))
	}
	b.hintWord(out)
	return out
}

// RotR returns the word rotated right by r bits (toward bit 0: bit i of
// the result is bit i+r mod n), wiring only, no nodes. Any r is allowed: r
// is taken modulo the width, and a negative r rotates left.
func RotR(w []Node, r int) Word {
	n := len(w)
	out := make(Word, n)
	if n == 0 {
		return out
	}
	r %= n
	if r < 0 {
		r += n
	}
	for i := range out {
		out[i] = w[(i+r)%n]
	}
	return out
}

// RotL returns the word rotated left by r bits (away from bit 0, the
// "<<<" of MD5 and SHA-1): RotR(w, −r).
func RotL(w []Node, r int) Word { return RotR(w, -r) }

// Shr returns the word shifted right by r bits (0 ≤ r), the vacated high
// bits fresh constant zeros.
func (b *Builder) Shr(w []Node, r int) Word {
	if r < 0 {
		panic(fmt.Sprintf("circuit.Builder: Shr by %d, want 0 or more", r))
	}
	n := len(w)
	out := make(Word, n)
	for i := range out {
		if i+r < n {
			out[i] = w[i+r]
		} else {
			out[i] = b.Const(0)
		}
	}
	b.hintWord(out)
	return out
}

// BigEndianWords splits message bits into w-bit words the way SHA-1 and
// SHA-2 read a block: bits in the message's order (bit 7 − j of byte k is
// bit 8k + j, as bitvec.PackMSB packs them), each word's most significant
// bit first. It gives the bits of each word their position hints.
func (b *Builder) BigEndianWords(bits []Node, w int) []Word {
	out := make([]Word, len(bits)/w)
	for i := range out {
		out[i] = make(Word, w)
		for j := range w {
			out[i][j] = bits[i*w+w-1-j]
		}
		b.hintWord(out[i])
	}
	return out
}

// LittleEndianWords splits message bits (in the same order as for
// BigEndianWords) into w-bit words the way MD5 reads a block: each word's
// bytes least significant first, each byte's most significant bit first; w
// is a multiple of 8. It gives the bits of each word their position hints.
func (b *Builder) LittleEndianWords(bits []Node, w int) []Word {
	if w%8 != 0 {
		panic(fmt.Sprintf("circuit.Builder: little-endian words of %d bits, want a multiple of 8", w))
	}
	out := make([]Word, len(bits)/w)
	for i := range out {
		out[i] = make(Word, w)
		for j := range w {
			out[i][j] = bits[i*w+j/8*8+7-j%8]
		}
		b.hintWord(out[i])
	}
	return out
}

// BigEndianBits is the inverse of BigEndianWords: the words' bits in
// message order (a digest as the standard writes it).
func BigEndianBits(ws []Word) []Node {
	var out []Node
	for _, x := range ws {
		for j := len(x) - 1; j >= 0; j-- {
			out = append(out, x[j])
		}
	}
	return out
}

// LittleEndianBits is the inverse of LittleEndianWords.
func LittleEndianBits(ws []Word) []Node {
	var out []Node
	for _, x := range ws {
		for j := range x {
			out = append(out, x[j/8*8+7-j%8])
		}
	}
	return out
}
