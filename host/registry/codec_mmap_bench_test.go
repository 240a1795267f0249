//go:build linux

package registry_test

import (
	"hash/crc32"
	"syscall"
	"testing"

	"github.com/tcforge/tcforge/sdk/layered"
)

// BenchmarkLayeredCodecMmapSHA3_256 is what the flat SHA3-256 layered
// circuit would cost at the boundary if the receiver mapped the blob file
// instead of reading it (the wire reads it today): the sender's CRC-32C
// and write as in BenchmarkLayeredCodecSHA3_256's flat/file, then the
// receiver's mapping of the file, CRC-32C over the mapping and DecodeView
// of it (views of the page cache: no fresh buffer, no copy).
func BenchmarkLayeredCodecMmapSHA3_256(b *testing.B) {
	lc := sha3Layered(b)
	dir := b.TempDir()
	b.Run("flat/mmap", func(b *testing.B) {
		for b.Loop() {
			g, n, crc := writeBlob(b, dir, lc.MarshalFlat())
			blob, err := syscall.Mmap(int(g.Fd()), 0, n, syscall.PROT_READ, syscall.MAP_PRIVATE)
			g.Close()
			if err != nil {
				b.Fatal(err)
			}
			if crc32.Checksum(blob, castagnoli) != crc {
				b.Fatal("checksum differs")
			}
			if _, err := layered.DecodeView(blob); err != nil {
				b.Fatal(err)
			}
			if err := syscall.Munmap(blob); err != nil {
				b.Fatal(err)
			}
		}
	})
}
