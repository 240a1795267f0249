// Package asconref is an independent, straightforward reference
// implementation of Ascon-Hash256 and Ascon-XOF128 (NIST SP 800-232) with
// any number of rounds (1…12) in every permutation. It is written apart
// from the circuit builder: plain uint64 words, the S-box as its table
// applied to each bit column (SP 800-232 Table 6) where the circuit uses
// the bitsliced instructions, the linear layer, the sponge over a 64-bit
// rate; it is the oracle for reduced-round instances and is pinned at 12
// rounds to NIST's ACVP vectors and the Ascon team's KATs.
//
// Messages and outputs are bit strings in SP 800-232's order: bit i is bit
// i mod 8 of byte ⌊i/8⌋ (a partial last byte holds its bits at the
// bottom), as ACVP writes them. ToCircuit and FromCircuit convert to and
// from the circuit's order (each byte most significant bit first, a
// partial last byte as its k-bit number; sdk/sponge).
package asconref

import "fmt"

// Rounds is the number of rounds of Ascon-p[12], the standard's
// permutation.
const Rounds = 12

// The IVs (SP 800-232 §5.1, §5.2).
const (
	IVHash256 = 0x0000080100cc0002
	IVXOF128  = 0x0000080000cc0003
)

// Constant returns round constant c_i, i in 0…15 (SP 800-232 Table 5);
// Ascon-p[r] uses c_{16−r} … c_15.
func Constant(i int) uint64 {
	return [16]uint64{0x3c, 0x2d, 0x1e, 0x0f, 0xf0, 0xe1, 0xd2, 0xc3, 0xb4, 0xa5, 0x96, 0x87, 0x78, 0x69, 0x5a, 0x4b}[i]
}

// sbox is the 5-bit S-box (SP 800-232 Table 6): input x0…x4 as the bits
// 4…0 of the index.
var sbox = [32]uint8{
	0x04, 0x0b, 0x1f, 0x14, 0x1a, 0x15, 0x09, 0x02, 0x1b, 0x05, 0x08, 0x12, 0x1d, 0x03, 0x06, 0x1c,
	0x1e, 0x13, 0x07, 0x0e, 0x00, 0x0d, 0x11, 0x18, 0x10, 0x0c, 0x01, 0x19, 0x16, 0x0a, 0x0f, 0x17,
}

func rotr(x uint64, r int) uint64 { return x>>r | x<<(64-r) }

// Permute applies Ascon-p[rounds] to s (rounds 1…12).
func Permute(s *[5]uint64, rounds int) {
	if rounds < 1 || rounds > Rounds {
		panic(fmt.Sprintf("asconref: %d rounds, want 1…12", rounds))
	}
	for i := 16 - rounds; i < 16; i++ {
		s[2] ^= Constant(i)
		var t [5]uint64
		for j := range 64 {
			var x uint8
			for w := range 5 {
				x |= uint8(s[w]>>j&1) << (4 - w)
			}
			y := sbox[x]
			for w := range 5 {
				t[w] |= uint64(y>>(4-w)&1) << j
			}
		}
		s[0] = t[0] ^ rotr(t[0], 19) ^ rotr(t[0], 28)
		s[1] = t[1] ^ rotr(t[1], 61) ^ rotr(t[1], 39)
		s[2] = t[2] ^ rotr(t[2], 1) ^ rotr(t[2], 6)
		s[3] = t[3] ^ rotr(t[3], 10) ^ rotr(t[3], 17)
		s[4] = t[4] ^ rotr(t[4], 7) ^ rotr(t[4], 41)
	}
}

// Sum is the sponge of SP 800-232 §5: the state IV‖0²⁵⁶ permuted, the
// message of bits bits absorbed 64 bits a block with its padding (a 1 after
// the message, then zeros), outBits bits squeezed, every permutation of the
// given rounds. msg and the output are in SP 800-232's bit order.
func Sum(iv uint64, msg []byte, bits, outBits, rounds int) []byte {
	return SumPadded(iv, Pad(msg, bits), bits/64+1, outBits, rounds)
}

// Pad returns the padded message of a message of bits bits: the message, a
// 1 bit, zeros to a whole number of 64-bit blocks (bits/64 + 1 of them),
// in SP 800-232's bit order, as bytes.
func Pad(msg []byte, bits int) []byte {
	out := make([]byte, 8*(bits/64+1))
	for p := range bits {
		out[p/8] |= (msg[p/8] >> (p % 8) & 1) << (p % 8)
	}
	out[bits/8] |= 1 << (bits % 8)
	return out
}

// SumPadded is Sum on a message already padded to blocks 64-bit blocks
// (8·blocks bytes, absorbed as they are, each little-endian).
func SumPadded(iv uint64, padded []byte, blocks, outBits, rounds int) []byte {
	s := [5]uint64{iv}
	Permute(&s, rounds)
	for k := range blocks {
		var m uint64
		for i := range 8 {
			m |= uint64(padded[8*k+i]) << (8 * i)
		}
		s[0] ^= m
		Permute(&s, rounds)
	}
	out := make([]byte, (outBits+7)/8)
	for p := 0; p < outBits; p++ {
		if p > 0 && p%64 == 0 {
			Permute(&s, rounds)
		}
		out[p/8] |= byte(s[0]>>(p%64)&1) << (p % 8)
	}
	return out
}

// Hash256 returns the Ascon-Hash256 digest of a message of bits bits.
func Hash256(msg []byte, bits, rounds int) []byte { return Sum(IVHash256, msg, bits, 256, rounds) }

// XOF128 returns outBits bits of Ascon-XOF128 of a message of bits bits.
func XOF128(msg []byte, bits, outBits, rounds int) []byte {
	return Sum(IVXOF128, msg, bits, outBits, rounds)
}

// ToCircuit returns a bit string of n bits in the circuit's order: a
// partial last byte's k bits moved from the bottom of the byte to its top
// (bitvec.PackMSB's packing of the circuit's bits).
func ToCircuit(b []byte, n int) []byte {
	out := append([]byte(nil), b[:(n+7)/8]...)
	if k := n % 8; k > 0 {
		out[n/8] <<= 8 - k
	}
	return out
}

// FromCircuit is the inverse of ToCircuit.
func FromCircuit(b []byte, n int) []byte {
	out := append([]byte(nil), b[:(n+7)/8]...)
	if k := n % 8; k > 0 {
		out[n/8] >>= 8 - k
	}
	return out
}
