package forward

import (
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"
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
		siluMul(h, g, -89, 17, newSiLUCache())
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
		siluMul(h, g, -745, 38, newSiLUCache())
		same("siluMul", h, want)
	}
}

// TestProbeKernels checks the β probe's assembly kernels bit for bit
// against the Go loops of probe.go they replace, on lanes in every case:
// the gate above hi or below lo with the projection of either sign or 0,
// then one lane inside (lo, hi) and one not finite (the Go loop's).
func TestProbeKernels(t *testing.T) {
	if !useAVX {
		t.Skip("no assembly kernels on this CPU")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	const L = 32
	hi, lo := siluRange[float32]()
	g, pg, pv, vc := make([]float32, L), make([]float32, L), make([]float32, L), make([]float32, L)
	for l := range g {
		g[l] = float32(hi) + float32(rng.ExpFloat64()*40)
		if l%2 == 1 {
			g[l] = float32(lo) - float32(rng.ExpFloat64()*40)
		}
		pg[l] = float32(rng.NormFloat64() * 30)
		if l%5 == 0 {
			pg[l] = 0
		}
		pv[l], vc[l] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
	}
	g[6] = hi // on the edges: hi − g = 0
	g[9] = lo
	ref := func() (t1, t2 []float64, delta float64) {
		t1, t2, delta = make([]float64, L), make([]float64, L), -1
		for l, g0 := range g {
			dg, dv := float64(pg[l]), float64(pv[l])
			switch {
			case g0 >= hi:
				if dg > 0 {
					delta = max(delta, float64(hi-g0)/dg)
				}
				t1[l], t2[l] = dg*float64(vc[l])+float64(g0)*dv, dg*dv
			case g0 <= lo:
				if dg < 0 {
					delta = max(delta, float64(lo-g0)/dg)
				}
			}
		}
		return t1, t2, delta
	}
	type unitKernel = func(gate, pg, pv, vc *float32, hi, lo float32, t1, t2, dmax *float64) int
	units := []unitKernel{probeUnit64}
	if useAVX512 {
		units = append(units, probeUnit64z)
	}
	t1, t2 := make([]float64, L), make([]float64, L)
	var dmax [4]float64
	w1, w2, wd := ref()
	for k, unit := range units {
		f := unit(&g[0], &pg[0], &pv[0], &vc[0], hi, lo, &t1[0], &t2[0], &dmax[0])
		if f != 3 {
			t.Errorf("kernel %d: flags %b, want 11", k, f)
		}
		if d := max(-1, dmax[0], dmax[1], dmax[2], dmax[3]); d != wd {
			t.Errorf("kernel %d: δ bound %v, want %v", k, d, wd)
		}
		for l := range t1 {
			if math.Float64bits(t1[l]) != math.Float64bits(w1[l]) || math.Float64bits(t2[l]) != math.Float64bits(w2[l]) {
				t.Errorf("kernel %d lane %d: t1, t2 = %v, %v, want %v, %v", k, l, t1[l], t2[l], w1[l], w2[l])
			}
		}
	}
	// probeOut64 and probeBad64 on these coefficients.
	c, s := make([]float64, L), make([]float64, L)
	x := make([]float32, L)
	for l := range x {
		x[l] = float32(rng.NormFloat64())
	}
	probeInit64(&c[0], &s[0], &x[0])
	wc, ws := make([]float64, L), make([]float64, L)
	for l := range x {
		wc[l], ws[l] = float64(x[l]), math.Abs(float64(x[l]))
	}
	probeOut64(&c[0], &s[0], &t1[0], 0.375)
	for l, v := range w1 {
		if v != 0 {
			wc[l] += 0.375 * v
			ws[l] += math.Abs(0.375 * v)
		}
	}
	for l := range c {
		if math.Float64bits(c[l]) != math.Float64bits(wc[l]) || math.Float64bits(s[l]) != math.Float64bits(ws[l]) {
			t.Errorf("probeOut64 lane %d: %v, %v, want %v, %v", l, c[l], s[l], wc[l], ws[l])
		}
	}
	zero := make([]float64, L)
	for _, tol := range []float64{0.5, 1.5} { // |c| ≤ s always: bad only below 1
		want := false
		for l := range c {
			want = want || math.Abs(c[l]) > tol*s[l]
		}
		if got := probeBad64(&c[0], &s[0], &zero[0], &zero[0], tol); got != want {
			t.Errorf("probeBad64 at tol %v = %v, want %v", tol, got, want)
		}
	}
	// A lane in range, or not finite: the Go loop's (bit 2).
	for k, unit := range units {
		for _, v := range []float32{1.5, float32(math.Inf(1)), float32(math.NaN())} {
			g2 := append([]float32(nil), g...)
			g2[13] = v
			if f := unit(&g2[0], &pg[0], &pv[0], &vc[0], hi, lo, &t1[0], &t2[0], &dmax[0]); f&4 == 0 {
				t.Errorf("kernel %d, gate %v: not sent to the Go loop", k, v)
			}
		}
		pv2 := append([]float32(nil), pv...)
		pv2[2] = float32(math.Inf(-1))
		if f := unit(&g[0], &pg[0], &pv2[0], &vc[0], hi, lo, &t1[0], &t2[0], &dmax[0]); f&4 == 0 {
			t.Errorf("kernel %d, infinite projection: not sent to the Go loop", k)
		}
	}
}

// TestSiLUCache checks that cachedSiLU gives silu's bits, hit or miss
// (−0 and +0 apart), and evaluates a repeated argument once.
func TestSiLUCache(t *testing.T) {
	c := newSiLUCache()
	args := []float64{-100, -37.5, -1, math.Copysign(0, -1), 0, 0.5, 20, -700}
	evals := 0
	for range 3 {
		for _, x := range args {
			v, ev := cachedSiLU(c, x)
			if ev {
				evals++
			}
			if math.Float64bits(v) != math.Float64bits(silu(x)) {
				t.Errorf("SiLU(%v) = %v from the cache, want %v", x, v, silu(x))
			}
		}
	}
	if evals != len(args) {
		t.Errorf("%d evaluations of %d arguments three times, want %d", evals, len(args), len(args))
	}
	v, _ := cachedSiLU(c, float32(-3))
	if v != silu(float32(-3)) {
		t.Errorf("float32 SiLU(−3) = %v, want %v", v, silu(float32(-3)))
	}
}

// TestFFNArgsLayout checks the field offsets of ffnArgs, attnArgs and
// attnHead against the FA_*, AA_* and AH_* constants kernels512_amd64.s
// reads them at.
func TestFFNArgsLayout(t *testing.T) {
	var a ffnArgs
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"x", unsafe.Offsetof(a.x), 0}, {"tokBytes", unsafe.Offsetof(a.tokBytes), 8},
		{"tokens", unsafe.Offsetof(a.tokens), 16}, {"nh", unsafe.Offsetof(a.nh), 24},
		{"gPtr", unsafe.Offsetof(a.gPtr), 32}, {"gIdx", unsafe.Offsetof(a.gIdx), 40}, {"gW", unsafe.Offsetof(a.gW), 48},
		{"vPtr", unsafe.Offsetof(a.vPtr), 56}, {"vIdx", unsafe.Offsetof(a.vIdx), 64}, {"vW", unsafe.Offsetof(a.vW), 72},
		{"oPtr", unsafe.Offsetof(a.oPtr), 80}, {"oIdx", unsafe.Offsetof(a.oIdx), 88}, {"oW", unsafe.Offsetof(a.oW), 96},
		{"gsPtr", unsafe.Offsetof(a.gsPtr), 104}, {"gsIdx", unsafe.Offsetof(a.gsIdx), 112}, {"gsVal", unsafe.Offsetof(a.gsVal), 120},
		{"vsPtr", unsafe.Offsetof(a.vsPtr), 128}, {"vsIdx", unsafe.Offsetof(a.vsIdx), 136}, {"vsVal", unsafe.Offsetof(a.vsVal), 144},
		{"h", unsafe.Offsetof(a.h), 152}, {"g", unsafe.Offsetof(a.g), 160}, {"slow", unsafe.Offsetof(a.slow), 168},
		{"lo", unsafe.Offsetof(a.lo), 176}, {"hi", unsafe.Offsetof(a.hi), 184},
		{"residual", unsafe.Offsetof(a.residual), 192}, {"outOnly", unsafe.Offsetof(a.outOnly), 200},
		{"lo32", unsafe.Offsetof(a.lo32), 208}, {"hi32", unsafe.Offsetof(a.hi32), 212}, {"exps", unsafe.Offsetof(a.exps), 216},
		{"gOut", unsafe.Offsetof(a.gOut), 224}, {"vOut", unsafe.Offsetof(a.vOut), 232},
	} {
		if c.got != c.want {
			t.Errorf("ffnArgs.%s at offset %d, the kernels read it at %d", c.name, c.got, c.want)
		}
	}
	var aa attnArgs
	var ah attnHead
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"attnArgs.xOld", unsafe.Offsetof(aa.xOld), 0}, {"attnArgs.xNew", unsafe.Offsetof(aa.xNew), 8}, {"attnArgs.xSrc", unsafe.Offsetof(aa.xSrc), 16},
		{"attnArgs.tokBytes", unsafe.Offsetof(aa.tokBytes), 24}, {"attnArgs.tokens", unsafe.Offsetof(aa.tokens), 32}, {"attnArgs.tok", unsafe.Offsetof(aa.tok), 40},
		{"attnArgs.nh", unsafe.Offsetof(aa.nh), 48}, {"attnArgs.heads", unsafe.Offsetof(aa.heads), 56},
		{"attnHead.ptr", unsafe.Offsetof(ah.ptr), 0}, {"attnHead.cols", unsafe.Offsetof(ah.cols), 8}, {"attnHead.wp", unsafe.Offsetof(ah.wp), 16},
		{"attnHead.bs", unsafe.Offsetof(ah.bs), 24}, {"attnHead.invZ", unsafe.Offsetof(ah.invZ), 32}, {"attnHead.sum", unsafe.Offsetof(ah.sum), 40},
		{"attnHead.vOff", unsafe.Offsetof(ah.vOff), 48}, {"attnHead.oOff", unsafe.Offsetof(ah.oOff), 56}, {"attnHead.ow64", unsafe.Offsetof(ah.ow64), 64},
		{"attnHead.ow32", unsafe.Offsetof(ah.ow32), 72}, {"attnHead.soft", unsafe.Offsetof(ah.soft), 80}, {"attnHead size", unsafe.Sizeof(ah), 88},
	} {
		if c.got != c.want {
			t.Errorf("%s at offset %d, the kernels read it at %d", c.name, c.got, c.want)
		}
	}
}
