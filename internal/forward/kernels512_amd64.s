//go:build amd64 && !purego

#include "textflag.h"
#include "exp_amd64.h"

// AVX-512 kernels over 32 lanes (kernels512_amd64.go). Each lane sees the
// same operations, in the same order and with the same rounding, as in the
// AVX2 kernels of kernels_amd64.s and the Go loops they replace: float32
// products fused into the sums they feed (VFMADD231PS), float64 products
// and sums rounded separately (VMULPD, then VADDPD). Only the width of a
// register changes, so a pass gives the same bits with either set.

// func gather32z(d, buf *float32, stride, off int, cols *int32, ncols int, ws *float32, w float32)
TEXT ·gather32z(SB), NOSPLIT, $0-60
	MOVQ d+0(FP), DI
	MOVQ buf+8(FP), SI
	MOVQ stride+16(FP), R8
	MOVQ off+24(FP), R9
	MOVQ cols+32(FP), R10
	MOVQ ncols+40(FP), CX
	MOVQ ws+48(FP), R11
	VBROADCASTSS w+56(FP), Z7
	VMOVUPS 0(DI), Z0
	VMOVUPS 64(DI), Z1
	ADDQ R9, SI
	TESTQ CX, CX
	JZ gzdone
	TESTQ R11, R11
	JNZ gzweighted
gzloop:
	MOVLQSX (R10), AX
	IMULQ R8, AX
	VFMADD231PS 0(SI)(AX*1), Z7, Z0
	VFMADD231PS 64(SI)(AX*1), Z7, Z1
	ADDQ $4, R10
	DECQ CX
	JNZ gzloop
	JMP gzdone
gzweighted:
	MOVLQSX (R10), AX
	IMULQ R8, AX
	VBROADCASTSS (R11), Z6
	VFMADD231PS 0(SI)(AX*1), Z6, Z0
	VFMADD231PS 64(SI)(AX*1), Z6, Z1
	ADDQ $4, R10
	ADDQ $4, R11
	DECQ CX
	JNZ gzweighted
gzdone:
	VMOVUPS Z0, 0(DI)
	VMOVUPS Z1, 64(DI)
	VZEROUPPER
	RET

// func gather64z(d, buf *float64, stride, off int, cols *int32, ncols int, ws *float64, w float64)
TEXT ·gather64z(SB), NOSPLIT, $0-64
	MOVQ d+0(FP), DI
	MOVQ buf+8(FP), SI
	MOVQ stride+16(FP), R8
	MOVQ off+24(FP), R9
	MOVQ cols+32(FP), R10
	MOVQ ncols+40(FP), CX
	MOVQ ws+48(FP), R11
	VBROADCASTSD w+56(FP), Z15
	VMOVUPD 0(DI), Z0
	VMOVUPD 64(DI), Z1
	VMOVUPD 128(DI), Z2
	VMOVUPD 192(DI), Z3
	ADDQ R9, SI
	TESTQ CX, CX
	JZ g64zdone
g64zloop:
	TESTQ R11, R11
	JZ g64zw
	VBROADCASTSD (R11), Z15
	ADDQ $8, R11
g64zw:
	MOVLQSX (R10), AX
	IMULQ R8, AX
	VMULPD 0(SI)(AX*1), Z15, Z8
	VMULPD 64(SI)(AX*1), Z15, Z9
	VMULPD 128(SI)(AX*1), Z15, Z10
	VMULPD 192(SI)(AX*1), Z15, Z11
	VADDPD Z8, Z0, Z0
	VADDPD Z9, Z1, Z1
	VADDPD Z10, Z2, Z2
	VADDPD Z11, Z3, Z3
	ADDQ $4, R10
	DECQ CX
	JNZ g64zloop
g64zdone:
	VMOVUPD Z0, 0(DI)
	VMOVUPD Z1, 64(DI)
	VMOVUPD Z2, 128(DI)
	VMOVUPD Z3, 192(DI)
	VZEROUPPER
	RET

// func softRow32z(a, sum, buf *float32, stride, off int, cols *int32, ncols int, wp *float32, bs, invZ float32, d *float32, ow float32)
TEXT ·softRow32z(SB), NOSPLIT, $0-84
	MOVQ a+0(FP), DI
	MOVQ sum+8(FP), DX
	MOVQ buf+16(FP), SI
	MOVQ stride+24(FP), R8
	MOVQ off+32(FP), R9
	MOVQ cols+40(FP), R10
	MOVQ ncols+48(FP), CX
	MOVQ wp+56(FP), R11
	VBROADCASTSS bs+64(FP), Z7
	VMULPS 0(DX), Z7, Z0 // bs·Σ_all v
	VMULPS 64(DX), Z7, Z1
	ADDQ R9, SI
	TESTQ CX, CX
	JZ srzscale
srzloop:
	MOVLQSX (R10), AX
	IMULQ R8, AX
	VBROADCASTSS (R11), Z6
	VFMADD231PS 0(SI)(AX*1), Z6, Z0
	VFMADD231PS 64(SI)(AX*1), Z6, Z1
	ADDQ $4, R10
	ADDQ $4, R11
	DECQ CX
	JNZ srzloop
srzscale:
	VBROADCASTSS invZ+68(FP), Z7
	VMULPS Z7, Z0, Z0
	VMULPS Z7, Z1, Z1
	VMOVUPS Z0, 0(DI)
	VMOVUPS Z1, 64(DI)
	MOVQ d+72(FP), DI
	TESTQ DI, DI
	JZ srzdone
	VBROADCASTSS ow+80(FP), Z7
	VMOVUPS 0(DI), Z2
	VMOVUPS 64(DI), Z3
	VFMADD231PS Z0, Z7, Z2 // d + ow·a, as axpy32
	VFMADD231PS Z1, Z7, Z3
	VMOVUPS Z2, 0(DI)
	VMOVUPS Z3, 64(DI)
srzdone:
	VZEROUPPER
	RET

// func softRow64z(a, sum, buf *float64, stride, off int, cols *int32, ncols int, wp *float64, bs, invZ float64, d *float64, ow float64)
TEXT ·softRow64z(SB), NOSPLIT, $0-96
	MOVQ a+0(FP), DI
	MOVQ sum+8(FP), DX
	MOVQ buf+16(FP), SI
	MOVQ stride+24(FP), R8
	MOVQ off+32(FP), R9
	MOVQ cols+40(FP), R10
	MOVQ ncols+48(FP), CX
	MOVQ wp+56(FP), R11
	VBROADCASTSD bs+64(FP), Z15
	VMULPD 0(DX), Z15, Z0
	VMULPD 64(DX), Z15, Z1
	VMULPD 128(DX), Z15, Z2
	VMULPD 192(DX), Z15, Z3
	ADDQ R9, SI
	TESTQ CX, CX
	JZ sr64zscale
