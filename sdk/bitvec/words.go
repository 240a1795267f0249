package bitvec

import "fmt"

// The word helpers read and write w-bit words (w ≤ 64, a multiple of 8 for
// the little-endian ones) in a vector of message bits, in the same orders
// as circuit.Builder's BigEndianWords and LittleEndianWords: message bit i
// is bit 7 − i%8 of byte i/8 (PackMSB), and word k is bits k·w … k·w+w−1.
// A construction's Reference reads its input and writes its digest with
// them, the circuit with the builder's, and the two agree by construction.

// BigEndianWords returns the first n words of w bits, most significant bit
// first (SHA-1, SHA-2).
func (v Vec) BigEndianWords(n, w int) []uint64 {
	checkWord(w, false)
	out := make([]uint64, n)
	for k := range out {
		for j := range w {
			out[k] = out[k]<<1 | uint64(v.Get(k*w+j))
		}
	}
	return out
}

// FromBigEndianWords is the inverse of BigEndianWords: the words' bits,
// most significant first.
func FromBigEndianWords(ws []uint64, w int) Vec {
	checkWord(w, false)
	v := NewVec(len(ws) * w)
	for k, x := range ws {
		for j := range w {
			v.Set(k*w+j, uint(x>>uint(w-1-j)))
		}
	}
	return v
}

// LittleEndianWords returns the first n words of w bits, bytes least
// significant first and each byte's most significant bit first (MD4, MD5).
func (v Vec) LittleEndianWords(n, w int) []uint64 {
	checkWord(w, true)
	out := make([]uint64, n)
	for k := range out {
		for j := range w {
			out[k] |= uint64(v.Get(k*w+j/8*8+7-j%8)) << uint(j)
		}
	}
	return out
}

// FromLittleEndianWords is the inverse of LittleEndianWords.
func FromLittleEndianWords(ws []uint64, w int) Vec {
	checkWord(w, true)
	v := NewVec(len(ws) * w)
	for k, x := range ws {
		for j := range w {
			v.Set(k*w+j/8*8+7-j%8, uint(x>>uint(j)))
		}
	}
	return v
}

func checkWord(w int, bytes bool) {
	if w < 1 || w > 64 || bytes && w%8 != 0 {
		panic(fmt.Sprintf("bitvec: words of %d bits, want 1…64%s", w, map[bool]string{true: " and a multiple of 8"}[bytes]))
	}
}
