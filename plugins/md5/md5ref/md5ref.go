// Package md5ref is an independent, straightforward reference
// implementation of MD5 (RFC 1321) with any number of steps (1…64), on
// messages of any bit length. It is written apart from the circuit builder
// (plain uint32 arithmetic, the RFC's padding and step function) and is
// the oracle for reduced-step instances that crypto/md5 cannot compute;
// at 64 steps it is checked against crypto/md5.
//
// Message bits are one byte per bit (0 or 1): bit i of a message is bit
// 7 − i%8 of its byte i/8 (most significant first).
package md5ref

import (
	"fmt"
	"math/bits"
)

// Steps is the standard number of steps: four rounds of 16.
const Steps = 64

// IV returns the initial chaining value A, B, C, D (RFC 1321 §3.3).
func IV() [4]uint32 { return [4]uint32{0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476} }

// T returns the additive constant of step i, ⌊2³²·|sin(i+1)|⌋ (RFC 1321 §3.4).
func T(i int) uint32 {
	return [64]uint32{
		0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
		0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
		0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
		0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
		0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
		0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
		0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
		0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
	}[i]
}

// S returns the left rotation of step i, four a round (RFC 1321 §3.4).
func S(i int) int {
	return [4][4]int{{7, 12, 17, 22}, {5, 9, 14, 20}, {4, 11, 16, 23}, {6, 10, 15, 21}}[i/16][i%4]
}

// Word is the index of the message word step i reads.
func Word(i int) int {
	switch i / 16 {
	case 0:
		return i
	case 1:
		return (5*i + 1) % 16
	case 2:
		return (3*i + 5) % 16
	}
	return 7 * i % 16
}

// Pad returns the padded message: msg, a 1, zeros to 448 mod 512 bits, and
// the length in bits as 64 bits, bytes least significant first.
func Pad(msg []byte) []byte {
	out := append(append([]byte(nil), msg...), 1)
	for len(out)%512 != 448 {
		out = append(out, 0)
	}
	n := uint64(len(msg))
	for k := range 8 { // byte k of the length, most significant bit first
		for j := 7; j >= 0; j-- {
			out = append(out, byte(n>>uint(8*k+j))&1)
		}
	}
	return out
}

// Compress returns the chaining value after one 512-bit block x (16 words)
// with the given number of steps.
func Compress(h [4]uint32, x [16]uint32, steps int) [4]uint32 {
	if steps < 1 || steps > Steps {
		panic(fmt.Sprintf("md5ref: %d steps, want 1…64", steps))
	}
	a, b, c, d := h[0], h[1], h[2], h[3]
	for i := range steps {
		var f uint32
		switch i / 16 {
		case 0:
			f = b&c | ^b&d
		case 1:
			f = b&d | c&^d
		case 2:
			f = b ^ c ^ d
		default:
			f = c ^ (b | ^d)
		}
		a, b, c, d = d, b+bits.RotateLeft32(a+f+x[Word(i)]+T(i), S(i)), b, c
	}
	return [4]uint32{h[0] + a, h[1] + b, h[2] + c, h[3] + d}
}

// Sum returns the digest of a message of bits (one byte per bit), 128 bits
// one byte per bit, with the given number of steps in every compression.
func Sum(msg []byte, steps int) []byte {
	p := Pad(msg)
	h := IV()
	for off := 0; off < len(p); off += 512 {
		var x [16]uint32
		for j := range 16 {
			for k := range 4 { // byte k of word j, most significant bit first
				for m := range 8 {
					x[j] |= uint32(p[off+32*j+8*k+m]) << uint(8*k+7-m)
				}
			}
		}
		h = Compress(h, x, steps)
	}
	out := make([]byte, 0, 128)
	for _, w := range h {
		for k := range 4 {
			for m := 7; m >= 0; m-- {
				out = append(out, byte(w>>uint(8*k+m))&1)
			}
		}
	}
	return out
}
