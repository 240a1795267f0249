package forward

import (
	"math"
	"unsafe"
)

// Dense matrix products, blocked for the caches around an AVX-512
// micro-kernel (gemm_amd64.s) with a Go loop elsewhere. Every element of
// C gets its products in k order, as a plain triple loop adds them, so the
// blocking changes no bit: fused multiply-adds (Fused) or products rounded
// and then added (MulAdd, what the stock pass's loops compute).

// gemmKC is the k extent of one packed panel of B: 256 rows of 64 float32
// (64 KiB) or of 32 float64, kept in L2 while every row block of A passes
// over it; the 6 rows of A a micro-kernel call reads (6 KiB) stay in L1.
const gemmKC = 256

// gemmMR is the rows of C a micro-kernel call computes: 6, or 12 for a
// narrow C (gemmNarrow).
const gemmMR = 6

// gemmMC is the rows of A one block holds (48 × 256 float32: 48 KiB), a
// multiple of both tiles' rows.
const gemmMC = 8 * gemmMR

// gemmNR returns the columns of C a micro-kernel call computes: 64
// float32 or 32 float64 (four 512-bit registers).
func gemmNR[F Float]() int {
	var x F
	if unsafe.Sizeof(x) == 4 {
		return 64
	}
	return 32
}

// gemmNarrow returns the columns of the narrow micro-kernels (12 rows of
// one 512-bit register: 16 float32 or 8 float64), which take a C at most
// that wide (a head's output) with a quarter of the wide ones' work.
func gemmNarrow[F Float]() int { return gemmNR[F]() / 4 }

// GemmOp says how a product enters its sum.
type gemmOp int

const (
	gemmFused  gemmOp = iota // c = fma(a, b, c)
	gemmMulAdd               // c = c + F(a·b)
)

// gemmBuf holds a gemm's packing buffers, reused between calls.
type gemmBuf[F Float] struct {
	b    []F // the packed panel
	a, c []F // a tile's rows and C at the edges
}

// gemm sets c[i·ldc+j] += Σ_k a[i·lda+k]·B[k][j] for i < m, j < n, each
// element's products in k order (op), where B[k][j] is b[k·ldb+j], or
// b[j·ldb+k] with transB (b holds Bᵀ, n rows of k).
func gemm[F Float](op gemmOp, m, n, k int, a []F, lda int, b []F, ldb int, transB bool, c []F, ldc int, buf *gemmBuf[F]) {
	if m == 0 || n == 0 || k == 0 {
		return
	}
	if !useAVX512 {
		gemmGo(op, m, n, k, a, lda, b, ldb, transB, c, ldc)
		return
	}
	nr, mr := gemmNR[F](), gemmMR
	narrow := n <= gemmNarrow[F]()
	if narrow {
		nr, mr = gemmNarrow[F](), 2*gemmMR
	}
	np := (n + nr - 1) / nr // panels
	if len(buf.a) < 2*gemmMR*gemmKC {
		buf.a = make([]F, 2*gemmMR*gemmKC)
		buf.c = make([]F, 2*gemmMR*gemmNR[F]())
	}
	if len(buf.b) < gemmKC*np*nr {
		buf.b = make([]F, gemmKC*np*nr)
	}
	for p0 := 0; p0 < k; p0 += gemmKC {
		kc := min(gemmKC, k-p0)
		// Pack B[p0:p0+kc, :] as np panels of kc rows of nr (zeros beyond n).
		for jp := 0; jp < np; jp++ {
			j0, nc := jp*nr, min(nr, n-jp*nr)
			pb := buf.b[jp*kc*nr : (jp+1)*kc*nr]
			if transB {
				clear(pb)
				for j := 0; j < nc; j++ {
					col := b[(j0+j)*ldb+p0:][:kc]
					for kk, v := range col {
						pb[kk*nr+j] = v
					}
				}
				continue
			}
			for kk := 0; kk < kc; kk++ {
				row := pb[kk*nr : (kk+1)*nr]
				copy(row, b[(p0+kk)*ldb+j0:][:nc])
				clear(row[nc:])
			}
		}
		// A block of gemmMC rows of A stays in L1/L2 while every panel
		// passes over it.
		for ib := 0; ib < m; ib += gemmMC {
			mb := min(gemmMC, m-ib)
			for jp := 0; jp < np; jp++ {
				j0, nc := jp*nr, min(nr, n-jp*nr)
				pb := buf.b[jp*kc*nr : (jp+1)*kc*nr]
				for i0 := ib; i0 < ib+mb; i0 += mr {
					mc := min(mr, ib+mb-i0)
					if mc == mr && nc == nr {
						gemmTile(op, narrow, kc, a[i0*lda+p0:], lda, pb, c[i0*ldc+j0:], ldc)
						continue
					}
					// An edge: the tile through buffers padded with zeros
					// (A's rows in place if it has them all).
					ta, lta, tc := a[i0*lda+p0:], lda, buf.c[:mr*nr]
					if mc < mr {
						ta, lta = buf.a[:mr*kc], kc
						clear(ta)
						for i := 0; i < mc; i++ {
							copy(ta[i*kc:(i+1)*kc], a[(i0+i)*lda+p0:][:kc])
						}
					}
					clear(tc)
					for i := 0; i < mc; i++ {
						copy(tc[i*nr:i*nr+nc], c[(i0+i)*ldc+j0:][:nc])
					}
					gemmTile(op, narrow, kc, ta, lta, pb, tc, nr)
					for i := 0; i < mc; i++ {
						copy(c[(i0+i)*ldc+j0:][:nc], tc[i*nr:i*nr+nc])
					}
				}
			}
		}
	}
}

