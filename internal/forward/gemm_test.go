package forward

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// TestGemm checks gemm against its Go loop, bit for bit, for both ways a
// product enters its sum and both precisions, over shapes with edges in
// every dimension (m not a multiple of 6, n of the panel width, k of the
// panel depth) and leading dimensions wider than the matrices.
func TestGemm(t *testing.T) {
	for _, sh := range [][3]int{{1, 1, 1}, {6, 64, 5}, {7, 65, 3}, {64, 64, 5}, {64, 5, 64}, {64, 14, 64}, {12, 16, 7}, {25, 8, 300},
		{13, 100, 300}, {30, 129, 513}} {
		for _, op := range []gemmOp{gemmFused, gemmMulAdd} {
			for _, tr := range []bool{false, true} {
				t.Run(fmt.Sprintf("%dx%dx%d/op=%d/transB=%v", sh[0], sh[1], sh[2], op, tr), func(t *testing.T) {
					testGemm[float32](t, op, tr, sh[0], sh[1], sh[2])
					testGemm[float64](t, op, tr, sh[0], sh[1], sh[2])
				})
			}
		}
	}
}

func testGemm[F Float](t *testing.T, op gemmOp, transB bool, m, n, k int) {
	rng := rand.New(rand.NewPCG(uint64(m*n), uint64(k)))
	lda, ldb, ldc := k+3, n+1, n+2
	if transB {
		ldb = k + 1
	}
	rnd := func(l int) []F {
		xs := make([]F, l)
		for i := range xs {
			xs[i] = F(rng.NormFloat64())
		}
		return xs
	}
	a, b, c := rnd(m*lda), rnd(max(k, n)*ldb), rnd(m*ldc)
	want := append([]F(nil), c...)
	// The reference: each element's products in k order, one by one.
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			acc := want[i*ldc+j]
			for kk := 0; kk < k; kk++ {
				y := b[kk*ldb+j]
				if transB {
					y = b[j*ldb+kk]
				}
				if op == gemmMulAdd {
					acc += F(a[i*lda+kk] * y)
				} else {
					acc = fma(a[i*lda+kk], y, acc)
				}
			}
			want[i*ldc+j] = acc
		}
	}
	var buf gemmBuf[F]
	gemm(op, m, n, k, a, lda, b, ldb, transB, c, ldc, &buf)
	for i := range c {
		if math.Float64bits(float64(c[i])) != math.Float64bits(float64(want[i])) {
			t.Fatalf("%T element %d (row %d, col %d): %v, the loop gives %v", c[0], i, i/ldc, i%ldc, c[i], want[i])
		}
	}
}

// TestFMAF32 checks fmaF32, the Go loop's single-rounding float32 fma,
// against x·y + z computed exactly (math/big) and rounded once to float32,
// over arguments whose sums cancel, round at halfway points and
// underflow.
func TestFMAF32(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 7))
	r := func() float32 {
		return float32(rng.NormFloat64() * math.Pow(2, float64(rng.IntN(80)-40)))
	}
	for i := range 100000 {
		x, y, z := r(), r(), r()
		switch i % 4 {
		case 1: // cancellation
			z = -float32(float64(x) * float64(y))
		case 2: // tiny results
			x, y = x*1e-20, y*1e-20
		}
		var e big.Float
		e.SetPrec(300).Mul(new(big.Float).SetFloat64(float64(x)), new(big.Float).SetFloat64(float64(y)))
		e.Add(&e, new(big.Float).SetFloat64(float64(z)))
		want, _ := e.Float32()
		if got := fmaF32(x, y, z); math.Float32bits(got) != math.Float32bits(want) && !(got == 0 && want == 0) {
			t.Fatalf("fmaF32(%v, %v, %v) = %v, want %v", x, y, z, got, want)
		}
	}
}
