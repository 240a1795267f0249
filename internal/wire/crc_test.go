package wire

import (
	"bytes"
	"context"
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

// TestCRCCombine: the CRC-32C of a||b from those of a and b equals the
// checksum of the whole, at every split of random data and at the sizes
// where checksum works in halves.
func TestCRCCombine(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 3000)
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	for _, n := range []int{0, 1, 7, 64, 1000, 3000} {
		for split := 0; split <= n; split += max(1, n/37) {
			a, b := data[:split], data[split:n]
			want := crc32.Checksum(data[:n], castagnoli)
			if got := crcCombine(crc32.Checksum(a, castagnoli), crc32.Checksum(b, castagnoli), int64(len(b))); got != want {
				t.Fatalf("n %d split %d: %08x, want %08x", n, split, got, want)
			}
		}
	}
	big := make([]byte, parallelCRCMin+12345)
	for i := range big {
		big[i] = byte(i * 7 >> 3)
	}
	for _, n := range []int{parallelCRCMin - 1, parallelCRCMin, len(big)} {
		if got, want := checksum(big[:n]), crc32.Checksum(big[:n], castagnoli); got != want {
			t.Errorf("checksum of %d bytes: %08x, want %08x", n, got, want)
		}
	}
}

// TestBlobFileHalves: a blob of parallelCRCMin bytes or more, summed
// while it is written and checked in two halves when read, reads back
// whole with its checksum, read or mapped.
func TestBlobFileHalves(t *testing.T) {
	dir := t.TempDir()
	blob := make([]byte, 2*parallelCRCMin+3)
	for i := range blob {
		blob[i] = byte(i*31 + i>>9)
	}
	parts := [][]byte{blob[:10], {}, blob[10 : parallelCRCMin+1], blob[parallelCRCMin+1:]}
	for _, m := range []*Mapped{nil, NewMapped(1 << 40)} {
		ref, err := writeBlobFile(dir, parts)
		if err != nil {
			t.Fatal(err)
		}
		if want := crc32.Checksum(blob, castagnoli); ref.crc != want {
			t.Fatalf("written checksum %08x, want %08x", ref.crc, want)
		}
		got, err := readBlobFile(context.Background(), dir, ref, uint64(len(blob)), m)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, blob) {
			t.Fatal("the blob changed on the way")
		}
		m.Release()
	}
}
