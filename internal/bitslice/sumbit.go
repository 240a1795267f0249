package bitslice

// SumBit returns, lane by lane, bit k (0…63) of Σ 2^exps[i]·vals[src[i]]:
// each word enters the carry-save column of its exponent (three words of
// a column compress into one there and a carry in the next), columns
// above k are dropped (they cannot change bit k), and the columns are
// rippled up to plane k.
func SumBit(vals []uint64, src, exps []int32, k int) uint64 {
	var col [64][2]uint64
	var n [64]uint8
	for i, j := range src {
		x := vals[j]
		for e := int(exps[i]); e <= k; e++ {
			if n[e] < 2 {
				col[e][n[e]] = x
				n[e]++
				break
			}
			a, b := col[e][0], col[e][1]
			t := a ^ b
			col[e][0], n[e] = t^x, 1
			x = a&b | x&t
		}
	}
	var c, bit uint64
	for e := 0; e <= k; e++ {
		var a, b uint64
		if n[e] >= 1 {
			a = col[e][0]
		}
		if n[e] == 2 {
			b = col[e][1]
		}
		t := a ^ b
		bit = t ^ c
		c = a&b | c&t
	}
	return bit
}
