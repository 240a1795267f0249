package bitslice

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"
)

// TestCountMatchesScalar checks Count's Literals (weights 1 and ±1) and Weighted sums,
// and AtLeast against every threshold in range, lane by lane.
func TestCountMatchesScalar(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	weights := []int32{1, -1, 2, -3, 0, 5, math.MaxInt32, math.MinInt32}
	for trial := range 3000 {
		n := rng.IntN(45)
		vals := make([]uint64, 8)
		for i := range vals {
			vals[i] = rng.Uint64()
		}
		src, ws := make([]int32, n), make([]int32, n)
		mode := trial % 3
		for i := range src {
			src[i] = int32(rng.IntN(len(vals)))
			switch mode {
			case 0:
				ws[i] = 1
			case 1:
				ws[i] = 1 - 2*int32(rng.IntN(2))
			default:
				ws[i] = weights[rng.IntN(len(weights))]
				if trial%7 != 0 {
					ws[i] = int32(rng.IntN(11) - 5)
				}
			}
		}
		var total uint64
		for _, w := range ws {
			total += uint64(max(int64(w), -int64(w)))
		}
		var s Count
		if mode < 2 {
			s.Literals(vals, src, ws)
		} else {
			s.Weighted(vals, src, ws)
		}
		k := bits.Len64(total)
		s.Finish(k)
		for lane := range 64 {
			var want uint64
			for i, j := range src {
				x := vals[j] >> lane & 1
				if ws[i] < 0 {
					x ^= 1
				}
				want += x * uint64(max(int64(ws[i]), -int64(ws[i])))
			}
			var got uint64
			for j := range k {
				got |= (s.Bits[j] >> lane & 1) << j
			}
			if got != want {
				t.Fatalf("trial %d lane %d: count %d, want %d (ws %v)", trial, lane, got, want, ws)
			}
			if total > 64 {
				continue
			}
			for th := uint64(1); th <= total; th++ {
				if ge := s.AtLeast(th, k)>>lane&1 == 1; ge != (want >= th) {
					t.Fatalf("trial %d lane %d: [%d ≥ %d] = %v", trial, lane, want, th, ge)
				}
			}
		}
	}
}
