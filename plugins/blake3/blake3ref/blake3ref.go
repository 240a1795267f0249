// Package blake3ref is an independent, straightforward reference
// implementation of BLAKE3's hash mode (256-bit output) with any number of
// rounds (1…7) in its compression function. It is written apart from the
// circuit builder (plain uint32 arithmetic; the tree by recursive halving
// of the input, as the BLAKE3 paper's §2.1 describes it) and is the oracle
// for reduced-round instances; at 7 rounds it is checked against the
// BLAKE3 team's test vectors and lukechampine.com/blake3.
package blake3ref

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// Rounds is the standard number of rounds.
const Rounds = 7

// The domain flags (BLAKE3 §2.1, Table 3).
const (
	ChunkStart = 1 << 0
	ChunkEnd   = 1 << 1
	Parent     = 1 << 2
	Root       = 1 << 3
)

// ChunkLen and BlockLen are BLAKE3's chunk and block sizes in bytes.
const (
	ChunkLen = 1024
	BlockLen = 64
)

// IV returns the IV: SHA-256's (BLAKE3 §2.2), the key words of the hash
// mode.
func IV() [8]uint32 {
	return [8]uint32{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19}
}

// permutation is the message permutation applied between rounds (BLAKE3
// §2.2, Table 2).
var permutation = [16]int{2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8}

// Schedule returns the message schedule of round r: the index of the
// message word round r reads at each of its 16 places (the identity for
// round 0, then the permutation applied once a round).
func Schedule(r int) [16]int {
	var s [16]int
	for i := range s {
		s[i] = i
	}
	for range r {
		var t [16]int
		for i := range t {
			t[i] = s[permutation[i]]
		}
		s = t
	}
	return s
}

// Compress is the compression function (BLAKE3 §2.2) with the given
// rounds, truncated to the chaining value: cv, block m, counter t, the
// block's length in bytes and its flags.
func Compress(cv [8]uint32, m [16]uint32, t uint64, blockLen, flags uint32, rounds int) [8]uint32 {
	if rounds < 1 || rounds > Rounds {
		panic(fmt.Sprintf("blake3ref: %d rounds, want 1…7", rounds))
	}
	iv := IV()
	v := [16]uint32{cv[0], cv[1], cv[2], cv[3], cv[4], cv[5], cv[6], cv[7],
		iv[0], iv[1], iv[2], iv[3], uint32(t), uint32(t >> 32), blockLen, flags}
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
	for range rounds {
		g(0, 4, 8, 12, m[0], m[1])
		g(1, 5, 9, 13, m[2], m[3])
		g(2, 6, 10, 14, m[4], m[5])
		g(3, 7, 11, 15, m[6], m[7])
		g(0, 5, 10, 15, m[8], m[9])
		g(1, 6, 11, 12, m[10], m[11])
		g(2, 7, 8, 13, m[12], m[13])
		g(3, 4, 9, 14, m[14], m[15])
		var p [16]uint32
		for i := range p {
			p[i] = m[permutation[i]]
		}
		m = p
	}
	var out [8]uint32
	for i := range out {
		out[i] = v[i] ^ v[i+8]
	}
	return out
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

// chunk returns the chaining value of one chunk (at most 1024 bytes) with
// the given counter; root adds the root flag to its last block.
func chunk(b []byte, counter uint64, root bool, rounds int) [8]uint32 {
	cv := IV()
	n := max(1, (len(b)+BlockLen-1)/BlockLen)
	for k := range n {
		block := b[min(len(b), BlockLen*k):min(len(b), BlockLen*(k+1))]
		var flags uint32
		if k == 0 {
			flags |= ChunkStart
		}
		if k == n-1 {
			flags |= ChunkEnd
			if root {
				flags |= Root
			}
		}
		cv = Compress(cv, words(block), counter, uint32(len(block)), flags, rounds)
	}
	return cv
}

// subtree returns the chaining value of the subtree over b, whose first
// chunk has the given counter: a chunk, or a parent of the largest
// power-of-two number of chunks on the left and the rest on the right.
func subtree(b []byte, counter uint64, root bool, rounds int) [8]uint32 {
	if len(b) <= ChunkLen {
		return chunk(b, counter, root, rounds)
	}
	left := ChunkLen
	for 2*left < len(b) {
		left *= 2
	}
	l := subtree(b[:left], counter, false, rounds)
	r := subtree(b[left:], counter+uint64(left/ChunkLen), false, rounds)
	var m [16]uint32
	copy(m[:8], l[:])
	copy(m[8:], r[:])
	flags := uint32(Parent)
	if root {
		flags |= Root
	}
	return Compress(IV(), m, 0, BlockLen, flags, rounds)
}

// Sum returns the 256-bit BLAKE3 hash of msg with the given rounds in
// every compression.
func Sum(msg []byte, rounds int) [32]byte {
	h := subtree(msg, 0, true, rounds)
	var out [32]byte
	for i, w := range h {
		binary.LittleEndian.PutUint32(out[4*i:], w)
	}
	return out
}
