package bitslice

import (
	"math/rand/v2"
	"testing"
)

func TestThresholdMatchesScalar(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 3000; trial++ {
		n := 1 + rng.IntN(12)
		xs := make([]uint64, n)
		ws := make([]int32, n)
		for i := range xs {
			xs[i] = rng.Uint64()
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
		got := Threshold(xs, ws, theta)
		for lane := 0; lane < 64; lane++ {
			var s int64
			for i, x := range xs {
				s += int64(ws[i]) * int64((x>>lane)&1)
			}
			want := s >= int64(theta)
			if ((got>>lane)&1 == 1) != want {
				t.Fatalf("trial %d lane %d: ws=%v theta=%d sum=%d: got %v want %v", trial, lane, ws, theta, s, !want, want)
			}
		}
	}
}

// TestSumAtLeast: a kept sum compared with every threshold in and around
// its range agrees with Threshold, for random rows and weights.
func TestSumAtLeast(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := range 500 {
		n := 1 + rng.IntN(20)
		xs := make([]uint64, n)
		ws := make([]int32, n)
		for i := range xs {
			xs[i] = rng.Uint64()
			switch trial % 3 {
			case 0:
				ws[i] = 1
			case 1:
				ws[i] = int32(rng.IntN(3)*2 - 1)
			default:
				ws[i] = int32(rng.IntN(41) - 20)
			}
		}
		var s Sum
		s.Set(xs, ws)
		for theta := int32(-25 * n); theta <= int32(25*n); theta++ {
			if got, want := s.AtLeast(theta), Threshold(xs, ws, theta); got != want {
				t.Fatalf("trial %d, ws %v, θ %d: AtLeast %x, Threshold %x", trial, ws, theta, got, want)
			}
		}
	}
}

// TestSetRange: summing through an index with the range given agrees with
// Set on the gathered inputs, unit rows included.
func TestSetRange(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	vals := make([]uint64, 64)
	for i := range vals {
		vals[i] = rng.Uint64()
	}
	for trial := range 300 {
		n := 1 + rng.IntN(16)
		src := make([]int32, n)
		ws := make([]int32, n)
		xs := make([]uint64, n)
		unit := trial%2 == 0
		var pos, neg int64
		for i := range src {
			src[i] = int32(rng.IntN(len(vals)))
			xs[i] = vals[src[i]]
			ws[i] = 1
			if !unit {
				ws[i] = int32(rng.IntN(9) - 4)
			}
			if ws[i] > 0 {
				pos += int64(ws[i])
			} else {
				neg -= int64(ws[i])
			}
		}
		var a, b Sum
		a.Set(xs, ws)
		b.SetRange(vals, src, ws, pos, neg, unit)
		for theta := int32(-5 * n); theta <= int32(5*n); theta++ {
			if a.AtLeast(theta) != b.AtLeast(theta) {
				t.Fatalf("trial %d θ %d: SetRange and Set disagree", trial, theta)
			}
		}
	}
}