sr64zloop:
	MOVLQSX (R10), AX
	IMULQ R8, AX
	VBROADCASTSD (R11), Z15
	VMULPD 0(SI)(AX*1), Z15, Z8
	VMULPD 64(SI)(AX*1), Z15, Z9
	VMULPD 128(SI)(AX*1), Z15, Z10
	VMULPD 192(SI)(AX*1), Z15, Z11
	VADDPD Z8, Z0, Z0
	VADDPD Z9, Z1, Z1
	VADDPD Z10, Z2, Z2
	VADDPD Z11, Z3, Z3
	ADDQ $4, R10
	ADDQ $8, R11
	DECQ CX
	JNZ sr64zloop
sr64zscale:
	VBROADCASTSD invZ+72(FP), Z15
	VMULPD Z15, Z0, Z0
	VMULPD Z15, Z1, Z1
	VMULPD Z15, Z2, Z2
	VMULPD Z15, Z3, Z3
	VMOVUPD Z0, 0(DI)
	VMOVUPD Z1, 64(DI)
	VMOVUPD Z2, 128(DI)
	VMOVUPD Z3, 192(DI)
	MOVQ d+80(FP), DI
	TESTQ DI, DI
	JZ sr64zdone
	VBROADCASTSD ow+88(FP), Z15
	VMULPD Z15, Z0, Z0 // ow·a, then d + …, as axpy64
	VMULPD Z15, Z1, Z1
	VMULPD Z15, Z2, Z2
	VMULPD Z15, Z3, Z3
	VADDPD 0(DI), Z0, Z0
	VADDPD 64(DI), Z1, Z1
	VADDPD 128(DI), Z2, Z2
	VADDPD 192(DI), Z3, Z3
	VMOVUPD Z0, 0(DI)
	VMOVUPD Z1, 64(DI)
	VMOVUPD Z2, 128(DI)
	VMOVUPD Z3, 192(DI)
sr64zdone:
	VZEROUPPER
	RET

// func sumRows32z(sum, buf *float32, stride, n int)
TEXT ·sumRows32z(SB), NOSPLIT, $0-32
	MOVQ sum+0(FP), DI
	MOVQ buf+8(FP), SI
	MOVQ stride+16(FP), R8
	MOVQ n+24(FP), CX
	VMOVUPS 0(DI), Z0
	VMOVUPS 64(DI), Z1
	TESTQ CX, CX
	JZ srs32done
srs32loop:
	VADDPS 0(SI), Z0, Z0
	VADDPS 64(SI), Z1, Z1
	ADDQ R8, SI
	DECQ CX
	JNZ srs32loop
srs32done:
	VMOVUPS Z0, 0(DI)
	VMOVUPS Z1, 64(DI)
	VZEROUPPER
	RET

// func sumRows64z(sum, buf *float64, stride, n int)
TEXT ·sumRows64z(SB), NOSPLIT, $0-32
	MOVQ sum+0(FP), DI
	MOVQ buf+8(FP), SI
	MOVQ stride+16(FP), R8
	MOVQ n+24(FP), CX
	VMOVUPD 0(DI), Z0
	VMOVUPD 64(DI), Z1
	VMOVUPD 128(DI), Z2
	VMOVUPD 192(DI), Z3
	TESTQ CX, CX
	JZ srs64done
srs64loop:
	VADDPD 0(SI), Z0, Z0
	VADDPD 64(SI), Z1, Z1
	VADDPD 128(SI), Z2, Z2
	VADDPD 192(SI), Z3, Z3
	ADDQ R8, SI
	DECQ CX
	JNZ srs64loop
srs64done:
	VMOVUPD Z0, 0(DI)
	VMOVUPD Z1, 64(DI)
	VMOVUPD Z2, 128(DI)
	VMOVUPD Z3, 192(DI)
	VZEROUPPER
	RET

// func addVec32z(d, x *float32, n int)
// d[i] += x[i] for i < n, n a multiple of 16.
TEXT ·addVec32z(SB), NOSPLIT, $0-24
	MOVQ d+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $4, CX
	JZ av32done
av32loop:
	VMOVUPS (DI), Z0
	VADDPS (SI), Z0, Z0
	VMOVUPS Z0, (DI)
	ADDQ $64, DI
	ADDQ $64, SI
	DECQ CX
	JNZ av32loop
av32done:
	VZEROUPPER
	RET

// func addVec64z(d, x *float64, n int)
// d[i] += x[i] for i < n, n a multiple of 8.
TEXT ·addVec64z(SB), NOSPLIT, $0-24
	MOVQ d+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $3, CX
	JZ av64done
av64loop:
	VMOVUPD (DI), Z0
	VADDPD (SI), Z0, Z0
	VMOVUPD Z0, (DI)
	ADDQ $64, DI
	ADDQ $64, SI
	DECQ CX
	JNZ av64loop
av64done:
	VZEROUPPER
	RET

// The FFN of a run of tokens (ffnArgs; kernels512_amd64.go). Offsets of
// ffnArgs' fields:
#define FA_X 0
#define FA_TOKBYTES 8
#define FA_TOKENS 16
#define FA_NH 24
#define FA_GPTR 32
#define FA_GIDX 40
#define FA_GW 48
#define FA_VPTR 56
#define FA_VIDX 64
#define FA_VW 72
#define FA_OPTR 80
#define FA_OIDX 88
#define FA_OW 96
#define FA_GSPTR 104
#define FA_GSIDX 112
#define FA_GSVAL 120
#define FA_VSPTR 128
#define FA_VSIDX 136
#define FA_VSVAL 144
#define FA_H 152
#define FA_G 160
#define FA_SLOW 168
#define FA_LO 176
#define FA_HI 184
#define FA_RESIDUAL 192
#define FA_OUTONLY 200
#define FA_LO32 208
#define FA_HI32 212
#define FA_EXPS 216
#define FA_GOUT 224
#define FA_VOUT 232

