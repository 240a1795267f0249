package bitvec

// PackMSB packs the first n bits into bytes most significant bit first:
// bit i becomes bit 7 − i%8 of byte i/8 (the bit order of SHA-2 and of
// most byte-oriented standards); a final partial byte is zero in its low
// bits.
func (v Vec) PackMSB(n int) []byte {
	out := make([]byte, (n+7)/8)
	for i := 0; i < n; i++ {
		out[i/8] |= byte(v.Get(i)) << uint(7-i%8)
	}
	return out
}

// FromPackedMSB is the inverse of PackMSB: the first n bits of b, most
// significant bit of each byte first.
func FromPackedMSB(b []byte, n int) Vec {
	v := NewVec(n)
	for i := 0; i < n; i++ {
		v.Set(i, uint(b[i/8]>>uint(7-i%8)))
	}
	return v
}
