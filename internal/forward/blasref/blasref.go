// Package blasref measures OpenBLAS's sgemm and dgemm beside the forward
// pass's own GEMM kernels (internal/forward's BenchmarkFloor and
// BenchmarkDense), as the reference for the machine's dense floor. It is
// built with cgo against Debian's OpenBLAS only under the openblas build
// tag; without it (the normal build, CI) Available is false and nothing
// links against a C library:
//
//	apt-get install -y libopenblas-dev
//	go test -tags openblas ./internal/forward -run '^$' -bench 'Floor|Dense'
//
// Sgemm and Dgemm compute C[m×n] += A[m×k]·op(B) (row-major, leading
// dimensions lda, ldb, ldc; op(B) = Bᵀ, B being n×k, with transB) on
// threads threads; they panic where OpenBLAS is not built in.
package blasref