// func ffn32z(a *ffnArgs) int
TEXT ·ffn32z(SB), NOSPLIT, $0-16
	MOVQ a+0(FP), BX
	VPXORD Z30, Z30, Z30
	VBROADCASTSS FA_LO32(BX), Z28
	VBROADCASTSS FA_HI32(BX), Z29
f32tok:
	CMPQ FA_TOKENS(BX), $0
	JEQ f32end
	MOVQ FA_X(BX), DI
	CMPQ FA_OUTONLY(BX), $0
	JEQ f32units
	MOVQ $0, FA_OUTONLY(BX)
	JMP f32out
f32units:
	XORQ R8, R8
	XORQ R9, R9
	MOVQ FA_GSPTR(BX), SI
	TESTQ SI, SI
	JZ f32nogs
	MOVLQSX (SI), R8
	MOVLQSX 4(SI), R9
f32nogs:
	XORQ R10, R10
	XORQ R11, R11
	MOVQ FA_VSPTR(BX), SI
	TESTQ SI, SI
	JZ f32novs
	MOVLQSX (SI), R10
	MOVLQSX 4(SI), R11
f32novs:
	XORQ R14, R14 // some unit left to Go
	XORQ CX, CX
f32unit:
	// gate: its static constant, then its dynamic entries fused in.
	VPXORD Z0, Z0, Z0
	CMPQ R8, R9
	JGE f32gc
	MOVQ FA_GSIDX(BX), SI
	MOVLQSX (SI)(R8*4), AX
	CMPQ AX, CX
	JNE f32gc
	MOVQ FA_GSVAL(BX), SI
	VBROADCASTSS (SI)(R8*4), Z0
	INCQ R8
f32gc:
	VMOVAPS Z0, Z1
	MOVQ FA_GPTR(BX), SI
	MOVLQSX (SI)(CX*4), R12
	MOVLQSX 4(SI)(CX*4), R13
	CMPQ R12, R13
	JGE f32gdone
	MOVQ FA_GIDX(BX), SI
	MOVQ FA_GW(BX), DX
f32ge:
	MOVLQSX (SI)(R12*4), AX
	SHLQ $7, AX
	VBROADCASTSS (DX)(R12*4), Z6
	VFMADD231PS (DI)(AX*1), Z6, Z0
	VFMADD231PS 64(DI)(AX*1), Z6, Z1
	INCQ R12
	CMPQ R12, R13
	JLT f32ge
f32gdone:
	// value, the same way.
	VPXORD Z2, Z2, Z2
	CMPQ R10, R11
	JGE f32vc
	MOVQ FA_VSIDX(BX), SI
	MOVLQSX (SI)(R10*4), AX
	CMPQ AX, CX
	JNE f32vc
	MOVQ FA_VSVAL(BX), SI
	VBROADCASTSS (SI)(R10*4), Z2
	INCQ R10
f32vc:
	VMOVAPS Z2, Z3
	MOVQ FA_VPTR(BX), SI
	MOVLQSX (SI)(CX*4), R12
	MOVLQSX 4(SI)(CX*4), R13
	CMPQ R12, R13
	JGE f32vdone
	MOVQ FA_VIDX(BX), SI
	MOVQ FA_VW(BX), DX
f32ve:
	MOVLQSX (SI)(R12*4), AX
	SHLQ $7, AX
	VBROADCASTSS (DX)(R12*4), Z6
	VFMADD231PS (DI)(AX*1), Z6, Z2
	VFMADD231PS 64(DI)(AX*1), Z6, Z3
	INCQ R12
	CMPQ R12, R13
	JLT f32ve
f32vdone:
	// Each unit's gate and value, for the β probe (probeFFN).
	MOVQ FA_GOUT(BX), SI
	TESTQ SI, SI
	JZ f32nogout
	MOVQ CX, AX
	SHLQ $7, AX
	VMOVUPS Z0, (SI)(AX*1)
	VMOVUPS Z1, 64(SI)(AX*1)
	MOVQ FA_VOUT(BX), SI
	VMOVUPS Z2, (SI)(AX*1)
	VMOVUPS Z3, 64(SI)(AX*1)
f32nogout:
	// SiLU is relu unless some gate lies in (lo, hi) or is NaN.
	VCMPPS $0x1e, Z28, Z0, K1 // g > lo (GT_OQ)
	VCMPPS $0x11, Z29, Z0, K2 // g < hi (LT_OQ)
	KANDW K2, K1, K1
	VCMPPS $0x03, Z0, Z0, K2  // NaN
	KORW K2, K1, K1
	VCMPPS $0x1e, Z28, Z1, K2
	VCMPPS $0x11, Z29, Z1, K3
	KANDW K3, K2, K2
	KORW K2, K1, K1
	VCMPPS $0x03, Z1, Z1, K2
	KORW K2, K1, K1
	MOVQ CX, AX
	SHLQ $7, AX
	MOVQ FA_H(BX), SI
	MOVQ FA_SLOW(BX), DX
	KORTESTW K1, K1
	JNZ f32slow
	VMAXPS Z30, Z0, Z0
	VMAXPS Z30, Z1, Z1
	VMULPS Z2, Z0, Z0
	VMULPS Z3, Z1, Z1
	VMOVUPS Z0, (SI)(AX*1)
	VMOVUPS Z1, 64(SI)(AX*1)
	MOVB $0, (DX)(CX*1)
	JMP f32unext
f32slow:
	VMOVUPS Z2, (SI)(AX*1)
	VMOVUPS Z3, 64(SI)(AX*1)
	MOVQ FA_G(BX), SI
	VMOVUPS Z0, (SI)(AX*1)
	VMOVUPS Z1, 64(SI)(AX*1)
	MOVB $1, (DX)(CX*1)
	MOVQ $1, R14
f32unext:
	INCQ CX
	CMPQ CX, FA_NH(BX)
	JLT f32unit
	TESTQ R14, R14
	JNZ f32stop
f32out:
	CMPQ FA_RESIDUAL(BX), $0
	JNE f32oadd
	MOVQ FA_TOKBYTES(BX), AX
	XORQ DX, DX
f32clr:
	VMOVUPS Z30, (DI)(DX*1)
	ADDQ $64, DX
	CMPQ DX, AX
	JLT f32clr
f32oadd:
	XORQ CX, CX
