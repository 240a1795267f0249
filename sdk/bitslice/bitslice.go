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
