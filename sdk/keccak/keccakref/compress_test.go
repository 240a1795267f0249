package keccakref

import "testing"

func TestCompress(t *testing.T) {
	// Keccak-f[1600] of the zero state: the published first lanes
	// (KeccakF-1600-IntermediateValues.txt).
	p := Params{LogW: 6, Rounds: 24}
	got := p.Compress(nil, 128)
	for i, want := range []uint64{0xF1258F7940E1DDE7, 0x84D5CCF933C0478A} {
		var lane uint64
		for z := 0; z < 64; z++ {
			lane |= uint64(got[64*i+z]) << uint(z)
		}
		if lane != want {
			t.Errorf("lane %d = %016X, want %016X", i, lane, want)
		}
	}
	// Compress(x) is Permute of x zero-extended, truncated.
	q := Params{LogW: 2, Rounds: 3}
	in := []byte{1, 0, 1, 1, 0, 0, 1}
	full := make([]byte, q.B())
	copy(full, in)
	s := q.FromBits(full)
	q.Permute(&s)
	want := q.ToBits(s)[:40]
	if got := q.Compress(in, 40); string(got) != string(want) {
		t.Errorf("Compress = %v, want %v", got, want)
	}
	defer func() {
		if recover() == nil {
			t.Error("Compress of more bits than the state did not panic")
		}
	}()
	q.Compress(make([]byte, q.B()+1), 1)
}
