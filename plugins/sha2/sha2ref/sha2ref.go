// Package sha2ref is an independent, straightforward reference
// implementation of the SHA-2 family (FIPS 180-4) with any number of
// rounds: SHA-224, SHA-256, SHA-384, SHA-512, SHA-512/224 and SHA-512/256,
// on messages of any bit length. It is written apart from the circuit
// builder (plain uint32/uint64 arithmetic, one function per algorithm of
// the standard) and serves as the oracle for reduced-round instances that
// crypto/sha256 and crypto/sha512 cannot compute.
//
// Bit strings are one byte per bit (0 or 1), in the standard's order: bit
// i of a message is bit 7 − i%8 of its byte i/8 (most significant first).
package sha2ref

import "fmt"

// Variant is a member of the SHA-2 family.
type Variant struct {
	// Name is the standard's name, e.g. "SHA-256".
	Name string
	// WordBits is the word size w: 32 (SHA-224/256) or 64 (the others).
	WordBits int
	// DigestBits is the digest length: the leading bits of the final
	// chaining value.
	DigestBits int
	// IV is the initial hash value H(0), eight words.
	IV [8]uint64
}

// Rounds returns the standard number of rounds: 64 for w = 32, 80 for w = 64.
func (v Variant) Rounds() int {
	if v.WordBits == 32 {
		return 64
	}
	return 80
}

// BlockBits is the block size: 16 words.
func (v Variant) BlockBits() int { return 16 * v.WordBits }

// The standard variants (FIPS 180-4 §5.3).
var (
	SHA224 = Variant{"SHA-224", 32, 224, [8]uint64{
		0xc1059ed8, 0x367cd507, 0x3070dd17, 0xf70e5939, 0xffc00b31, 0x68581511, 0x64f98fa7, 0xbefa4fa4}}
	SHA256 = Variant{"SHA-256", 32, 256, [8]uint64{
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19}}
	SHA384 = Variant{"SHA-384", 64, 384, [8]uint64{
		0xcbbb9d5dc1059ed8, 0x629a292a367cd507, 0x9159015a3070dd17, 0x152fecd8f70e5939,
		0x67332667ffc00b31, 0x8eb44a8768581511, 0xdb0c2e0d64f98fa7, 0x47b5481dbefa4fa4}}
	SHA512 = Variant{"SHA-512", 64, 512, [8]uint64{
		0x6a09e667f3bcc908, 0xbb67ae8584caa73b, 0x3c6ef372fe94f82b, 0xa54ff53a5f1d36f1,
		0x510e527fade682d1, 0x9b05688c2b3e6c1f, 0x1f83d9abfb41bd6b, 0x5be0cd19137e2179}}
	SHA512_224 = Variant{"SHA-512/224", 64, 224, [8]uint64{
		0x8c3d37c819544da2, 0x73e1996689dcd4d6, 0x1dfab7ae32ff9c82, 0x679dd514582f9fcf,
		0x0f6d2b697bd44da8, 0x77e36f7304c48942, 0x3f9d85a86a1d36c8, 0x1112e6ad91d692a1}}
	SHA512_256 = Variant{"SHA-512/256", 64, 256, [8]uint64{
		0x22312194fc2bf72c, 0x9f555fa3c84c64c2, 0x2393b86b6f53b151, 0x963877195940eabd,
		0x96283ee2a88effe3, 0xbe5e1e2553863992, 0x2b0199fc2c85b8aa, 0x0eb72ddc81c52ca2}}
)

// k32 are the SHA-224/256 round constants (FIPS 180-4 §4.2.2).
var k32 = [64]uint32{
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
}