f32ou:
	MOVQ CX, AX
	SHLQ $7, AX
	MOVQ FA_H(BX), SI
	VMOVUPS (SI)(AX*1), Z0
	VMOVUPS 64(SI)(AX*1), Z1
	MOVQ FA_OPTR(BX), SI
	MOVLQSX (SI)(CX*4), R12
	MOVLQSX 4(SI)(CX*4), R13
	CMPQ R12, R13
	JGE f32onext
	MOVQ FA_OIDX(BX), SI
	MOVQ FA_OW(BX), DX
f32oe:
	MOVLQSX (SI)(R12*4), AX
	SHLQ $7, AX
	VBROADCASTSS (DX)(R12*4), Z6
	VMOVUPS (DI)(AX*1), Z4
	VMOVUPS 64(DI)(AX*1), Z5
	VFMADD231PS Z0, Z6, Z4 // x + w·h, as axpy32
	VFMADD231PS Z1, Z6, Z5
	VMOVUPS Z4, (DI)(AX*1)
	VMOVUPS Z5, 64(DI)(AX*1)
	INCQ R12
	CMPQ R12, R13
	JLT f32oe
f32onext:
	INCQ CX
	CMPQ CX, FA_NH(BX)
	JLT f32ou
	// next token
	ADDQ FA_TOKBYTES(BX), DI
	MOVQ DI, FA_X(BX)
	CMPQ FA_GSPTR(BX), $0
	JEQ f32ngs
	ADDQ $4, FA_GSPTR(BX)
f32ngs:
	CMPQ FA_VSPTR(BX), $0
	JEQ f32nvs
	ADDQ $4, FA_VSPTR(BX)
f32nvs:
	DECQ FA_TOKENS(BX)
	JMP f32tok
f32end:
	VZEROUPPER
	MOVQ $0, ret+8(FP)
	RET
f32stop:
	VZEROUPPER
	MOVQ $1, ret+8(FP)
	RET

// func ffn64z(a *ffnArgs) int
TEXT ·ffn64z(SB), NOSPLIT, $0-16
	MOVQ a+0(FP), BX
	VPXORQ Z30, Z30, Z30
	VBROADCASTSD FA_LO(BX), Z28
	VBROADCASTSD FA_HI(BX), Z29
f64tok:
	CMPQ FA_TOKENS(BX), $0
	JEQ f64end
	MOVQ FA_X(BX), DI
	CMPQ FA_OUTONLY(BX), $0
	JEQ f64units
	MOVQ $0, FA_OUTONLY(BX)
	JMP f64out
f64units:
	XORQ R8, R8
	XORQ R9, R9
	MOVQ FA_GSPTR(BX), SI
	TESTQ SI, SI
	JZ f64nogs
	MOVLQSX (SI), R8
	MOVLQSX 4(SI), R9
f64nogs:
	XORQ R10, R10
	XORQ R11, R11
	MOVQ FA_VSPTR(BX), SI
	TESTQ SI, SI
	JZ f64novs
	MOVLQSX (SI), R10
	MOVLQSX 4(SI), R11
f64novs:
	XORQ R14, R14
	XORQ CX, CX
f64unit:
	// gate: its static constant, then each product rounded and added.
	VPXORQ Z0, Z0, Z0
	CMPQ R8, R9
	JGE f64gc
	MOVQ FA_GSIDX(BX), SI
	MOVLQSX (SI)(R8*4), AX
	CMPQ AX, CX
	JNE f64gc
	MOVQ FA_GSVAL(BX), SI
	VBROADCASTSD (SI)(R8*8), Z0
	INCQ R8
f64gc:
	VMOVAPD Z0, Z1
	VMOVAPD Z0, Z2
	VMOVAPD Z0, Z3
	MOVQ FA_GPTR(BX), SI
	MOVLQSX (SI)(CX*4), R12
	MOVLQSX 4(SI)(CX*4), R13
	CMPQ R12, R13
	JGE f64gdone
	MOVQ FA_GIDX(BX), SI
	MOVQ FA_GW(BX), DX
f64ge:
	MOVLQSX (SI)(R12*4), AX
	SHLQ $8, AX
	VBROADCASTSD (DX)(R12*8), Z15
	VMULPD (DI)(AX*1), Z15, Z8
	VMULPD 64(DI)(AX*1), Z15, Z9
	VMULPD 128(DI)(AX*1), Z15, Z10
	VMULPD 192(DI)(AX*1), Z15, Z11
	VADDPD Z8, Z0, Z0
	VADDPD Z9, Z1, Z1
	VADDPD Z10, Z2, Z2
	VADDPD Z11, Z3, Z3
	INCQ R12
	CMPQ R12, R13
	JLT f64ge
f64gdone:
	VPXORQ Z4, Z4, Z4
	CMPQ R10, R11
	JGE f64vc
	MOVQ FA_VSIDX(BX), SI
	MOVLQSX (SI)(R10*4), AX
	CMPQ AX, CX
	JNE f64vc
	MOVQ FA_VSVAL(BX), SI
	VBROADCASTSD (SI)(R10*8), Z4
	INCQ R10
f64vc:
	VMOVAPD Z4, Z5
	VMOVAPD Z4, Z6
	VMOVAPD Z4, Z7
	MOVQ FA_VPTR(BX), SI
	MOVLQSX (SI)(CX*4), R12
	MOVLQSX 4(SI)(CX*4), R13
	CMPQ R12, R13
	JGE f64vdone
	MOVQ FA_VIDX(BX), SI
	MOVQ FA_VW(BX), DX
f64ve:
	MOVLQSX (SI)(R12*4), AX
	SHLQ $8, AX
	VBROADCASTSD (DX)(R12*8), Z15
	VMULPD (DI)(AX*1), Z15, Z8
	VMULPD 64(DI)(AX*1), Z15, Z9
	VMULPD 128(DI)(AX*1), Z15, Z10
	VMULPD 192(DI)(AX*1), Z15, Z11
	VADDPD Z8, Z4, Z4
	VADDPD Z9, Z5, Z5
	VADDPD Z10, Z6, Z6
	VADDPD Z11, Z7, Z7
	INCQ R12
	CMPQ R12, R13
	JLT f64ve
