//go:build amd64 && !purego

package forward

import "golang.org/x/sys/cpu"

// AVX-512 kernels over 32 lanes (kernels512_amd64.s). Each computes, lane
// by lane, exactly what its AVX2 counterpart or the Go loop it replaces
// computes (same operations, order and rounding), with half the
// instructions and, for the fused ones, none of the calls between: the
// pass gives the same bits with or without them (TestKernels512,
// TestPassUnchanged with useAVX512 off).

// useAVX512 reports whether the CPU and OS support AVX-512F (x/sys/cpu
// checks that the OS saves the ZMM and opmask state). Tests turn it off to
// compare against the AVX2 kernels; nothing else writes it.
var useAVX512 = useAVX && cpu.X86.HasAVX512F

// gather32z is gather32 in AVX-512.
//
//go:noescape
func gather32z(d, buf *float32, stride, off int, cols *int32, ncols int, ws *float32, w float32)

// gather64z is gather64 in AVX-512.
//
//go:noescape
func gather64z(d, buf *float64, stride, off int, cols *int32, ncols int, ws *float64, w float64)

// softRow32z is one softmax query's output for one V row over 32 lanes
// (attention.go): a = (bs·sum + Σ_e wp[e]·buf[off + cols[e]·stride :
// +32])·invZ, the product bs·sum rounded, each weighted value fused into
// the sum, then scaled; and if d is not nil, d += ow·a (fused, as axpy32).
// stride and off are in bytes.
//
//go:noescape
func softRow32z(a, sum, buf *float32, stride, off int, cols *int32, ncols int, wp *float32, bs, invZ float32, d *float32, ow float32)

// softRow64z is softRow32z for float64, each product and sum rounded
// separately (as gather64, scale64 and axpy64).
//
//go:noescape
func softRow64z(a, sum, buf *float64, stride, off int, cols *int32, ncols int, wp *float64, bs, invZ float64, d *float64, ow float64)

// sumRows32z sets sum[0:32] += buf[t·stride : +32] for t = 0, 1, …, n−1
// in that order (stride in bytes).
//
//go:noescape
func sumRows32z(sum, buf *float32, stride, n int)

// sumRows64z is sumRows32z for float64.
//
//go:noescape
func sumRows64z(sum, buf *float64, stride, n int)

// addVec32z sets d[i] += x[i] for i < n (n a multiple of 16).
//
//go:noescape
func addVec32z(d, x *float32, n int)

// addVec64z sets d[i] += x[i] for i < n (n a multiple of 8).
//
//go:noescape
func addVec64z(d, x *float64, n int)

// ffn32z runs the FFN sublayer described by a (ffnArgs) over its tokens,
// 32 float32 lanes each: per hidden unit the gate and value rows (static
// constant, then each dynamic entry fused in, as fill and axpy), the
// product value·relu(gate) where every gate lies outside (lo, hi), then the
// output rows (fused, as axpy32). It returns 0 when every token is done,
// or 1 when it stopped at a token with units whose SiLU is not relu (their
// gates in a.g, values in a.h, a.slow set): the caller finishes those,
// sets a.outOnly and calls it again.
//
//go:noescape
func ffn32z(a *ffnArgs) int

// ffn64z is ffn32z for float64, each product and sum rounded separately,
// and SiLU inside (lo, hi) evaluated in registers as silu does (x/(1 +
// e^{−x}), the exponential with math.Exp's bits; counted in a.exps): only
// NaN gates and gates below −709 are left to the caller.
//
//go:noescape
func ffn64z(a *ffnArgs) int

// sgemm6x64z sets C[6×64] += A[6×kc]·B[kc×64] in float32 (gemm_amd64.s):
// a's rows lda bytes apart, b a packed panel (kc rows of 64), c's rows ldc
// bytes apart; each element's products added in k order, fused.
//
//go:noescape
func sgemm6x64z(kc int, a *float32, lda int, b *float32, c *float32, ldc int)

// sgemm6x64MulAddz is sgemm6x64z with each product rounded, then added.
//
//go:noescape
func sgemm6x64MulAddz(kc int, a *float32, lda int, b *float32, c *float32, ldc int)

// dgemm6x32z is sgemm6x64z for float64: C[6×32], panels of 32.
//
//go:noescape
func dgemm6x32z(kc int, a *float64, lda int, b *float64, c *float64, ldc int)

// dgemm6x32MulAddz is dgemm6x32z with each product rounded, then added.
//
//go:noescape
func dgemm6x32MulAddz(kc int, a *float64, lda int, b *float64, c *float64, ldc int)

// sgemm12x16z is sgemm6x64z for a narrow C: C[12×16], panels of 16.
//
//go:noescape
func sgemm12x16z(kc int, a *float32, lda int, b *float32, c *float32, ldc int)

// sgemm12x16MulAddz is sgemm12x16z with each product rounded, then added.
//
//go:noescape
func sgemm12x16MulAddz(kc int, a *float32, lda int, b *float32, c *float32, ldc int)

// dgemm12x8z is sgemm12x16z for float64: C[12×8], panels of 8.
//
//go:noescape
func dgemm12x8z(kc int, a *float64, lda int, b *float64, c *float64, ldc int)

// dgemm12x8MulAddz is dgemm12x8z with each product rounded, then added.
//
//go:noescape
func dgemm12x8MulAddz(kc int, a *float64, lda int, b *float64, c *float64, ldc int)

// attnRun32z runs the heads of a fused attention sublayer (attnArgs) over
// a run of queries, 32 float32 lanes each: copies the query's stream from
// xOld to xNew, then adds each head's output as staticQuery does (hard:
// gather32 into the output dimension; softmax: softRow32z).
//
//go:noescape
func attnRun32z(a *attnArgs)

// attnRun64z is attnRun32z for float64 (gather64, softRow64z).
//
//go:noescape
func attnRun64z(a *attnArgs)

// probeUnit64z is probeUnit64 in AVX-512 (the same results, dmax the
// maximum over four lanes).
//
//go:noescape
func probeUnit64z(gate, pg, pv, vc *float32, hi, lo float32, t1, t2, dmax *float64) int
