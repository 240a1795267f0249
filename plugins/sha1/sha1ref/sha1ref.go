// Package sha1ref is an independent, straightforward reference
// implementation of SHA-1 (FIPS 180-4 §6.1) with any number of steps
// (1…80), on messages of any bit length. It is written apart from the
// circuit builder (plain uint32 arithmetic, the standard's padding,
// schedule and step function) and is the oracle for reduced-step instances
// that crypto/sha1 cannot compute; at 80 steps it is checked against
// crypto/sha1.
//
// Message bits are one byte per bit (0 or 1): bit i of a message is bit
// 7 − i%8 of its byte i/8 (most significant first).
package sha1ref

import (
	"fmt"
	"math/bits"
)

// Steps is the standard number of steps.
const Steps = 80

// IV returns the initial hash value H(0) (FIPS 180-4 §5.3.1).
func IV() [5]uint32 { return [5]uint32{0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0} }

// K returns the constant of step t (FIPS 180-4 §4.2.1).
func K(t int) uint32 {
	return [4]uint32{0x5a827999, 0x6ed9eba1, 0x8f1bbcdc, 0xca62c1d6}[t/20]
}

// Pad returns the padded message: msg, a 1, zeros to 448 mod 512 bits, and
// the length in bits as 64 bits, most significant first.
func Pad(msg []byte) []byte {
	out := append(append([]byte(nil), msg...), 1)
	for len(out)%512 != 448 {
		out = append(out, 0)
	}
	n := uint64(len(msg))
	for j := 63; j >= 0; j-- {
		out = append(out, byte(n>>uint(j))&1)
	}
	return out
}

// Compress returns H(i) from H(i−1) and one 512-bit block m (16 words) with
// the given number of steps.
func Compress(h [5]uint32, m [16]uint32, steps int) [5]uint32 {
	if steps < 1 || steps > Steps {
		panic(fmt.Sprintf("sha1ref: %d steps, want 1…80", steps))
	}
	var w [80]uint32
	copy(w[:], m[:])
	for t := 16; t < 80; t++ {
		w[t] = bits.RotateLeft32(w[t-3]^w[t-8]^w[t-14]^w[t-16], 1)
	}
	a, b, c, d, e := h[0], h[1], h[2], h[3], h[4]
	for t := range steps {
		var f uint32
		switch {
		case t < 20:
			f = b&c ^ ^b&d
		case t < 40 || t >= 60:
			f = b ^ c ^ d
		default:
			f = b&c ^ b&d ^ c&d
		}
		a, b, c, d, e = bits.RotateLeft32(a, 5)+f+e+K(t)+w[t], a, bits.RotateLeft32(b, 30), c, d
	}
	return [5]uint32{h[0] + a, h[1] + b, h[2] + c, h[3] + d, h[4] + e}
}

// Sum returns the digest of a message of bits (one byte per bit), 160 bits
// one byte per bit, with the given number of steps in every compression.
func Sum(msg []byte, steps int) []byte {
	p := Pad(msg)
	h := IV()
	for off := 0; off < len(p); off += 512 {
		var m [16]uint32
		for j := range 16 {
			for k := range 32 {
				m[j] = m[j]<<1 | uint32(p[off+32*j+k])
			}
		}
		h = Compress(h, m, steps)
	}
	out := make([]byte, 0, 160)
	for _, x := range h {
		for k := 31; k >= 0; k-- {
			out = append(out, byte(x>>uint(k))&1)
		}
	}
	return out
}
