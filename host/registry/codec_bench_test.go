package registry_test

import (
	"bytes"
	"context"
	"hash/crc32"
	"io"
	"os"
	"testing"

	"github.com/tcforge/tcforge/plugins/keccak"
	"github.com/tcforge/tcforge/plugins/reifier"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
)

// BenchmarkLogicCodecSHA3_256 is what the full SHA3-256 logic circuit
// costs at the plugin boundary in either encoding: packed (MarshalBinary,
// UnmarshalBinary: packing, unpacking into fresh arrays, Validate) and
// flat (MarshalFlat: the circuit's arrays as they are; DecodeView: views
// of the blob and Validate). The flat decode includes nothing the host
// skips: it is the whole of the receiving side but reading the file.
func BenchmarkLogicCodecSHA3_256(b *testing.B) {
	ctx := context.Background()
	kp, err := sdk.NewPass(ctx, keccak.Plugin, map[string]any{"preset": "sha3-256"})
	if err != nil {
		b.Fatal(err)
	}
	c, err := keccak.Plugin.Build(ctx, kp)
	if err != nil {
		b.Fatal(err)
	}
	packed, err := c.MarshalBinary()
	if err != nil {
		b.Fatal(err)
	}
	flat := bytes.Join(c.MarshalFlat(), nil)
	b.Logf("packed %d bytes, flat %d bytes", len(packed), len(flat))
	b.Run("packed/encode", func(b *testing.B) {
		for b.Loop() {
			if _, err := c.MarshalBinary(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("packed/decode", func(b *testing.B) {
		for b.Loop() {
			var d circuit.Circuit
			if err := d.UnmarshalBinary(packed); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("flat/encode", func(b *testing.B) {
		for b.Loop() {
			_ = c.MarshalFlat()
		}
	})
	b.Run("flat/decode", func(b *testing.B) {
		for b.Loop() {
			if _, err := circuit.DecodeView(flat); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkLayeredCodecSHA3_256 is what the full SHA3-256 layered circuit
// (Reifier) costs at the plugin boundary: the flat encoding, each side
// alone (MarshalFlat returns the arrays; DecodeView takes views and runs
// Validate), and either encoding's whole trip as a blob file makes it:
// the sender's CRC-32C and write of the parts, the receiver's read into a
// fresh buffer, its CRC-32C and the decode.
func BenchmarkLayeredCodecSHA3_256(b *testing.B) {
	lc := sha3Layered(b)
	packed, err := lc.MarshalBinary()
	if err != nil {
		b.Fatal(err)
	}
	flat := bytes.Join(lc.MarshalFlat(), nil)
	b.Logf("%d edges: packed %d bytes, flat %d bytes", len(lc.Src), len(packed), len(flat))
	// The packed encoding alone: BenchmarkCodecSHA3_256 in host/cli.
	b.Run("flat/encode", func(b *testing.B) {
		for b.Loop() {
			_ = lc.MarshalFlat()
		}
	})
	b.Run("flat/decode", func(b *testing.B) {
		for b.Loop() {
			if _, err := layered.DecodeView(flat); err != nil {
				b.Fatal(err)
			}
		}
	})
	dir := b.TempDir()
	b.Run("packed/file", func(b *testing.B) {
		for b.Loop() {
			blob, err := lc.MarshalBinary()
			if err != nil {
				b.Fatal(err)
			}
			var d layered.Circuit
			if err := d.UnmarshalBinary(fileTrip(b, dir, [][]byte{blob})); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("flat/file", func(b *testing.B) {
		for b.Loop() {
			if _, err := layered.DecodeView(fileTrip(b, dir, lc.MarshalFlat())); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// fileTrip moves a blob through a file in dir as a blob file does
// (internal/wire/blobfile.go): CRC-32C and write of the parts, then a read
// into a fresh buffer, its CRC-32C checked, and the file removed.
func fileTrip(b *testing.B, dir string, parts [][]byte) []byte {
	g, n, crc := writeBlob(b, dir, parts)
	defer g.Close()
	blob := make([]byte, n)
	if _, err := io.ReadFull(g, blob); err != nil {
		b.Fatal(err)
	}
	if crc32.Checksum(blob, castagnoli) != crc {
		b.Fatal("checksum differs")
	}
	return blob
}

// writeBlob writes a blob's parts to a new file in dir as the sender of
// a blob file does (CRC-32C and write), and returns the file reopened
// for reading (and already removed), its size and its CRC-32C.
func writeBlob(b *testing.B, dir string, parts [][]byte) (*os.File, int, uint32) {
	f, err := os.CreateTemp(dir, "blob-*")
	if err != nil {
		b.Fatal(err)
	}
	var crc uint32
	n := 0
	for _, p := range parts {
		crc = crc32.Update(crc, castagnoli, p)
		if _, err := f.Write(p); err != nil {
			b.Fatal(err)
		}
		n += len(p)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	g, err := os.Open(f.Name())
	if err != nil {
		b.Fatal(err)
	}
	os.Remove(f.Name())
	return g, n, crc
}

// castagnoli is the CRC-32C table blob files use.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// sha3Layered returns the full SHA3-256 layered circuit (Reifier).
func sha3Layered(b *testing.B) *layered.Circuit {
	ctx := context.Background()
	kp, err := sdk.NewPass(ctx, keccak.Plugin, map[string]any{"preset": "sha3-256"})
	if err != nil {
		b.Fatal(err)
	}
	c, err := keccak.Plugin.Build(ctx, kp)
	if err != nil {
		b.Fatal(err)
	}
	lc, err := reifier.Compile(ctx, c)
	if err != nil {
		b.Fatal(err)
	}
	return lc
}