// k64 are the SHA-384/512 round constants (FIPS 180-4 §4.2.3).
var k64 = [80]uint64{
	0x428a2f98d728ae22, 0x7137449123ef65cd, 0xb5c0fbcfec4d3b2f, 0xe9b5dba58189dbbc,
	0x3956c25bf348b538, 0x59f111f1b605d019, 0x923f82a4af194f9b, 0xab1c5ed5da6d8118,
	0xd807aa98a3030242, 0x12835b0145706fbe, 0x243185be4ee4b28c, 0x550c7dc3d5ffb4e2,
	0x72be5d74f27b896f, 0x80deb1fe3b1696b1, 0x9bdc06a725c71235, 0xc19bf174cf692694,
	0xe49b69c19ef14ad2, 0xefbe4786384f25e3, 0x0fc19dc68b8cd5b5, 0x240ca1cc77ac9c65,
	0x2de92c6f592b0275, 0x4a7484aa6ea6e483, 0x5cb0a9dcbd41fbd4, 0x76f988da831153b5,
	0x983e5152ee66dfab, 0xa831c66d2db43210, 0xb00327c898fb213f, 0xbf597fc7beef0ee4,
	0xc6e00bf33da88fc2, 0xd5a79147930aa725, 0x06ca6351e003826f, 0x142929670a0e6e70,
	0x27b70a8546d22ffc, 0x2e1b21385c26c926, 0x4d2c6dfc5ac42aed, 0x53380d139d95b3df,
	0x650a73548baf63de, 0x766a0abb3c77b2a8, 0x81c2c92e47edaee6, 0x92722c851482353b,
	0xa2bfe8a14cf10364, 0xa81a664bbc423001, 0xc24b8b70d0f89791, 0xc76c51a30654be30,
	0xd192e819d6ef5218, 0xd69906245565a910, 0xf40e35855771202a, 0x106aa07032bbd1b8,
	0x19a4c116b8d2d0c8, 0x1e376c085141ab53, 0x2748774cdf8eeb99, 0x34b0bcb5e19b48a8,
	0x391c0cb3c5c95a63, 0x4ed8aa4ae3418acb, 0x5b9cca4f7763e373, 0x682e6ff3d6b2b8a3,
	0x748f82ee5defb2fc, 0x78a5636f43172f60, 0x84c87814a1f0ab72, 0x8cc702081a6439ec,
	0x90befffa23631e28, 0xa4506cebde82bde9, 0xbef9a3f7b2c67915, 0xc67178f2e372532b,
	0xca273eceea26619c, 0xd186b8c721c0c207, 0xeada7dd6cde0eb1e, 0xf57d4f7fee6ed178,
	0x06f067aa72176fba, 0x0a637dc5a2c898a6, 0x113f9804bef90dae, 0x1b710b35131c471b,
	0x28db77f523047d84, 0x32caab7b40c72493, 0x3c9ebe0a15c9bebc, 0x431d67c49c100d4c,
	0x4cc5d4becb3e42b6, 0x597f299cfc657e2a, 0x5fcb6fab3ad6faec, 0x6c44198c4a475817,
}

// K returns round constant t of a word size (32 or 64).
func K(wordBits, t int) uint64 {
	if wordBits == 32 {
		return uint64(k32[t])
	}
	return k64[t]
}

// Pad returns the message (one byte per bit) padded as FIPS 180-4 §5.1:
// a 1, zeros to 448 mod 512 (896 mod 1024), then the length as a 64-bit
// (128-bit) big-endian integer.
func (v Variant) Pad(msg []byte) []byte {
	block := v.BlockBits()
	lenBits := 2 * v.WordBits
	out := append([]byte(nil), msg...)
	out = append(out, 1)
	for len(out)%block != block-lenBits {
		out = append(out, 0)
	}
	l := uint64(len(msg))
	for i := lenBits - 1; i >= 0; i-- {
		if i >= 64 {
			out = append(out, 0)
		} else {
			out = append(out, byte(l>>uint(i))&1)
		}
	}
	return out
}

// PaddedBlocks returns the number of blocks a message of n bits pads to.
func (v Variant) PaddedBlocks(n int) int {
	return (n + 1 + 2*v.WordBits + v.BlockBits() - 1) / v.BlockBits()
}

// Compress32 is the SHA-256 compression function with the given number of
// rounds (1…64): it returns H(i) from H(i−1) and one 512-bit block M(i)
// given as 16 words (FIPS 180-4 §6.2.2).
func Compress32(h [8]uint32, m [16]uint32, rounds int) [8]uint32 {
	if rounds < 1 || rounds > 64 {
		panic(fmt.Sprintf("sha2ref: %d rounds, want 1…64", rounds))
	}
	rotr := func(x uint32, n uint) uint32 { return x>>n | x<<(32-n) }
	var w [64]uint32
	copy(w[:], m[:])
	for t := 16; t < rounds; t++ {
		s0 := rotr(w[t-15], 7) ^ rotr(w[t-15], 18) ^ w[t-15]>>3
		s1 := rotr(w[t-2], 17) ^ rotr(w[t-2], 19) ^ w[t-2]>>10
		w[t] = s1 + w[t-7] + s0 + w[t-16]
	}
	a, b, c, d, e, f, g, hh := h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]
	for t := 0; t < rounds; t++ {
		S1 := rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)
		ch := (e & f) ^ (^e & g)
		t1 := hh + S1 + ch + k32[t] + w[t]
		S0 := rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)
		maj := (a & b) ^ (a & c) ^ (b & c)
		t2 := S0 + maj
		hh, g, f, e, d, c, b, a = g, f, e, d+t1, c, b, a, t1+t2
	}
	return [8]uint32{h[0] + a, h[1] + b, h[2] + c, h[3] + d, h[4] + e, h[5] + f, h[6] + g, h[7] + hh}
}