f64vdone:
	MOVQ FA_GOUT(BX), SI
	TESTQ SI, SI
	JZ f64nogout
	MOVQ CX, AX
	SHLQ $8, AX
	VMOVUPD Z0, (SI)(AX*1)
	VMOVUPD Z1, 64(SI)(AX*1)
	VMOVUPD Z2, 128(SI)(AX*1)
	VMOVUPD Z3, 192(SI)(AX*1)
	MOVQ FA_VOUT(BX), SI
	VMOVUPD Z4, (SI)(AX*1)
	VMOVUPD Z5, 64(SI)(AX*1)
	VMOVUPD Z6, 128(SI)(AX*1)
	VMOVUPD Z7, 192(SI)(AX*1)
f64nogout:
	// Left to Go: a NaN gate, or one inside (lo, hi) below −709 (exp(−g)
	// would overflow: math.Exp's other branch).
	KXORW K1, K1, K1
	VCMPPD $0x03, Z0, Z0, K2
	KORW K2, K1, K1
	VCMPPD $0x1e, Z28, Z0, K3
	VCMPPD $0x11, Z29, Z0, K4
	KANDW K4, K3, K3
	VCMPPD.BCST $0x11, expc<>+136(SB), Z0, K5
	KANDW K3, K5, K5
	KORW K5, K1, K1
	VCMPPD $0x03, Z1, Z1, K2
	KORW K2, K1, K1
	VCMPPD $0x1e, Z28, Z1, K3
	VCMPPD $0x11, Z29, Z1, K4
	KANDW K4, K3, K3
	VCMPPD.BCST $0x11, expc<>+136(SB), Z1, K5
	KANDW K3, K5, K5
	KORW K5, K1, K1
	VCMPPD $0x03, Z2, Z2, K2
	KORW K2, K1, K1
	VCMPPD $0x1e, Z28, Z2, K3
	VCMPPD $0x11, Z29, Z2, K4
	KANDW K4, K3, K3
	VCMPPD.BCST $0x11, expc<>+136(SB), Z2, K5
	KANDW K3, K5, K5
	KORW K5, K1, K1
	VCMPPD $0x03, Z3, Z3, K2
	KORW K2, K1, K1
	VCMPPD $0x1e, Z28, Z3, K3
	VCMPPD $0x11, Z29, Z3, K4
	KANDW K4, K3, K3
	VCMPPD.BCST $0x11, expc<>+136(SB), Z3, K5
	KANDW K3, K5, K5
	KORW K5, K1, K1
	KORTESTW K1, K1
	JNZ f64slowpre
	// SiLU: relu(g), and g/(1 + exp(−g)) on the lanes inside (lo, hi), as
	// silu computes it (exp: math.Exp's bits); times the value.
	VMAXPD Z30, Z0, Z16
	VCMPPD $0x1e, Z28, Z0, K3
	VCMPPD $0x11, Z29, Z0, K4
	KANDW K4, K3, K3
	KORTESTW K3, K3
	JZ f64relu0
	VPXORQ.BCST expc<>+128(SB), Z0, Z17
	EXP8(Z17, Z18, Z19, Y19, Z20, Z21)
	VADDPD.BCST expc<>+88(SB), Z18, Z18
	VDIVPD Z18, Z0, Z18
	VMOVAPD Z18, K3, Z16
	KMOVW K3, AX
	POPCNTL AX, AX
	ADDQ AX, FA_EXPS(BX)
f64relu0:
	VMULPD Z4, Z16, Z0
	VMAXPD Z30, Z1, Z16
	VCMPPD $0x1e, Z28, Z1, K3
	VCMPPD $0x11, Z29, Z1, K4
	KANDW K4, K3, K3
	KORTESTW K3, K3
	JZ f64relu1
	VPXORQ.BCST expc<>+128(SB), Z1, Z17
	EXP8(Z17, Z18, Z19, Y19, Z20, Z21)
	VADDPD.BCST expc<>+88(SB), Z18, Z18
	VDIVPD Z18, Z1, Z18
	VMOVAPD Z18, K3, Z16
	KMOVW K3, AX
	POPCNTL AX, AX
	ADDQ AX, FA_EXPS(BX)
f64relu1:
	VMULPD Z5, Z16, Z1
	VMAXPD Z30, Z2, Z16
	VCMPPD $0x1e, Z28, Z2, K3
	VCMPPD $0x11, Z29, Z2, K4
	KANDW K4, K3, K3
	KORTESTW K3, K3
	JZ f64relu2
	VPXORQ.BCST expc<>+128(SB), Z2, Z17
	EXP8(Z17, Z18, Z19, Y19, Z20, Z21)
	VADDPD.BCST expc<>+88(SB), Z18, Z18
	VDIVPD Z18, Z2, Z18
	VMOVAPD Z18, K3, Z16
	KMOVW K3, AX
	POPCNTL AX, AX
	ADDQ AX, FA_EXPS(BX)
f64relu2:
	VMULPD Z6, Z16, Z2
	VMAXPD Z30, Z3, Z16
	VCMPPD $0x1e, Z28, Z3, K3
	VCMPPD $0x11, Z29, Z3, K4
	KANDW K4, K3, K3
	KORTESTW K3, K3
	JZ f64relu3
	VPXORQ.BCST expc<>+128(SB), Z3, Z17
	EXP8(Z17, Z18, Z19, Y19, Z20, Z21)
	VADDPD.BCST expc<>+88(SB), Z18, Z18
	VDIVPD Z18, Z3, Z18
	VMOVAPD Z18, K3, Z16
	KMOVW K3, AX
	POPCNTL AX, AX
	ADDQ AX, FA_EXPS(BX)
f64relu3:
	VMULPD Z7, Z16, Z3
	MOVQ CX, AX
	SHLQ $8, AX
	MOVQ FA_H(BX), SI
	MOVQ FA_SLOW(BX), DX
	VMOVUPD Z0, (SI)(AX*1)
	VMOVUPD Z1, 64(SI)(AX*1)
	VMOVUPD Z2, 128(SI)(AX*1)
	VMOVUPD Z3, 192(SI)(AX*1)
	MOVB $0, (DX)(CX*1)
	JMP f64unext
f64slowpre:
	MOVQ CX, AX
	SHLQ $8, AX
	MOVQ FA_H(BX), SI
	MOVQ FA_SLOW(BX), DX
f64slow:
	VMOVUPD Z4, (SI)(AX*1)
	VMOVUPD Z5, 64(SI)(AX*1)
	VMOVUPD Z6, 128(SI)(AX*1)
	VMOVUPD Z7, 192(SI)(AX*1)
	MOVQ FA_G(BX), SI
	VMOVUPD Z0, (SI)(AX*1)
	VMOVUPD Z1, 64(SI)(AX*1)
	VMOVUPD Z2, 128(SI)(AX*1)
	VMOVUPD Z3, 192(SI)(AX*1)
	MOVB $1, (DX)(CX*1)
	MOVQ $1, R14
