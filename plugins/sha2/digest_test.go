package sha2_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"

	"github.com/tcforge/tcforge/plugins/sha2"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// TestCircuitUnchanged pins the circuits sha2 builds, bit for bit (nodes,
// operands, tags, position hints, attributes: the binary encoding), by
// their SHA-256. Moving sha2 onto the SDK's word and padding helpers
// changed one thing in them: a round's Ch and Maj nodes are built word by
// word (Ch's two words, then Maj's) instead of bit by bit interleaved; with
// that loop put back, the move gave main's digests exactly. The configs'
// figures were checked unchanged by running them (docs/writing-a-hash.md).
func TestCircuitUnchanged(t *testing.T) {
	for _, tc := range []struct {
		values map[string]any
		want   string
	}{
		{map[string]any{}, "6cb2fe980c554fe1b76c1442a985b0095655214f2372e3645b8cbb5a34902d75"},
		{map[string]any{"preset": "sha512", "rounds": 20, "blocks": 2}, "e912f78458509e4819fba6e56d8856c5d8f73d8a63eb53db98a09d03ffebf183"},
		{map[string]any{"preset": "sha224", "message_bits": 1000, "rounds": 3}, "642f5041b667a5886f236fbc772806547344106364f07723e9014759a6488fc9"},
		{map[string]any{"preset": "sha384", "mode": "compress", "rounds": 5}, "c58fe2f726c5eea98a92ad2929c840c6eedb3ad72f1a019fcd5afc71f4b3b371"},
		{map[string]any{"preset": "sha512-256", "message_bits": 0, "rounds": 2}, "aebc2c331d722a17c57307c03f0932e4c9e4336d433bc2ce5a73ebcb2bc2e45b"},
		{map[string]any{"preset": "sha256", "blocks": 3, "rounds": 17}, "8db1baeb4a695d52ff53078f53bea747f067db2c20046d8257f8ed75f96aec85"},
	} {
		t.Run(fmt.Sprint(tc.values), func(t *testing.T) {
			c := sdktest.Build(t, sha2.Plugin, tc.values)
			data, err := c.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(data)
			if got := hex.EncodeToString(sum[:]); got != tc.want {
				t.Errorf("circuit digest %s, want %s", got, tc.want)
			}
		})
	}
}