// gemmTile runs a micro-kernel on a full tile: 6 × gemmNR, or 12 ×
// gemmNarrow if narrow.
func gemmTile[F Float](op gemmOp, narrow bool, kc int, a []F, lda int, pb, c []F, ldc int) {
	mr, nr := gemmMR, gemmNR[F]()
	if narrow {
		mr, nr = 2*gemmMR, gemmNarrow[F]()
	}
	_ = a[(mr-1)*lda+kc-1]
	_ = c[(mr-1)*ldc+nr-1]
	var k func(int, *float32, int, *float32, *float32, int)
	var k64 func(int, *float64, int, *float64, *float64, int)
	switch {
	case !narrow && op == gemmFused:
		k, k64 = sgemm6x64z, dgemm6x32z
	case !narrow:
		k, k64 = sgemm6x64MulAddz, dgemm6x32MulAddz
	case op == gemmFused:
		k, k64 = sgemm12x16z, dgemm12x8z
	default:
		k, k64 = sgemm12x16MulAddz, dgemm12x8MulAddz
	}
	if unsafe.Sizeof(a[0]) == 4 {
		k(kc, f32(a), 4*lda, f32(pb), f32(c), 4*ldc)
		return
	}
	k64(kc, f64(a), 8*lda, f64(pb), f64(c), 8*ldc)
}

// gemmGo is gemm's Go loop, i-k-j order (each element's products still in
// k order).
func gemmGo[F Float](op gemmOp, m, n, k int, a []F, lda int, b []F, ldb int, transB bool, c []F, ldc int) {
	var bt []F
	if transB { // B as rows of k
		bt = make([]F, k*n)
		for j := 0; j < n; j++ {
			for kk := 0; kk < k; kk++ {
				bt[kk*n+j] = b[j*ldb+kk]
			}
		}
		b, ldb = bt, n
	}
	for i := 0; i < m; i++ {
		ci := c[i*ldc:][:n]
		for kk := 0; kk < k; kk++ {
			x := a[i*lda+kk]
			bk := b[kk*ldb:][:n]
			if op == gemmMulAdd {
				for j, y := range bk {
					ci[j] += F(x * y)
				}
				continue
			}
			for j, y := range bk {
				ci[j] = fma(x, y, ci[j])
			}
		}
	}
}

// fma returns x·y + z rounded once, in F.
func fma[F Float](x, y, z F) F {
	if unsafe.Sizeof(x) == 8 {
		return F(math.FMA(float64(x), float64(y), float64(z)))
	}
	return F(fmaF32(float32(x), float32(y), float32(z)))
}

// fmaF32 returns x·y + z rounded once to float32: the product of two
// float32 is exact in float64, and the float64 sum is exact unless it is
// not representable, in which case the sum is rounded to odd so that the
// rounding to float32 is the single rounding of the exact value.
func fmaF32(x, y, z float32) float32 {
	p := float64(x) * float64(y) // exact
	s := p + float64(z)
	// Error of the sum (TwoSum): s + e = p + z exactly.
	bp := s - float64(z)
	e := (p - bp) + (float64(z) - (s - bp))
	if e != 0 && !math.IsInf(s, 0) {
		// Round to odd: nudge s toward the exact value if its last bit is even.
		if b := math.Float64bits(s); b&1 == 0 {
			if (e > 0) == (s > 0) {
				s = math.Float64frombits(b + 1)
			} else {
				s = math.Float64frombits(b - 1)
			}
		}
	}
	return float32(s)
}
