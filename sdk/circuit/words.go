package circuit

import "fmt"

// MaxSumBit is the largest bit index and exponent of an OpSumBit node.
const MaxSumBit = 63

// A word is a []Node of bits, least significant first: bit i has weight
// 2^i. The helpers below build the word operations of ARX constructions
// (SHA-2): rotations and shifts are wiring, XOR is one node a bit, and
// addition modulo 2^n is one OpSumBit node a bit.

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
// the SUMBIT of bits 0…k of every word.
func (b *Builder) Add(words ...[]Node) []Node {
	if len(words) == 0 {
		panic("circuit.Builder: Add of no words")
	}
	n := len(words[0])
	for _, w := range words {
		if len(w) != n {
			panic(fmt.Sprintf("circuit.Builder: Add of words of %d and %d bits", n, len(w)))
		}
	}
	out := make([]Node, n)
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
	return out
}

// XorWords returns the bitwise parity of words of one width.
func (b *Builder) XorWords(words ...[]Node) []Node {
	out := make([]Node, len(words[0]))
	xs := make([]Node, len(words))
	for i := range out {
		for j, w := range words {
			xs[j] = w[i]
		}
		out[i] = b.Xor(xs...)
	}
	return out
}

// ConstWord returns the n-bit constant x as fresh constant nodes.
func (b *Builder) ConstWord(x uint64, n int) []Node {
	out := make([]Node, n)
	for i := range out {
		out[i] = b.Const(int(x >> uint(i) & 1))
	}
	return out
}

// RotR returns the word rotated right by r bits (wiring, no nodes).
func RotR(w []Node, r int) []Node {
	n := len(w)
	out := make([]Node, n)
	for i := range out {
		out[i] = w[(i+r)%n]
	}
	return out
}

// Shr returns the word shifted right by r bits, the vacated high bits
// fresh constant zeros.
func (b *Builder) Shr(w []Node, r int) []Node {
	n := len(w)
	out := make([]Node, n)
	for i := range out {
		if i+r < n {
			out[i] = w[i+r]
		} else {
			out[i] = b.Const(0)
		}
	}
	return out
}
