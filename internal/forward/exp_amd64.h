// The constants and macros of the vectorised exp (exp_amd64.s), included
// by the kernels that evaluate exp in registers (kernels512_amd64.s).

DATA expc<>+0(SB)/8, $1.4426950408889634073599246810018920   // log₂e
DATA expc<>+8(SB)/8, $0.69314718055966295651160180568695068359375 // ln 2, upper
DATA expc<>+16(SB)/8, $0.28235290563031577122588448175013436025525412068e-12 // ln 2, lower
DATA expc<>+24(SB)/8, $0.0625
DATA expc<>+32(SB)/8, $2.4801587301587301587e-5
DATA expc<>+40(SB)/8, $1.9841269841269841270e-4
DATA expc<>+48(SB)/8, $1.3888888888888888889e-3
DATA expc<>+56(SB)/8, $8.3333333333333333333e-3
DATA expc<>+64(SB)/8, $4.1666666666666666667e-2
DATA expc<>+72(SB)/8, $1.6666666666666666667e-1
DATA expc<>+80(SB)/8, $0.5
DATA expc<>+88(SB)/8, $1.0
DATA expc<>+96(SB)/8, $2.0
DATA expc<>+104(SB)/8, $-708.0
DATA expc<>+112(SB)/8, $709.0
DATA expc<>+120(SB)/8, $1023
DATA expc<>+128(SB)/8, $0x8000000000000000 // the sign bit
DATA expc<>+136(SB)/8, $-709.0
GLOBL expc<>(SB), RODATA|NOPTR, $144

// EXP8 sets Zr = exp(Zx) for 8 float64 lanes with math.Exp's operations;
// Zx, Zr and the temporaries Zn (Yn its lower half), Zp, Zt must differ.
// Lanes outside [−708, 709] get unspecified values (EXPOK).
#define EXP8(Zx, Zr, Zn, Yn, Zp, Zt) \
	VMULPD.BCST expc<>+0(SB), Zx, Zt \
	VCVTPD2DQ Zt, Yn \
	VCVTDQ2PD Yn, Zt \
	VMOVAPD Zx, Zr \
	VFNMADD231PD.BCST expc<>+8(SB), Zt, Zr \
	VFNMADD231PD.BCST expc<>+16(SB), Zt, Zr \
	VMULPD.BCST expc<>+24(SB), Zr, Zr \
	VBROADCASTSD expc<>+32(SB), Zp \
	VFMADD213PD.BCST expc<>+40(SB), Zr, Zp \
	VFMADD213PD.BCST expc<>+48(SB), Zr, Zp \
	VFMADD213PD.BCST expc<>+56(SB), Zr, Zp \
	VFMADD213PD.BCST expc<>+64(SB), Zr, Zp \
	VFMADD213PD.BCST expc<>+72(SB), Zr, Zp \
	VFMADD213PD.BCST expc<>+80(SB), Zr, Zp \
	VFMADD213PD.BCST expc<>+88(SB), Zr, Zp \
	VMULPD Zp, Zr, Zr \
	VADDPD.BCST expc<>+96(SB), Zr, Zp \
	VMULPD Zp, Zr, Zr \
	VADDPD.BCST expc<>+96(SB), Zr, Zp \
	VMULPD Zp, Zr, Zr \
	VADDPD.BCST expc<>+96(SB), Zr, Zp \
	VMULPD Zp, Zr, Zr \
	VADDPD.BCST expc<>+96(SB), Zr, Zp \
	VFMADD213PD.BCST expc<>+88(SB), Zp, Zr \
	VPMOVSXDQ Yn, Zn \
	VPADDQ.BCST expc<>+120(SB), Zn, Zn \
	VPSLLQ $52, Zn, Zn \
	VMULPD Zn, Zr, Zr


// EXPOK sets AX to the mask of the lanes of Zx inside [−708, 709] (0xff:
// all eight), using K1 and K2.
#define EXPOK(Zx) \
	VCMPPD.BCST $0x1d, expc<>+104(SB), Zx, K1 \
	VCMPPD.BCST $0x12, expc<>+112(SB), Zx, K2 \
	KANDW K2, K1, K1 \
	KMOVW K1, AX

