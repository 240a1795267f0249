// Package bitslice evaluates threshold gates on 64 samples at once: each
// uint64 word holds one wire's value in 64 independent evaluations (lanes).
package bitslice

import "math/bits"

// maxPlanes bounds the accumulator width; sums of |weights| up to 2^62 fit.
const maxPlanes = 64

// Threshold returns, lane by lane, [Σ ws[k]·xs[k] ≥ theta].
func Threshold(xs []uint64, ws []int32, theta int32) uint64 {
	var pos, neg int64
	unit := true
	for _, w := range ws {
		if w > 0 {
			pos += int64(w)
		} else {
			neg -= int64(w)
		}
		if w != 1 {
			unit = false
		}
	}
	t := int64(theta)
	if t <= -neg {
		return ^uint64(0)
	}
	if t > pos {
		return 0
	}
	if unit {
		switch {
		case t == 1:
			var r uint64
			for _, x := range xs {
				r |= x
			}
			return r
		case t == int64(len(xs)):
			r := ^uint64(0)
			for _, x := range xs {
				r &= x
			}
			return r
		}
	}
	// Bit-sliced two's-complement accumulator of Σ w·x − θ, k planes wide.
	lo, hi := -neg-t, pos-t
	if lo > 0 {
		lo = 0
	}
	if hi < 0 {
		hi = 0
	}
	m := uint64(-lo)
	if uint64(hi) > m {
		m = uint64(hi)
	}
	k := bits.Len64(m) + 1
	var accArr [maxPlanes]uint64
	acc := accArr[:k]
	addConst(acc, -t, ^uint64(0))
	for i, x := range xs {
		if x == 0 {
			continue
		}
		switch ws[i] {
		case 1:
			inc(acc, x)
		case -1:
			dec(acc, x)
		default:
			addConst(acc, int64(ws[i]), x)
		}
	}
	return ^acc[k-1]
}

// inc adds 1 in the lanes of mask.
func inc(acc []uint64, mask uint64) {
	c := mask
	for j := range acc {
		if c == 0 {
			return
		}
		a := acc[j]
		acc[j] = a ^ c
		c &= a
	}
}

// dec subtracts 1 in the lanes of mask.
func dec(acc []uint64, mask uint64) {
	b := mask
	for j := range acc {
		if b == 0 {
			return
		}
		a := acc[j]
		acc[j] = a ^ b
		b &^= a
	}
}

// addConst adds the constant v (two's complement, len(acc) bits) in the lanes of mask.
func addConst(acc []uint64, v int64, mask uint64) {
	var carry uint64
	for j := range acc {
		var b uint64
		if (v>>uint(j))&1 == 1 {
			b = mask
		}
		a := acc[j]
		acc[j] = a ^ b ^ carry
		carry = (a & b) | (carry & (a ^ b))
	}
}

// Sum is the bit-sliced weighted sum Σ ws[k]·xs[k] of one row of inputs,
// kept so that several thresholds can be compared against it: the n
// counters [S ≥ 1] … [S ≥ n] of an n-ary XOR read the same row, and
// summing it once instead of n times is most of a Keccak evaluation.
type Sum struct {
	planes   [maxPlanes]uint64
	k        int   // planes in use: enough for any Σ − θ with θ in range
	pos, neg int64 // the largest and (minus) the smallest possible sums
}

// Set computes the sum of xs weighted by ws.
func (s *Sum) Set(xs []uint64, ws []int32) {
	s.pos, s.neg = 0, 0
	for _, w := range ws {
		if w > 0 {
			s.pos += int64(w)
		} else {
			s.neg -= int64(w)
		}
	}
	s.k = min(bits.Len64(uint64(s.pos+s.neg))+1, maxPlanes)
	acc := s.planes[:s.k]
	clear(acc)
	for i, x := range xs {
		if x == 0 {
			continue
		}
		switch ws[i] {
		case 1:
			inc(acc, x)
		case -1:
			dec(acc, x)
		default:
			addConst(acc, int64(ws[i]), x)
		}
	}
}

// AtLeast returns, lane by lane, [sum ≥ theta].
func (s *Sum) AtLeast(theta int32) uint64 {
	t := int64(theta)
	if t <= -s.neg {
		return ^uint64(0)
	}
	if t > s.pos {
		return 0
	}
	if s.neg == 0 {
		// Σ ≥ 0 and 0 < θ ≤ pos: compare the planes with θ bit by bit
		// from the top, no subtraction.
		gt, eq := uint64(0), ^uint64(0)
		for j := s.k - 1; j >= 0; j-- {
			p := s.planes[j]
			if (t>>uint(j))&1 == 1 {
				eq &= p
			} else {
				gt |= eq & p
				eq &^= p
			}
		}
		return gt | eq
	}
	// −neg < θ ≤ pos, so Σ − θ lies in [−neg−pos, pos+neg]: k planes hold it.
	var diff [maxPlanes]uint64
	d := diff[:s.k]
	copy(d, s.planes[:s.k])
	addConst(d, -t, ^uint64(0))
	return ^d[s.k-1]
}

