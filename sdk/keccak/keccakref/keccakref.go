// Package keccakref is an independent, straightforward reference
// implementation of the Keccak-p[25w, n] permutation family and the sponge
// construction, as specified in FIPS 202 and the Keccak reference.
//
// The state is held as 25 lanes of w bits each (w = 1, 2, 4, ..., 64), stored
// in the low bits of uint64 values; all rotations are taken modulo w. The
// implementation favours clarity over speed and is intended to serve as a
// test oracle for other implementations.
package keccakref

import "fmt"

// State is the Keccak state: 25 lanes indexed [x+5*y], each holding w bits
// in its low bits.
type State [25]uint64

// Params describe a Keccak-p instance: the lane width w = 1<<LogW and the
// number of rounds n of Keccak-p[25w, n].
type Params struct {
	// LogW is log2 of the lane width; it must be in [0, 6].
	LogW int
	// Rounds is the number of rounds n; it must be non-negative.
	Rounds int
}

// W returns the lane width w = 1<<LogW in bits.
func (p Params) W() int { return 1 << p.LogW }

// B returns the permutation width b = 25*w in bits.
func (p Params) B() int { return 25 * p.W() }

// mask returns a uint64 whose low w bits are set.
func (p Params) mask() uint64 { return laneMask(p.LogW) }

func laneMask(logW int) uint64 {
	if logW >= 6 {
		return ^uint64(0)
	}
	return uint64(1)<<(uint(1)<<uint(logW)) - 1
}

func checkLogW(logW int) {
	if logW < 0 || logW > 6 {
		panic(fmt.Sprintf("keccakref: LogW %d out of range [0, 6]", logW))
	}
}

// DefaultRounds returns the number of rounds 12+2*logW of the full
// Keccak-f[25w] permutation.
func DefaultRounds(logW int) int { return 12 + 2*logW }

// rcBit returns the output rc(t) of the degree-8 LFSR of FIPS 202
// Algorithm 5, with t reduced modulo 255 (so t may be negative).
func rcBit(t int) uint64 {
	t = ((t % 255) + 255) % 255
	r := uint8(1) // R = 10000000, bit k of r holds R[k].
	for i := 0; i < t; i++ {
		// R = 0 || R; R[0] ^= R[8]; R[4] ^= R[8]; R[5] ^= R[8]; R[6] ^= R[8];
		// R = Trunc8(R).
		r8 := r >> 7
		r <<= 1
		if r8 != 0 {
			r ^= 0x71 // bits 0, 4, 5, 6
		}
	}
	return uint64(r & 1)
}

// RoundConstant returns the w-bit round constant (in the low w bits) for
// round index ir, where w = 1<<logW. The index ir may be negative: bit
// 2^j-1 of the constant is rc(j+7*ir) for j = 0..logW, where the LFSR index
// is reduced modulo 255.
func RoundConstant(logW, ir int) uint64 {
	checkLogW(logW)
	var rc uint64
	for j := 0; j <= logW; j++ {
		rc |= rcBit(j+7*ir) << (uint(1)<<uint(j) - 1)
	}
	return rc
}

// RoundIndices returns the round indices used by Keccak-p[25w, rounds]: the
// last rounds of the 12+2*logW standard indices, that is
// 12+2*logW-rounds, ..., 12+2*logW-1. Indices are negative when rounds
// exceeds 12+2*logW.
func RoundIndices(logW, rounds int) []int {
	if rounds < 0 {
		panic(fmt.Sprintf("keccakref: negative round count %d", rounds))
	}
	end := DefaultRounds(logW)
	idx := make([]int, rounds)
	for i := range idx {
		idx[i] = end - rounds + i
	}
	return idx
}

// ZeroConstantRounds counts the rounds of RoundIndices(logW, rounds) whose
// w-bit round constant is zero.
func ZeroConstantRounds(logW, rounds int) int {
	n := 0
	for _, ir := range RoundIndices(logW, rounds) {
		if RoundConstant(logW, ir) == 0 {
			n++
		}
	}
	return n
}

// RhoOffsets returns the rho rotation offsets (not yet reduced modulo w),
// indexed [x+5*y]: (t+1)(t+2)/2 for the t-th lane visited by
// (x, y) -> (y, 2x+3y) starting from (1, 0); lane (0, 0) has offset 0.
func RhoOffsets() [25]int {
	var r [25]int
	x, y := 1, 0
	for t := 0; t < 24; t++ {
		r[x+5*y] = (t + 1) * (t + 2) / 2
		x, y = y, (2*x+3*y)%5
	}
	return r
}

