// Package blake2sref is an independent, straightforward reference
// implementation of BLAKE2s-256 (RFC 7693), unkeyed, with any number of
// rounds (1…10) in its compression. It is written apart from the circuit
// builder (plain uint32 arithmetic, the RFC's G, σ and finalisation) and
// is the oracle for reduced-round instances that golang.org/x/crypto's
// blake2s cannot compute; at 10 rounds it is checked against x/crypto and
// RFC 7693's vector.
package blake2sref

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// Rounds is the standard number of rounds.
const Rounds = 10

// IV returns the initialisation vector (RFC 7693 §2.6: SHA-256's).
func IV() [8]uint32 {
	return [8]uint32{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19}
}

// Sigma returns the message schedule of round r (RFC 7693 §2.7; round r
// uses σ[r mod 10]).
func Sigma(r int) [16]int {
	return [10][16]int{
		{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
		{14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
		{11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4},
		{7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
		{9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13},
		{2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
		{12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11},
		{13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
		{6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5},
		{10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0},
	}[r%10]
}

// ParamBlock is the first parameter word of unkeyed BLAKE2s-256 (RFC 7693
// §2.5): digest length 32, key length 0, fanout 1, depth 1; h₀ is the IV
// with it XORed into word 0.
const ParamBlock = 0x01010000 | 32

// Compress is F (RFC 7693 §3.2) with the given rounds: the chaining value
// after the block m, t the bytes hashed so far, last the final-block flag.
func Compress(h [8]uint32, m [16]uint32, t uint64, last bool, rounds int) [8]uint32 {
	if rounds < 1 || rounds > Rounds {
		panic(fmt.Sprintf("blake2sref: %d rounds, want 1…10", rounds))
	}
	var v [16]uint32
	iv := IV()
	copy(v[:8], h[:])
	copy(v[8:], iv[:])
	v[12] ^= uint32(t)
	v[13] ^= uint32(t >> 32)
	if last {
		v[14] = ^v[14]
	}
	g := func(a, b, c, d int, x, y uint32) {
		v[a] = v[a] + v[b] + x
		v[d] = bits.RotateLeft32(v[d]^v[a], -16)
		v[c] = v[c] + v[d]
		v[b] = bits.RotateLeft32(v[b]^v[c], -12)
		v[a] = v[a] + v[b] + y
		v[d] = bits.RotateLeft32(v[d]^v[a], -8)
		v[c] = v[c] + v[d]
		v[b] = bits.RotateLeft32(v[b]^v[c], -7)
	}
	for r := range rounds {
		s := Sigma(r)
		g(0, 4, 8, 12, m[s[0]], m[s[1]])
		g(1, 5, 9, 13, m[s[2]], m[s[3]])
		g(2, 6, 10, 14, m[s[4]], m[s[5]])
		g(3, 7, 11, 15, m[s[6]], m[s[7]])
		g(0, 5, 10, 15, m[s[8]], m[s[9]])
		g(1, 6, 11, 12, m[s[10]], m[s[11]])
		g(2, 7, 8, 13, m[s[12]], m[s[13]])
		g(3, 4, 9, 14, m[s[14]], m[s[15]])
	}
	for i := range h {
		h[i] ^= v[i] ^ v[i+8]
	}
	return h
}

// Sum returns the BLAKE2s-256 digest of msg with the given rounds in
// every compression (RFC 7693 §3.3).
func Sum(msg []byte, rounds int) [32]byte {
	h := IV()
	h[0] ^= ParamBlock
	n := max(1, (len(msg)+63)/64)
	for k := range n {
		t := uint64(min(64*(k+1), len(msg)))
		h = Compress(h, words(msg[64*k:]), t, k == n-1, rounds)
	}
	return digest(h)
}

// Block returns the digest of one final block: the 64 bytes of block
// (zero-padded) with counter t, the first chaining value h₀ — BLAKE2s-256
// of a message of t ≤ 64 bytes when block holds it and zeros past it.
func Block(block []byte, t uint64, rounds int) [32]byte {
	h := IV()
	h[0] ^= ParamBlock
	return digest(Compress(h, words(block), t, true, rounds))
}

// words reads up to 64 bytes as 16 little-endian words, zero-padded.
func words(b []byte) [16]uint32 {
	var block [64]byte
	copy(block[:], b)
	var m [16]uint32
	for j := range m {
		m[j] = binary.LittleEndian.Uint32(block[4*j:])
	}
	return m
}

// digest writes a chaining value as the digest's bytes.
func digest(h [8]uint32) [32]byte {
	var out [32]byte
	for i, w := range h {
		binary.LittleEndian.PutUint32(out[4*i:], w)
	}
	return out
}