f64unext:
	INCQ CX
	CMPQ CX, FA_NH(BX)
	JLT f64unit
	TESTQ R14, R14
	JNZ f64stop
f64out:
	CMPQ FA_RESIDUAL(BX), $0
	JNE f64oadd
	MOVQ FA_TOKBYTES(BX), AX
	XORQ DX, DX
f64clr:
	VMOVUPD Z30, (DI)(DX*1)
	ADDQ $64, DX
	CMPQ DX, AX
	JLT f64clr
f64oadd:
	XORQ CX, CX
f64ou:
	MOVQ CX, AX
	SHLQ $8, AX
	MOVQ FA_H(BX), SI
	VMOVUPD (SI)(AX*1), Z0
	VMOVUPD 64(SI)(AX*1), Z1
	VMOVUPD 128(SI)(AX*1), Z2
	VMOVUPD 192(SI)(AX*1), Z3
	MOVQ FA_OPTR(BX), SI
	MOVLQSX (SI)(CX*4), R12
	MOVLQSX 4(SI)(CX*4), R13
	CMPQ R12, R13
	JGE f64onext
	MOVQ FA_OIDX(BX), SI
	MOVQ FA_OW(BX), DX
f64oe:
	MOVLQSX (SI)(R12*4), AX
	SHLQ $8, AX
	VBROADCASTSD (DX)(R12*8), Z15
	VMULPD Z15, Z0, Z8 // w·h, then x + …, as axpy64
	VMULPD Z15, Z1, Z9
	VMULPD Z15, Z2, Z10
	VMULPD Z15, Z3, Z11
	VADDPD (DI)(AX*1), Z8, Z8
	VADDPD 64(DI)(AX*1), Z9, Z9
	VADDPD 128(DI)(AX*1), Z10, Z10
	VADDPD 192(DI)(AX*1), Z11, Z11
	VMOVUPD Z8, (DI)(AX*1)
	VMOVUPD Z9, 64(DI)(AX*1)
	VMOVUPD Z10, 128(DI)(AX*1)
	VMOVUPD Z11, 192(DI)(AX*1)
	INCQ R12
	CMPQ R12, R13
	JLT f64oe
f64onext:
	INCQ CX
	CMPQ CX, FA_NH(BX)
	JLT f64ou
	ADDQ FA_TOKBYTES(BX), DI
	MOVQ DI, FA_X(BX)
	CMPQ FA_GSPTR(BX), $0
	JEQ f64ngs
	ADDQ $4, FA_GSPTR(BX)
f64ngs:
	CMPQ FA_VSPTR(BX), $0
	JEQ f64nvs
	ADDQ $4, FA_VSPTR(BX)
f64nvs:
	DECQ FA_TOKENS(BX)
	JMP f64tok
f64end:
	VZEROUPPER
	MOVQ $0, ret+8(FP)
	RET
f64stop:
	VZEROUPPER
	MOVQ $1, ret+8(FP)
	RET

// Fused attention (worker.block): static-score heads, each one value row
// into one output dimension, over a run of queries; the pass's input
// stream xOld (V rows read there), its output stream xNew (each query's
// stream copied there first, then the heads added, in order, as the
// in-place sublayer adds them). Offsets of attnArgs and attnHead:
#define AA_XOLD 0
#define AA_XNEW 8
#define AA_XSRC 16
#define AA_TOKBYTES 24
#define AA_TOKENS 32
#define AA_TOK 40
#define AA_NH 48
#define AA_HEADS 56
#define AH_PTR 0
#define AH_COLS 8
#define AH_WP 16
#define AH_BS 24
#define AH_INVZ 32
#define AH_SUM 40
#define AH_VOFF 48
#define AH_OOFF 56
#define AH_OW64 64
#define AH_OW32 72
#define AH_SOFT 80
#define AH_SIZE 88

// func attnRun32z(a *attnArgs)
TEXT ·attnRun32z(SB), NOSPLIT, $0-8
	MOVQ a+0(FP), BX
ar32tok:
	CMPQ AA_TOKENS(BX), $0
	JEQ ar32end
	MOVQ AA_XNEW(BX), DI
	MOVQ AA_XSRC(BX), SI
	MOVQ AA_TOKBYTES(BX), AX
	XORQ DX, DX
ar32copy:
	VMOVUPS (SI)(DX*1), Z0
	VMOVUPS Z0, (DI)(DX*1)
	ADDQ $64, DX
	CMPQ DX, AX
	JLT ar32copy
	MOVQ AA_TOK(BX), R12        // query i
	MOVQ AA_HEADS(BX), R13      // its head descriptor
	MOVQ AA_NH(BX), R14
ar32head:
	MOVQ AH_PTR(R13), SI
	MOVLQSX (SI)(R12*4), R8     // keys ptr[i] … ptr[i+1]
	MOVLQSX 4(SI)(R12*4), R9
	MOVQ AH_OOFF(R13), AX
	LEAQ (DI)(AX*1), R10        // the output dimension of query i
	MOVQ AA_XOLD(BX), SI
	ADDQ AH_VOFF(R13), SI       // the V dimension of token 0
	MOVQ AH_COLS(R13), R11
	MOVQ AA_TOKBYTES(BX), CX
	CMPQ AH_SOFT(R13), $0
	JNE ar32soft
	// hard: d += ow·v_j over the selected keys (gather, direct)
	CMPQ R8, R9
	JGE ar32next
	VBROADCASTSS AH_OW32(R13), Z15
	VMOVUPS 0(R10), Z0
	VMOVUPS 64(R10), Z1
ar32hk:
	MOVLQSX (R11)(R8*4), AX
	IMULQ CX, AX
	VFMADD231PS 0(SI)(AX*1), Z15, Z0
	VFMADD231PS 64(SI)(AX*1), Z15, Z1
	INCQ R8
	CMPQ R8, R9
	JLT ar32hk
	VMOVUPS Z0, 0(R10)
	VMOVUPS Z1, 64(R10)
	JMP ar32next
