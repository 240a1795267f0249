package bitslice

import (
	"math/rand/v2"
	"testing"
)

func TestThresholdMatchesScalar(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 3000; trial++ {
		n := 1 + rng.IntN(12)
		vals := make([]uint64, 8)
		for i := range vals {
			vals[i] = rng.Uint64()
		}
		src := make([]int32, n)
		ws := make([]int32, n)
		for i := range src {
			src[i] = int32(rng.IntN(len(vals)))
			switch rng.IntN(3) {
			case 0:
				ws[i] = 1
			case 1:
				ws[i] = -1
			default:
				ws[i] = int32(rng.IntN(41) - 20)
			}
		}
		theta := int32(rng.IntN(61) - 30)
		if trial%3 == 0 {
			for i := range ws {
				ws[i] = 1
			}
			theta = int32(rng.IntN(n + 2))
		}
		got := Threshold(vals, src, ws, theta)
		for lane := 0; lane < 64; lane++ {
			var s int64
			for i, j := range src {
				s += int64(ws[i]) * int64((vals[j]>>lane)&1)
			}
			want := s >= int64(theta)
			if ((got>>lane)&1 == 1) != want {
				t.Fatalf("trial %d lane %d: ws=%v theta=%d sum=%d: got %v want %v", trial, lane, ws, theta, s, !want, want)
			}
		}
	}
}
