//go:build amd64 && !purego

package forward

import "golang.org/x/sys/cpu"

// AVX2/FMA kernels for the float32 forward pass over 32 lanes, the lane
// count a worker carries by default. They compute exactly what the Go
// loops in kernels.go compute, up to the rounding of fused multiply-adds.

// useAVX reports whether the CPU and OS support AVX2 and FMA (x/sys/cpu
// checks that the OS saves the YMM state).
var useAVX = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// gather32 sets d[0:32] += Σ_e wt_e·buf[off + cols[e]·stride : +32] with
// wt_e = ws[e], or w if ws is nil (stride and off in bytes).
//
//go:noescape
func gather32(d, buf *float32, stride, off int, cols *int32, ncols int, ws *float32, w float32)

// axpy32 sets d[0:32] += w·x[0:32].
//
//go:noescape
func axpy32(d, x *float32, w float32)

// fma32 sets d[0:32] = c + w·x[0:32].
//
//go:noescape
func fma32(d, x *float32, c, w float32)

// scale32 sets d[0:32] *= s.
//
//go:noescape
func scale32(d *float32, s float32)

// reluMul32 sets h[0:32] *= max(gs, 0) and returns true if every gs lies
// outside (lo, hi), where float32 SiLU is exactly relu; otherwise it
// changes nothing and returns false.
//
//go:noescape
func reluMul32(h, gs *float32, lo, hi float32) bool

// gather64 is gather32 for float64 (d[0:32], stride and off in bytes),
// each product and sum rounded separately as in the Go loop.
//
//go:noescape
func gather64(d, buf *float64, stride, off int, cols *int32, ncols int, ws *float64, w float64)

// axpy64 sets d[0:32] += w·x[0:32] (product rounded, then the sum).
//
//go:noescape
func axpy64(d, x *float64, w float64)

// muladd64 sets d[0:32] = c + w·x[0:32] (product rounded, then the sum).
//
//go:noescape
func muladd64(d, x *float64, c, w float64)

// scale64 sets d[0:32] *= s.
//
//go:noescape
func scale64(d *float64, s float64)

// reluMul64 is reluMul32 for float64.
//
//go:noescape
func reluMul64(h, gs *float64, lo, hi float64) bool

// probeO32 sets d[0:32] += wt·(a[0:32] − m[0:32]) in float32 (the λ part
// of an attention output, probeAttnOut).
//
//go:noescape
func probeO32(d, a, m *float32, wt float32)

// probeInit64 sets c[0:32] = float64(x[0:32]) and s[0:32] = |c|.
//
//go:noescape
func probeInit64(c, s *float64, x *float32)

// probeUnit64 is probeFFN's loop over the lanes of one hidden unit: gate
// holds its gate pre-activations g, pg and pv the gate and value
// projections of the λ part, vc its values; hi and lo bound the SiLU
// range. Where g ≥ hi it sets t1 = dg·vc + g·dv and t2 = dg·dv (0
// elsewhere), and dmax[0:4] to the lanes' maximum of the δ candidates
// ((hi−g)/dg where g ≥ hi and dg > 0, (lo−g)/dg where g ≤ lo and dg < 0;
// −∞ if none). It returns bit 0 if some t1 ≠ 0, bit 1 if some t2 ≠ 0, and
// bit 2 if a lane needs the Go loop (g inside (lo, hi) or NaN, or an input
// not finite): then its outputs are to be discarded.
//
//go:noescape
func probeUnit64(gate, pg, pv, vc *float32, hi, lo float32, t1, t2, dmax *float64) int

// probeOut64 adds wt·t[l] to c[l] and |wt·t[l]| to s[l] where t[l] ≠ 0,
// over 32 lanes.
//
//go:noescape
func probeOut64(c, s, t *float64, wt float64)

// probeBad64 reports whether some lane of 32 has |c1| > tol·s1 or |c2| >
// tol·s2.
//
//go:noescape
func probeBad64(c1, s1, c2, s2 *float64, tol float64) bool