ar32soft:
	// softmax: a = (bs·Σv + Σ wp_j·v_j)·invZ; d += ow·a (softRow)
	MOVQ AH_BS(R13), DX
	VBROADCASTSS (DX)(R12*4), Z14
	MOVQ AH_SUM(R13), DX
	VMULPS 0(DX), Z14, Z0
	VMULPS 64(DX), Z14, Z1
	MOVQ AH_WP(R13), DX
	CMPQ R8, R9
	JGE ar32sscale
ar32sk:
	MOVLQSX (R11)(R8*4), AX
	IMULQ CX, AX
	VBROADCASTSS (DX)(R8*4), Z15
	VFMADD231PS 0(SI)(AX*1), Z15, Z0
	VFMADD231PS 64(SI)(AX*1), Z15, Z1
	INCQ R8
	CMPQ R8, R9
	JLT ar32sk
ar32sscale:
	MOVQ AH_INVZ(R13), DX
	VBROADCASTSS (DX)(R12*4), Z14
	VMULPS Z14, Z0, Z0
	VMULPS Z14, Z1, Z1
	VBROADCASTSS AH_OW32(R13), Z15
	VMOVUPS 0(R10), Z4
	VFMADD231PS Z0, Z15, Z4
	VMOVUPS Z4, 0(R10)
	VMOVUPS 64(R10), Z5
	VFMADD231PS Z1, Z15, Z5
	VMOVUPS Z5, 64(R10)
ar32next:
	ADDQ $AH_SIZE, R13
	DECQ R14
	JNZ ar32head
	// next query
	MOVQ AA_TOKBYTES(BX), AX
	ADDQ AX, AA_XNEW(BX)
	ADDQ AX, AA_XSRC(BX)
	INCQ AA_TOK(BX)
	DECQ AA_TOKENS(BX)
	JMP ar32tok
ar32end:
	VZEROUPPER
	RET

// func attnRun64z(a *attnArgs)
TEXT ·attnRun64z(SB), NOSPLIT, $0-8
	MOVQ a+0(FP), BX
ar64tok:
	CMPQ AA_TOKENS(BX), $0
	JEQ ar64end
	MOVQ AA_XNEW(BX), DI
	MOVQ AA_XSRC(BX), SI
	MOVQ AA_TOKBYTES(BX), AX
	XORQ DX, DX
ar64copy:
	VMOVUPS (SI)(DX*1), Z0
	VMOVUPS Z0, (DI)(DX*1)
	ADDQ $64, DX
	CMPQ DX, AX
	JLT ar64copy
	MOVQ AA_TOK(BX), R12        // query i
	MOVQ AA_HEADS(BX), R13      // its head descriptor
	MOVQ AA_NH(BX), R14
ar64head:
	MOVQ AH_PTR(R13), SI
	MOVLQSX (SI)(R12*4), R8     // keys ptr[i] … ptr[i+1]
	MOVLQSX 4(SI)(R12*4), R9
	MOVQ AH_OOFF(R13), AX
	LEAQ (DI)(AX*1), R10        // the output dimension of query i
	MOVQ AA_XOLD(BX), SI
	ADDQ AH_VOFF(R13), SI       // the V dimension of token 0
	MOVQ AH_COLS(R13), R11
	MOVQ AA_TOKBYTES(BX), CX
	CMPQ AH_SOFT(R13), $0
	JNE ar64soft
	// hard: d += ow·v_j over the selected keys (gather, direct)
	CMPQ R8, R9
	JGE ar64next
	VBROADCASTSD AH_OW64(R13), Z15
	VMOVUPD 0(R10), Z0
	VMOVUPD 64(R10), Z1
	VMOVUPD 128(R10), Z2
	VMOVUPD 192(R10), Z3
ar64hk:
	MOVLQSX (R11)(R8*4), AX
	IMULQ CX, AX
	VMULPD 0(SI)(AX*1), Z15, Z8
	VMULPD 64(SI)(AX*1), Z15, Z9
	VMULPD 128(SI)(AX*1), Z15, Z10
	VMULPD 192(SI)(AX*1), Z15, Z11
	VADDPD Z8, Z0, Z0
	VADDPD Z9, Z1, Z1
	VADDPD Z10, Z2, Z2
	VADDPD Z11, Z3, Z3
	INCQ R8
	CMPQ R8, R9
	JLT ar64hk
	VMOVUPD Z0, 0(R10)
	VMOVUPD Z1, 64(R10)
	VMOVUPD Z2, 128(R10)
	VMOVUPD Z3, 192(R10)
	JMP ar64next
ar64soft:
	// softmax: a = (bs·Σv + Σ wp_j·v_j)·invZ; d += ow·a (softRow)
	MOVQ AH_BS(R13), DX
	VBROADCASTSD (DX)(R12*8), Z14
	MOVQ AH_SUM(R13), DX
	VMULPD 0(DX), Z14, Z0
	VMULPD 64(DX), Z14, Z1
	VMULPD 128(DX), Z14, Z2
	VMULPD 192(DX), Z14, Z3
	MOVQ AH_WP(R13), DX
	CMPQ R8, R9
	JGE ar64sscale
ar64sk:
	MOVLQSX (R11)(R8*4), AX
	IMULQ CX, AX
	VBROADCASTSD (DX)(R8*8), Z15
	VMULPD 0(SI)(AX*1), Z15, Z8
	VMULPD 64(SI)(AX*1), Z15, Z9
	VMULPD 128(SI)(AX*1), Z15, Z10
	VMULPD 192(SI)(AX*1), Z15, Z11
	VADDPD Z8, Z0, Z0
	VADDPD Z9, Z1, Z1
	VADDPD Z10, Z2, Z2
	VADDPD Z11, Z3, Z3
	INCQ R8
	CMPQ R8, R9
	JLT ar64sk
ar64sscale:
	MOVQ AH_INVZ(R13), DX
	VBROADCASTSD (DX)(R12*8), Z14
	VMULPD Z14, Z0, Z0
	VMULPD Z14, Z1, Z1
	VMULPD Z14, Z2, Z2
	VMULPD Z14, Z3, Z3
	VBROADCASTSD AH_OW64(R13), Z15
	VMULPD Z15, Z0, Z0
	VADDPD 0(R10), Z0, Z0
	VMOVUPD Z0, 0(R10)
	VMULPD Z15, Z1, Z1
	VADDPD 64(R10), Z1, Z1
	VMOVUPD Z1, 64(R10)
	VMULPD Z15, Z2, Z2
	VADDPD 128(R10), Z2, Z2
	VMOVUPD Z2, 128(R10)
	VMULPD Z15, Z3, Z3
	VADDPD 192(R10), Z3, Z3
	VMOVUPD Z3, 192(R10)
