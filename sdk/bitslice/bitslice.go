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
		if ws[i] == 1 {
			inc(acc, x)
		} else {
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
