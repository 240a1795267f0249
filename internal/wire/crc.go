package wire

import (
	"hash/crc32"
	"sync"
)

// parallelCRCMin is the size from which a blob file's checksum is made
// on another goroutine than its writing, and checked in two halves on two
// goroutines (checksum): writing 55 MB into the page cache takes a core
// 13–16 ms and the sum 3 ms more, while the other core is idle. (Writing
// the two halves at once is slower: ext4 serialises writers of a file.)
const parallelCRCMin = 16 << 20

// crcCombine returns the CRC-32C of a||b from crcA = CRC(a), crcB = CRC(b)
// and len(b) (zlib's crc32_combine: crcA advanced over len(b) zero bytes
// by squaring the matrix of one zero bit, then crcB added).
func crcCombine(crcA, crcB uint32, lenB int64) uint32 {
	if lenB <= 0 {
		return crcA
	}
	var even, odd [32]uint32
	odd[0] = crc32.Castagnoli // the reflected polynomial: one zero bit
	row := uint32(1)
	for n := 1; n < 32; n++ {
		odd[n] = row
		row <<= 1
	}
	gf2Square(&even, &odd) // two zero bits
	gf2Square(&odd, &even) // four
	for {
		gf2Square(&even, &odd) // a zero byte, then 4, 16, … bytes
		if lenB&1 != 0 {
			crcA = gf2Times(&even, crcA)
		}
		if lenB >>= 1; lenB == 0 {
			break
		}
		gf2Square(&odd, &even)
		if lenB&1 != 0 {
			crcA = gf2Times(&odd, crcA)
		}
		if lenB >>= 1; lenB == 0 {
			break
		}
	}
	return crcA ^ crcB
}

// gf2Times multiplies the GF(2) matrix mat by the vector vec.
func gf2Times(mat *[32]uint32, vec uint32) uint32 {
	var sum uint32
	for i := 0; vec != 0; i, vec = i+1, vec>>1 {
		if vec&1 != 0 {
			sum ^= mat[i]
		}
	}
	return sum
}

// gf2Square sets square to mat².
func gf2Square(square, mat *[32]uint32) {
	for n := range 32 {
		square[n] = gf2Times(mat, mat[n])
	}
}

// checksum is the CRC-32C of b, made in two halves on two goroutines from
// parallelCRCMin bytes.
func checksum(b []byte) uint32 {
	if len(b) < parallelCRCMin {
		return crc32.Checksum(b, castagnoli)
	}
	h := len(b) / 2
	var lo uint32
	var wg sync.WaitGroup
	wg.Go(func() { lo = crc32.Checksum(b[:h], castagnoli) })
	hi := crc32.Checksum(b[h:], castagnoli)
	wg.Wait()
	return crcCombine(lo, hi, int64(len(b)-h))
}