// Compress64 is the SHA-512 compression function with the given number of
// rounds (1…80) (FIPS 180-4 §6.4.2).
func Compress64(h [8]uint64, m [16]uint64, rounds int) [8]uint64 {
	if rounds < 1 || rounds > 80 {
		panic(fmt.Sprintf("sha2ref: %d rounds, want 1…80", rounds))
	}
	rotr := func(x uint64, n uint) uint64 { return x>>n | x<<(64-n) }
	var w [80]uint64
	copy(w[:], m[:])
	for t := 16; t < rounds; t++ {
		s0 := rotr(w[t-15], 1) ^ rotr(w[t-15], 8) ^ w[t-15]>>7
		s1 := rotr(w[t-2], 19) ^ rotr(w[t-2], 61) ^ w[t-2]>>6
		w[t] = s1 + w[t-7] + s0 + w[t-16]
	}
	a, b, c, d, e, f, g, hh := h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]
	for t := 0; t < rounds; t++ {
		S1 := rotr(e, 14) ^ rotr(e, 18) ^ rotr(e, 41)
		ch := (e & f) ^ (^e & g)
		t1 := hh + S1 + ch + k64[t] + w[t]
		S0 := rotr(a, 28) ^ rotr(a, 34) ^ rotr(a, 39)
		maj := (a & b) ^ (a & c) ^ (b & c)
		t2 := S0 + maj
		hh, g, f, e, d, c, b, a = g, f, e, d+t1, c, b, a, t1+t2
	}
	return [8]uint64{h[0] + a, h[1] + b, h[2] + c, h[3] + d, h[4] + e, h[5] + f, h[6] + g, h[7] + hh}
}

// Compress applies the compression function of v's word size to the
// chaining value h (eight words, 8w bits, one byte per bit, word 0 first,
// each most significant bit first) and one block (16w bits) and returns
// the new chaining value in the same form.
func (v Variant) Compress(h, block []byte, rounds int) []byte {
	w := v.WordBits
	if len(h) != 8*w || len(block) != 16*w {
		panic(fmt.Sprintf("sha2ref: chaining value of %d bits and block of %d, want %d and %d", len(h), len(block), 8*w, 16*w))
	}
	var hw [8]uint64
	var mw [16]uint64
	for i := range hw {
		hw[i] = word(h[i*w : (i+1)*w])
	}
	for i := range mw {
		mw[i] = word(block[i*w : (i+1)*w])
	}
	var out [8]uint64
	if w == 32 {
		var h32 [8]uint32
		var m32 [16]uint32
		for i := range h32 {
			h32[i] = uint32(hw[i])
		}
		for i := range m32 {
			m32[i] = uint32(mw[i])
		}
		r := Compress32(h32, m32, rounds)
		for i := range out {
			out[i] = uint64(r[i])
		}
	} else {
		out = Compress64(hw, mw, rounds)
	}
	res := make([]byte, 0, 8*w)
	for _, x := range out {
		res = appendWord(res, x, w)
	}
	return res
}

// Sum returns the digest (one byte per bit) of a message of any bit
// length with the given number of rounds per compression.
func (v Variant) Sum(msg []byte, rounds int) []byte {
	padded := v.Pad(msg)
	h := make([]byte, 0, 8*v.WordBits)
	for _, x := range v.IV {
		h = appendWord(h, x, v.WordBits)
	}
	for off := 0; off < len(padded); off += v.BlockBits() {
		h = v.Compress(h, padded[off:off+v.BlockBits()], rounds)
	}
	return h[:v.DigestBits]
}

// word reads a word from its bits, most significant first.
func word(bits []byte) uint64 {
	var x uint64
	for _, b := range bits {
		x = x<<1 | uint64(b&1)
	}
	return x
}

// appendWord appends the w bits of x, most significant first.
func appendWord(dst []byte, x uint64, w int) []byte {
	for i := w - 1; i >= 0; i-- {
		dst = append(dst, byte(x>>uint(i))&1)
	}
	return dst
}

// BytesToBits converts bytes to one byte per bit, most significant bit of
// each byte first (the SHA-2 bit order).
func BytesToBits(b []byte) []byte {
	out := make([]byte, 8*len(b))
	for i := range out {
		out[i] = b[i/8] >> uint(7-i%8) & 1
	}
	return out
}

// BitsToBytes is the inverse of BytesToBits; a final partial byte is
// padded with zeros in its low bits.
func BitsToBytes(bits []byte) []byte {
	out := make([]byte, (len(bits)+7)/8)
	for i, b := range bits {
		out[i/8] |= (b & 1) << uint(7-i%8)
	}
	return out
}
