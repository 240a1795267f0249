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
