package forward

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestKernels32 checks the 32-lane float32 kernels (assembly where the CPU
// has AVX2) against plain float64 loops.
func TestKernels32(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	rnd := func(n int) []float32 {
		out := make([]float32, n)
		for i := range out {
			out[i] = float32(rng.NormFloat64())
		}
		return out
	}
	near := func(what string, got []float32, want []float64) {
		t.Helper()
		for l := range want {
			if math.Abs(float64(got[l])-want[l]) > 1e-5*(1+math.Abs(want[l])) {
				t.Errorf("%s lane %d = %v, want %v", what, l, got[l], want[l])
			}
		}
	}
	const L = 32
	// gather: 5 tokens of stride 3·L, row offset L.
	buf := rnd(5 * 3 * L)
	cols := []int32{4, 0, 2, 2}
	ws := rnd(len(cols))
	for _, weighted := range []bool{false, true} {
		d := rnd(L)
		want := make([]float64, L)
		for l := range want {
			want[l] = float64(d[l])
			for e, j := range cols {
				w := 0.75
				if weighted {
					w = float64(ws[e])
				}
				want[l] += w * float64(buf[int(j)*3*L+L+l])
			}
		}
		var wsArg []float32
		if weighted {
			wsArg = ws
		}
		gather(d, buf, 3*L, L, cols, wsArg, 0.75)
		near("gather", d, want)
	}
	d, x := rnd(L), rnd(L)
	want := make([]float64, L)
	for l := range want {
		want[l] = float64(d[l]) + 1.5*float64(x[l])
	}
	axpy(d, x, 1.5)
	near("axpy", d, want)
	for l := range want {
		want[l] = -2 + 0.5*float64(x[l])
	}
	fill(d, x, -2, 0.5)
	near("fill", d, want)
	for l := range want {
		want[l] = float64(d[l]) * 3
	}
	scale(d, 3)
	near("scale", d, want)
	// siluMul: saturated arguments take the relu path, one lane in range
	// the exact one; both give SiLU.
	for _, inRange := range []bool{false, true} {
		h, g := rnd(L), make([]float32, L)
		for l := range g {
			g[l] = float32(100 * rng.NormFloat64())
			if math.Abs(float64(g[l])) < 90 {
				g[l] = 200
			}
		}
		if inRange {
			g[7] = 1.25
		}
		for l := range want {
			x := float64(g[l])
			want[l] = float64(h[l]) * x / (1 + math.Exp(-x))
		}
		siluMul(h, g, -89, 17)
		near("siluMul", h, want)
	}
}

// TestKernels64 checks the 32-lane float64 kernels (assembly where the CPU
// has AVX2) bit for bit against the Go loops' arithmetic: each product and
// sum rounded separately, so the float64 pass is the same with or without
// them.
func TestKernels64(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	rnd := func(n int) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = rng.NormFloat64()
		}
		return out
	}
	same := func(what string, got, want []float64) {
		t.Helper()
		for l := range want {
			if math.Float64bits(got[l]) != math.Float64bits(want[l]) {
				t.Errorf("%s lane %d = %v, want %v", what, l, got[l], want[l])
			}
		}
	}
	const L = 32
	buf := rnd(5 * 3 * L)
	cols := []int32{4, 0, 2, 2, 1}
	ws := rnd(len(cols))
	for _, weighted := range []bool{false, true} {
		d := rnd(L)
		want := append([]float64(nil), d...)
		for l := range want {
			for e, j := range cols {
				w := 0.75
				if weighted {
					w = ws[e]
				}
				want[l] += w * buf[int(j)*3*L+L+l]
			}
		}
		var wsArg []float64
		if weighted {
			wsArg = ws
		}
		gather(d, buf, 3*L, L, cols, wsArg, 0.75)
		same("gather", d, want)
	}
	d, x := rnd(L), rnd(L)
	want := make([]float64, L)
	for l := range want {
		want[l] = d[l] + 1.1*x[l]
	}
	axpy(d, x, 1.1)
	same("axpy", d, want)
	for l := range want {
		want[l] = -2.3 + 0.7*x[l]
	}
	fill(d, x, -2.3, 0.7)
	same("fill", d, want)
	for l := range want {
		want[l] = d[l] * 3.3
	}
	scale(d, 3.3)
	same("scale", d, want)
	// siluMul: every argument saturated (relu), then one in range (the
	// exact path for every lane).
	for _, inRange := range []bool{false, true} {
		h, g := rnd(L), make([]float64, L)
		for l := range g {
			g[l] = 1000 * rng.NormFloat64()
			if math.Abs(g[l]) < 800 {
				g[l] = 900
			}
		}
		g[3] = -2000 // a negative lane: 0
		if inRange {
			g[7] = 1.25
		}
		for l := range want {
			want[l] = h[l] * max(g[l], 0)
			if g[l] > -745 && g[l] < 38 {
				want[l] = h[l] * silu(g[l])
			}
		}
		siluMul(h, g, -745, 38)
		same("siluMul", h, want)
	}
}