ar64next:
	ADDQ $AH_SIZE, R13
	DECQ R14
	JNZ ar64head
	// next query
	MOVQ AA_TOKBYTES(BX), AX
	ADDQ AX, AA_XNEW(BX)
	ADDQ AX, AA_XSRC(BX)
	INCQ AA_TOK(BX)
	DECQ AA_TOKENS(BX)
	JMP ar64tok
ar64end:
	VZEROUPPER
	RET

DATA probeZero<>+0(SB)/8, $0
GLOBL probeZero<>(SB), RODATA|NOPTR, $8
DATA probeNegInfZ<>+0(SB)/8, $0xfff0000000000000
GLOBL probeNegInfZ<>(SB), RODATA|NOPTR, $8

// func probeUnit64z(gate, pg, pv, vc *float32, hi, lo float32, t1, t2, dmax *float64) int
// probeUnit64 (kernels_amd64.s) eight lanes at a time: the same
// operations on each lane; the candidates' maximum reduced to four lanes
// (any order gives the same maximum: every candidate is ≤ 0, finite or
// −∞, and a zero's sign cannot change 1 + δ).
TEXT ·probeUnit64z(SB), NOSPLIT, $0-72
	MOVQ gate+0(FP), R8
	MOVQ pg+8(FP), R9
	MOVQ pv+16(FP), R10
	MOVQ vc+24(FP), R11
	VBROADCASTSS hi+32(FP), Y12   // hi, float32
	VBROADCASTSS lo+36(FP), Y13   // lo, float32
	MOVQ t1+40(FP), DI
	MOVQ t2+48(FP), SI
	MOVQ dmax+56(FP), DX
	VCVTPS2PD Y12, Z10            // hi, float64
	VCVTPS2PD Y13, Z11            // lo, float64
	VPXORQ Z15, Z15, Z15          // 0
	VBROADCASTSD probeNegInfZ<>(SB), Z14 // running max of the candidates
	KXORW K7, K7, K7              // slow lanes
	KXORW K6, K6, K6              // t1 ≠ 0 lanes
	KXORW K5, K5, K5              // t2 ≠ 0 lanes
	XORQ CX, CX                   // float32 offset
	XORQ BX, BX                   // float64 offset
pu64zloop:
	VCVTPS2PD (R8)(CX*1), Z0      // g0
	VCVTPS2PD (R9)(CX*1), Z1      // dg
	VCVTPS2PD (R10)(CX*1), Z2     // dv
	VCVTPS2PD (R11)(CX*1), Z3     // vc
	// slow: a non-finite input (x·0 is NaN) or g0 in (lo, hi) or NaN.
	VMULPD Z15, Z0, Z4
	VMULPD Z15, Z1, Z5
	VADDPD Z5, Z4, Z4
	VMULPD Z15, Z2, Z5
	VADDPD Z5, Z4, Z4
	VMULPD Z15, Z3, Z5
	VADDPD Z5, Z4, Z4
	VCMPPD $0x03, Z4, Z4, K1      // unordered
	KORW K1, K7, K7
	VCMPPD $0x1e, Z11, Z0, K1     // g0 > lo (GT_OQ)
	VCMPPD $0x11, Z10, Z0, K2     // g0 < hi (LT_OQ)
	KANDW K2, K1, K1
	VCMPPD $0x03, Z0, Z0, K2      // g0 NaN
	KORW K2, K1, K1
	KORW K1, K7, K7
	VCMPPD $0x1d, Z10, Z0, K2     // mHi: g0 ≥ hi (GE_OQ)
	VCMPPD $0x12, Z11, Z0, K3     // mLo: g0 ≤ lo (LE_OQ)
	// candidates: (hi−g0)/dg where mHi and dg > 0; (lo−g0)/dg where mLo and dg < 0.
	VMOVUPS (R8)(CX*1), Y4        // g0, float32
	VCMPPD $0x1e, Z15, Z1, K4     // dg > 0
	KANDW K2, K4, K4
	KORTESTW K4, K4
	JZ pu64znohi
	VBROADCASTSS hi+32(FP), Y12
	VSUBPS Y4, Y12, Y12           // hi − g0 (float32)
	VCVTPS2PD Y12, Z12
	VDIVPD Z1, Z12, Z12
	VMAXPD Z14, Z12, K4, Z14      // candidate lanes: max(candidate, running max)
pu64znohi:
	VCMPPD $0x11, Z15, Z1, K4     // dg < 0
	KANDW K3, K4, K4
	KORTESTW K4, K4
	JZ pu64znolo
	VBROADCASTSS lo+36(FP), Y12
	VSUBPS Y4, Y12, Y12           // lo − g0 (float32)
	VCVTPS2PD Y12, Z12
	VDIVPD Z1, Z12, Z12
	VMAXPD Z14, Z12, K4, Z14
pu64znolo:
	// t1 = dg·vc + g0·dv, t2 = dg·dv where mHi; 0 elsewhere.
	VMULPD Z3, Z1, Z4
	VMULPD Z2, Z0, Z6
	VADDPD Z6, Z4, Z4
	VMOVAPD.Z Z4, K2, Z4
	VMULPD Z2, Z1, Z6
	VMOVAPD.Z Z6, K2, Z6
	VMOVUPD Z4, (DI)(BX*1)
	VMOVUPD Z6, (SI)(BX*1)
	VCMPPD $0x04, Z15, Z4, K1     // t1 ≠ 0 (NEQ_UQ)
	KORW K1, K6, K6
	VCMPPD $0x04, Z15, Z6, K1
	KORW K1, K5, K5
	ADDQ $32, CX
	ADDQ $64, BX
	CMPQ BX, $256
	JLT pu64zloop
	VEXTRACTF64X4 $1, Z14, Y12
	VMAXPD Y12, Y14, Y14
	VMOVUPD Y14, (DX)
	XORQ R14, R14
	KORTESTW K6, K6
	JZ pu64za
	ORQ $1, R14
pu64za:
	KORTESTW K5, K5
	JZ pu64zb
	ORQ $2, R14
pu64zb:
	KORTESTW K7, K7
	JZ pu64zc
	ORQ $4, R14
pu64zc:
	MOVQ R14, ret+64(FP)
	VZEROUPPER
	RET