// rot rotates the w-bit lane v left by n positions (n taken modulo w).
func (p Params) rot(v uint64, n int) uint64 {
	w := p.W()
	n = ((n % w) + w) % w
	v &= p.mask()
	if n == 0 {
		return v
	}
	return (v<<uint(n) | v>>uint(w-n)) & p.mask()
}

// theta applies the theta step mapping.
func (p Params) theta(a State) State {
	var c, d [5]uint64
	for x := 0; x < 5; x++ {
		c[x] = a[x] ^ a[x+5] ^ a[x+10] ^ a[x+15] ^ a[x+20]
	}
	for x := 0; x < 5; x++ {
		d[x] = c[(x+4)%5] ^ p.rot(c[(x+1)%5], 1)
	}
	for y := 0; y < 5; y++ {
		for x := 0; x < 5; x++ {
			a[x+5*y] ^= d[x]
		}
	}
	return a
}

// rhoPi applies rho followed by pi: B[y, 2x+3y] = rot(A[x, y], r[x, y]).
func (p Params) rhoPi(a State) State {
	offs := RhoOffsets()
	var b State
	for y := 0; y < 5; y++ {
		for x := 0; x < 5; x++ {
			b[y+5*((2*x+3*y)%5)] = p.rot(a[x+5*y], offs[x+5*y])
		}
	}
	return b
}

// chi applies the chi step: A[x, y] = B[x, y] ^ (^B[x+1, y] & B[x+2, y]).
func (p Params) chi(b State) State {
	var a State
	m := p.mask()
	for y := 0; y < 5; y++ {
		for x := 0; x < 5; x++ {
			a[x+5*y] = (b[x+5*y] ^ (^b[(x+1)%5+5*y] & b[(x+2)%5+5*y])) & m
		}
	}
	return a
}

// iota xors the round constant for round index ir into lane (0, 0).
func (p Params) iota(a State, ir int) State {
	a[0] ^= RoundConstant(p.LogW, ir)
	return a
}

// round applies one round Rnd(A, ir) = iota(chi(pi(rho(theta(A)))), ir).
func (p Params) round(a State, ir int) State {
	return p.iota(p.chi(p.rhoPi(p.theta(a))), ir)
}

// Permute applies Keccak-p[25w, p.Rounds] to s in place, using the round
// indices given by RoundIndices. Each round applies theta, rho, pi, chi and
// iota in that order. Bits of s above the lane width are cleared.
func (p Params) Permute(s *State) {
	checkLogW(p.LogW)
	a := *s
	for i := range a {
		a[i] &= p.mask()
	}
	for _, ir := range RoundIndices(p.LogW, p.Rounds) {
		a = p.round(a, ir)
	}
	*s = a
}

// FromBits converts a flat bit string (one byte per bit, each 0 or 1) of
// length B() into a State, using the FIPS 202 order
// s[w*(5y+x)+z] = a[x][y][z]. It panics if len(bits) != B().
func (p Params) FromBits(bits []byte) State {
	checkLogW(p.LogW)
	if len(bits) != p.B() {
		panic(fmt.Sprintf("keccakref: FromBits got %d bits, want %d", len(bits), p.B()))
	}
	w := p.W()
	var s State
	for i, bit := range bits {
		s[i/w] |= uint64(bit&1) << uint(i%w)
	}
	return s
}

// ToBits converts a State into a flat bit string of length B() (one byte per
// bit) using the FIPS 202 order s[w*(5y+x)+z] = a[x][y][z].
func (p Params) ToBits(s State) []byte {
	checkLogW(p.LogW)
	w := p.W()
	bits := make([]byte, p.B())
	for i := range bits {
		bits[i] = byte(s[i/w]>>uint(i%w)) & 1
	}
	return bits
}