// SetRange is Set over xs[k] = vals[src[k]], for a row whose possible sums, [−neg, pos], the
// caller already knows (an evaluator that computed them once per circuit).
func (s *Sum) SetRange(vals []uint64, src []int32, ws []int32, pos, neg int64, unit bool) {
	s.pos, s.neg = pos, neg
	s.k = min(bits.Len64(uint64(pos+neg))+1, maxPlanes)
	acc := s.planes[:s.k]
	clear(acc)
	if unit {
		for _, j := range src {
			if x := vals[j]; x != 0 {
				inc(acc, x)
			}
		}
		return
	}
	for i, j := range src {
		x := vals[j]
		if x == 0 {
			continue
		}
		switch ws[i] {
		case 1:
			inc(acc, x)
		case -1:
			dec(acc, x)
		default:
			addConst(acc, int64(ws[i]), x)
		}
	}
}

// countPlanes bounds a Count's planes: enough for any sum of |weights|
// below 2^64, plus the carry columns a final half adder may touch.
const countPlanes = 66

// Count is a bit-sliced unsigned sum Σ |wₖ|·litₖ built with carry-save
// (full-adder) columns instead of ripple increments: a literal of weight
// |w| enters the column of each set bit of |w|, and three words of a
// column compress into one there plus a carry in the next. Bits then
// holds the sum in binary, one plane per bit, for AtLeast to compare.
//
// A literal is an input word or, for a negative weight, its complement:
// Σ w·x = Σ |w|·lit − Σ_{w<0} |w|, so an evaluator compares the count
// with θ + Σ_{w<0} |w| instead of θ.
type Count struct {
	col [countPlanes][2]uint64 // up to two pending words per column
	n   [countPlanes]uint8     // pending words per column
	// Bits is the sum, plane j holding bit j, once Finish has run.
	Bits [countPlanes]uint64
}

// add puts x into column j, compressing three words into a sum and a carry.
func (s *Count) add(j int, x uint64) {
	for {
		switch s.n[j] {
		case 0:
			s.col[j][0] = x
			s.n[j] = 1
			return
		case 1:
			s.col[j][1] = x
			s.n[j] = 2
			return
		}
		a, b := s.col[j][0], s.col[j][1]
		t := a ^ b
		s.col[j][0] = t ^ x
		s.n[j] = 1
		x = a&b | x&t
		j++
	}
}

// Unit sets the count to Σ vals[src[k]] over all k (every weight 1).
func (s *Count) Unit(vals []uint64, src []int32) {
	s.n = [countPlanes]uint8{}
	// Column 0 is kept in registers: a full adder per two literals.
	var ones uint64
	i := 0
	if len(src)&1 == 1 {
		ones = vals[src[0]]
		i = 1
	}
	for ; i+1 < len(src); i += 2 {
		a, b := vals[src[i]], vals[src[i+1]]
		t := ones ^ a
		s.add(1, ones&a|b&t)
		ones = t ^ b
	}
	s.col[0][0] = ones
	s.n[0] = 1
}

// Literals sets the count to Σ litₖ, litₖ = vals[src[k]] complemented
// where ws[k] < 0; every |ws[k]| must be 1.
func (s *Count) Literals(vals []uint64, src, ws []int32) {
	s.n = [countPlanes]uint8{}
	ws = ws[:len(src)]
	var ones uint64
	i := 0
	if len(src)&1 == 1 {
		ones = vals[src[0]] ^ sign(ws[0])
		i = 1
	}
	for ; i+1 < len(src); i += 2 {
		a, b := vals[src[i]]^sign(ws[i]), vals[src[i+1]]^sign(ws[i+1])
		t := ones ^ a
		s.add(1, ones&a|b&t)
		ones = t ^ b
	}
	s.col[0][0] = ones
	s.n[0] = 1
}

// Weighted sets the count to Σ |ws[k]|·litₖ, litₖ = vals[src[k]]
// complemented where ws[k] < 0.
func (s *Count) Weighted(vals []uint64, src, ws []int32) {
	s.n = [countPlanes]uint8{}
	ws = ws[:len(src)]
	for i, j := range src {
		w := int64(ws[i])
		x := vals[j] ^ sign(ws[i])
		a := uint64(w)
		if w < 0 {
			a = uint64(-w)
		}
		for a != 0 {
			b := bits.TrailingZeros64(a)
			s.add(b, x)
			a &= a - 1
		}
	}
}

// Finish resolves the pending columns into Bits[:k], rippling one carry
// word up; k planes must hold every lane's sum (k = bits.Len64 of the
// largest possible sum), so the carry out of plane k−1 is zero.
func (s *Count) Finish(k int) {
	var c uint64
	for j := range k {
		var a, b uint64
		switch s.n[j] {
		case 1:
			a = s.col[j][0]
		case 2:
			a, b = s.col[j][0], s.col[j][1]
		}
		t := a ^ b
		s.Bits[j] = t ^ c
		c = a&b | c&t
	}
}

// AtLeast returns, lane by lane, [sum ≥ t] for 1 ≤ t < 2^k, k the planes
// given to Finish. It compares from the lowest set bit of t upwards: with
// ge the comparison of the low bits, a bit of t that is 1 needs the sum's
// bit and ge, a bit that is 0 needs either.
func (s *Count) AtLeast(t uint64, k int) uint64 {
	j := bits.TrailingZeros64(t)
	ge := s.Bits[j]
	for j++; j < k; j++ {
		if t>>uint(j)&1 == 1 {
			ge &= s.Bits[j]
		} else {
			ge |= s.Bits[j]
		}
	}
	return ge
}

// sign is all ones for a negative weight, else 0: the mask that turns an
// input word into its literal.
func sign(w int32) uint64 { return uint64(int64(w >> 31)) }
