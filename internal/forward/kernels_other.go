//go:build !amd64 || purego

package forward

// useAVX is false where no assembly kernels exist; the Go loops run.
const useAVX = false

func gather32(d, buf *float32, stride, off int, cols *int32, ncols int, ws *float32, w float32) {
	panic("model: no assembly kernels")
}

func axpy32(d, x *float32, w float32) { panic("model: no assembly kernels") }

func fma32(d, x *float32, c, w float32) { panic("model: no assembly kernels") }

func scale32(d *float32, s float32) { panic("model: no assembly kernels") }

func reluMul32(h, gs *float32, lo, hi float32) bool { panic("model: no assembly kernels") }

func gather64(d, buf *float64, stride, off int, cols *int32, ncols int, ws *float64, w float64) {
	panic("model: no assembly kernels")
}

func axpy64(d, x *float64, w float64) { panic("model: no assembly kernels") }

func muladd64(d, x *float64, c, w float64) { panic("model: no assembly kernels") }

func scale64(d *float64, s float64) { panic("model: no assembly kernels") }

func reluMul64(h, gs *float64, lo, hi float64) bool { panic("model: no assembly kernels") }

func probeO32(d, a, m *float32, wt float32) { panic("model: no assembly kernels") }

func probeInit64(c, s *float64, x *float32) { panic("model: no assembly kernels") }

func probeUnit64(gate, pg, pv, vc *float32, hi, lo float32, t1, t2, dmax *float64) int {
	panic("model: no assembly kernels")
}

func probeOut64(c, s, t *float64, wt float64) { panic("model: no assembly kernels") }

func probeBad64(c1, s1, c2, s2 *float64, tol float64) bool { panic("model: no assembly kernels") }

// useAVX512 is false where no assembly kernels exist.
var useAVX512 = false

func gather32z(d, buf *float32, stride, off int, cols *int32, ncols int, ws *float32, w float32) {
	panic("model: no assembly kernels")
}

func gather64z(d, buf *float64, stride, off int, cols *int32, ncols int, ws *float64, w float64) {
	panic("model: no assembly kernels")
}

func softRow32z(a, sum, buf *float32, stride, off int, cols *int32, ncols int, wp *float32, bs, invZ float32, d *float32, ow float32) {
	panic("model: no assembly kernels")
}

func softRow64z(a, sum, buf *float64, stride, off int, cols *int32, ncols int, wp *float64, bs, invZ float64, d *float64, ow float64) {
	panic("model: no assembly kernels")
}

func sumRows32z(sum, buf *float32, stride, n int) { panic("model: no assembly kernels") }

func sumRows64z(sum, buf *float64, stride, n int) { panic("model: no assembly kernels") }

func addVec32z(d, x *float32, n int) { panic("model: no assembly kernels") }

func addVec64z(d, x *float64, n int) { panic("model: no assembly kernels") }

func ffn32z(a *ffnArgs) int { panic("model: no assembly kernels") }

func ffn64z(a *ffnArgs) int { panic("model: no assembly kernels") }

func exp64z(d, x *float64, n int) bool { panic("model: no assembly kernels") }

func sgemm6x64z(kc int, a *float32, lda int, b *float32, c *float32, ldc int) {
	panic("model: no assembly kernels")
}

func sgemm6x64MulAddz(kc int, a *float32, lda int, b *float32, c *float32, ldc int) {
	panic("model: no assembly kernels")
}

func dgemm6x32z(kc int, a *float64, lda int, b *float64, c *float64, ldc int) {
	panic("model: no assembly kernels")
}

func dgemm6x32MulAddz(kc int, a *float64, lda int, b *float64, c *float64, ldc int) {
	panic("model: no assembly kernels")
}

func sgemm12x16z(kc int, a *float32, lda int, b *float32, c *float32, ldc int) {
	panic("model: no assembly kernels")
}

func sgemm12x16MulAddz(kc int, a *float32, lda int, b *float32, c *float32, ldc int) {
	panic("model: no assembly kernels")
}

func dgemm12x8z(kc int, a *float64, lda int, b *float64, c *float64, ldc int) {
	panic("model: no assembly kernels")
}

func dgemm12x8MulAddz(kc int, a *float64, lda int, b *float64, c *float64, ldc int) {
	panic("model: no assembly kernels")
}

func attnRun32z(a *attnArgs) { panic("model: no assembly kernels") }

func attnRun64z(a *attnArgs) { panic("model: no assembly kernels") }

func probeUnit64z(gate, pg, pv, vc *float32, hi, lo float32, t1, t2, dmax *float64) int {
	panic("model: no assembly kernels")
}
