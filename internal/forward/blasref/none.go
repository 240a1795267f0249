//go:build !(openblas && cgo)

package blasref

// Available reports whether OpenBLAS is built in (the openblas build tag).
const Available = false

// Core returns "" without OpenBLAS.
func Core() string { return "" }

// Sgemm panics: OpenBLAS is not built in.
func Sgemm(m, n, k int, a []float32, lda int, b []float32, ldb int, transB bool, c []float32, ldc int, threads int) {
	panic("blasref: built without the openblas tag")
}

// Dgemm panics: OpenBLAS is not built in.
func Dgemm(m, n, k int, a []float64, lda int, b []float64, ldb int, transB bool, c []float64, ldc int, threads int) {
	panic("blasref: built without the openblas tag")
}
