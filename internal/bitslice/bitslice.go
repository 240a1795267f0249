// Package bitslice evaluates threshold gates on 64 samples at once: each
// uint64 word holds one wire's value in 64 independent evaluations (lanes).
package bitslice

import "math/bits"

// Threshold returns, lane by lane, [Σ ws[k]·vals[src[k]] ≥ theta]: a
// constant when theta is out of the row's reach, an OR or an AND of a
// row of weights 1 when theta asks for one or all of it, else a Count
// compared with theta.
func Threshold(vals []uint64, src, ws []int32, theta int32) uint64 {
	var pos, neg int64
	plain := true
	for _, w := range ws {
		if w > 0 {
			pos += int64(w)
		} else {
			neg -= int64(w)
		}
		plain = plain && w == 1
	}
	t := int64(theta)
	switch {
	case t <= -neg:
		return ^uint64(0)
	case t > pos:
		return 0
	case plain && t == 1:
		var r uint64
		for _, j := range src {
			r |= vals[j]
		}
		return r
	case plain && t == int64(len(src)):
		r := ^uint64(0)
		for _, j := range src {
			r &= vals[j]
		}
		return r
	}
	var c Count
	if plain {
		c.Literals(vals, src, ws)
	} else {
		c.Weighted(vals, src, ws)
	}
	k := bits.Len64(uint64(pos + neg))
	c.Finish(k)
	// Σ w·x ≥ θ ⇔ Σ |w|·lit ≥ θ + Σ_{w<0} |w|, which is in [1, pos+neg].
	return c.AtLeast(uint64(t+neg), k)
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

// Literals sets the count to Σ litₖ, litₖ = vals[src[k]] complemented
// where ws[k] < 0; every |ws[k]| must be 1. Column 0 is kept in
// registers: a full adder per two literals.
func (s *Count) Literals(vals []uint64, src, ws []int32) {
	s.n = [countPlanes]uint8{}
	ws = ws[:len(src)]
	var ones uint64
	i := 0
	if len(src)&1 == 1 {
		ones = vals[src[0]] ^ Sign(ws[0])
		i = 1
	}
	for ; i+1 < len(src); i += 2 {
		a, b := vals[src[i]]^Sign(ws[i]), vals[src[i+1]]^Sign(ws[i+1])
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
		x := vals[j] ^ Sign(ws[i])
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

// Sign is all ones for a negative weight, else 0: the mask that turns an
// input word x of weight w into its literal, x ^ Sign(w).
func Sign(w int32) uint64 { return uint64(int64(w >> 31)) }
