package tokensasstates

import (
	"cmp"
	"slices"
)

// term is one term w·src of a gate.
type term struct {
	src int32
	w   int64
}

// terms is a gate's terms being collected.
type terms []term

// merge sorts ts by source, sums the weights of equal sources and drops
// zero sums, in place.
func (ts terms) merge() terms {
	slices.SortFunc(ts, func(a, b term) int { return cmp.Compare(a.src, b.src) })
	out := ts[:0]
	for _, t := range ts {
		if n := len(out); n > 0 && out[n-1].src == t.src {
			out[n-1].w += t.w
			continue
		}
		out = append(out, t)
	}
	k := 0
	for _, t := range out {
		if t.w != 0 {
			out[k] = t
			k++
		}
	}
	return out[:k]
}

// arenaChunk is the size of an arena's chunks (elements).
const arenaChunk = 1 << 16

// arena hands out slices of chunks of one backing array each, so that a
// level's hundreds of thousands of gate terms are a few hundred
// allocations, not one or two a gate.
type arena[T any] struct{ buf []T }

// take returns a zeroed slice of n elements, its capacity n (an append
// to it copies).
func (a *arena[T]) take(n int) []T {
	if cap(a.buf)-len(a.buf) < n {
		a.buf = make([]T, 0, max(arenaChunk, n))
	}
	k := len(a.buf)
	a.buf = a.buf[:k+n]
	return a.buf[k : k+n : k+n]
}
