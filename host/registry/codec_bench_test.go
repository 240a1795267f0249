package registry_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/tcforge/tcforge/plugins/keccak"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/circuit"
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
