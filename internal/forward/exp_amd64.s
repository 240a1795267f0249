//go:build amd64 && !purego

#include "textflag.h"

// A vectorised exp that gives math.Exp's bits (exp_amd64.go). On amd64
// with FMA, math.Exp is a fixed sequence of IEEE operations (the runtime's
// exp_amd64.s, after Shibata's SIMD method): range reduction by n =
// round(x·log₂e) against ln 2 in two parts (fused), a degree-8 Taylor
// polynomial of x/16 (Horner, fused), four squarings of (1 + p) written as
// x·(x + 2), and the scale 2ⁿ. The same operations lane by lane, each
// correctly rounded, give the same result; only arguments outside
// [−708, 709] (or NaN) take other branches there, and are left to the
// caller (their lanes are flagged).

#include "exp_amd64.h"

// func exp64z(d, x *float64, n int) bool
TEXT ·exp64z(SB), NOSPLIT, $0-25
	MOVQ d+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	XORQ DX, DX // some lane left to the caller
	SHRQ $3, CX
	JZ e64done
e64loop:
	VMOVUPD (SI), Z0
	EXPOK(Z0)
	CMPL AX, $0xff
	JEQ e64ok
	MOVQ $1, DX
e64ok:
	EXP8(Z0, Z1, Z2, Y2, Z3, Z4)
	VMOVUPD Z1, (DI)
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JNZ e64loop
e64done:
	MOVB DX, ret+24(FP)
	VZEROUPPER
	RET