// Sponge runs the sponge construction over Keccak-p described by p. The
// input paddedMsg is an already padded bit string (one byte per bit) whose
// length is a multiple of rate. Each rate-bit block is xored into state bits
// [0, rate) and followed by a permutation. Output is then squeezed by taking
// the first rate bits of the state, permuting between squeezes only when
// more output is needed, until outBits bits have been produced.
//
// Sponge panics if rate is not in (0, B()) or if len(paddedMsg) is not a
// multiple of rate.
func (p Params) Sponge(paddedMsg []byte, rate, outBits int) []byte {
	checkLogW(p.LogW)
	if rate <= 0 || rate >= p.B() {
		panic(fmt.Sprintf("keccakref: rate %d out of range (0, %d)", rate, p.B()))
	}
	if len(paddedMsg)%rate != 0 {
		panic(fmt.Sprintf("keccakref: padded message length %d is not a multiple of rate %d", len(paddedMsg), rate))
	}
	if outBits < 0 {
		panic(fmt.Sprintf("keccakref: negative output length %d", outBits))
	}
	var s State
	for off := 0; off < len(paddedMsg); off += rate {
		bits := p.ToBits(s)
		for i := 0; i < rate; i++ {
			bits[i] ^= paddedMsg[off+i] & 1
		}
		s = p.FromBits(bits)
		p.Permute(&s)
	}
	out := make([]byte, 0, outBits)
	for {
		bits := p.ToBits(s)
		n := min(rate, outBits-len(out))
		out = append(out, bits[:n]...)
		if len(out) == outBits {
			return out
		}
		p.Permute(&s)
	}
}

// Pad10Star1 returns a new bit string consisting of msg, followed by the
// domain-separation suffix bits (for example {0, 1} for SHA-3, {1, 1, 1, 1}
// for SHAKE, or none for original Keccak), followed by the pad10*1 padding
// so that the total length is a multiple of rate. Inputs are not modified.
// It panics if rate is not positive.
func Pad10Star1(msg []byte, suffix []byte, rate int) []byte {
	if rate <= 0 {
		panic(fmt.Sprintf("keccakref: rate %d must be positive", rate))
	}
	m := len(msg) + len(suffix)
	j := ((-(m + 2))%rate + rate) % rate
	out := make([]byte, 0, m+j+2)
	out = append(out, msg...)
	out = append(out, suffix...)
	out = append(out, 1)
	out = append(out, make([]byte, j)...)
	out = append(out, 1)
	return out
}

// BytesToBits converts a byte string to a bit string (one byte per bit) in
// FIPS 202 order: bit i of the result is bit i%8 of b[i/8], least significant
// bit first.
func BytesToBits(b []byte) []byte {
	bits := make([]byte, 8*len(b))
	for i := range bits {
		bits[i] = (b[i/8] >> uint(i%8)) & 1
	}
	return bits
}

// BitsToBytes converts a bit string (one byte per bit) to bytes in FIPS 202
// order: bit i of the input becomes bit i%8 of byte i/8. If len(bits) is not a
// multiple of 8, the final byte is zero-padded in its high bits.
func BitsToBytes(bits []byte) []byte {
	b := make([]byte, (len(bits)+7)/8)
	for i, bit := range bits {
		b[i/8] |= (bit & 1) << uint(i%8)
	}
	return b
}

// Hash pads the message bits msgBits with suffix and pad10*1 for the given
// rate and runs the sponge over p, returning outBits output bits. It is
// equivalent to p.Sponge(Pad10Star1(msgBits, suffix, rate), rate, outBits).
func Hash(p Params, rate int, suffix, msgBits []byte, outBits int) []byte {
	return p.Sponge(Pad10Star1(msgBits, suffix, rate), rate, outBits)
}

// Compress loads in (one byte per bit, at most B() bits) into the first
// state bits of an otherwise zero state, applies Keccak-p[25w, p.Rounds] and
// returns the first outBits bits of the result: the compression function
// of the Merkle–Damgård chain and the Merkle tree. It panics if in or
// outBits exceed the state.
func (p Params) Compress(in []byte, outBits int) []byte {
	checkLogW(p.LogW)
	if len(in) > p.B() || outBits < 0 || outBits > p.B() {
		panic(fmt.Sprintf("keccakref: Compress of %d bits to %d bits does not fit a %d-bit state", len(in), outBits, p.B()))
	}
	bits := make([]byte, p.B())
	for i, b := range in {
		bits[i] = b & 1
	}
	s := p.FromBits(bits)
	p.Permute(&s)
	return p.ToBits(s)[:outBits]
}
