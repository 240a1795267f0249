//go:build openblas && cgo

package blasref

/*
#cgo CFLAGS: -I/usr/include/x86_64-linux-gnu -I/usr/include/openblas
#cgo LDFLAGS: -lopenblas
#include <cblas.h>
char *openblas_get_corename(void);
*/
import "C"

import "unsafe"

// Available reports whether OpenBLAS is built in (the openblas build tag).
const Available = true

// Core returns the kernel set OpenBLAS chose for this CPU (its corename).
func Core() string { return C.GoString(C.openblas_get_corename()) }

// Sgemm is OpenBLAS's cblas_sgemm (see Gemm).
func Sgemm(m, n, k int, a []float32, lda int, b []float32, ldb int, transB bool, c []float32, ldc int, threads int) {
	C.openblas_set_num_threads(C.int(threads))
	C.cblas_sgemm(C.CblasRowMajor, C.CblasNoTrans, trans(transB), C.blasint(m), C.blasint(n), C.blasint(k), 1,
		(*C.float)(unsafe.Pointer(&a[0])), C.blasint(lda), (*C.float)(unsafe.Pointer(&b[0])), C.blasint(ldb), 1,
		(*C.float)(unsafe.Pointer(&c[0])), C.blasint(ldc))
}

// Dgemm is OpenBLAS's cblas_dgemm (see Gemm).
func Dgemm(m, n, k int, a []float64, lda int, b []float64, ldb int, transB bool, c []float64, ldc int, threads int) {
	C.openblas_set_num_threads(C.int(threads))
	C.cblas_dgemm(C.CblasRowMajor, C.CblasNoTrans, trans(transB), C.blasint(m), C.blasint(n), C.blasint(k), 1,
		(*C.double)(unsafe.Pointer(&a[0])), C.blasint(lda), (*C.double)(unsafe.Pointer(&b[0])), C.blasint(ldb), 1,
		(*C.double)(unsafe.Pointer(&c[0])), C.blasint(ldc))
}

func trans(t bool) C.enum_CBLAS_TRANSPOSE {
	if t {
		return C.CblasTrans
	}
	return C.CblasNoTrans
}
