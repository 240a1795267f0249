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
// Then the feed-forward stopped reading the first block's IV through new
// constant nodes (Builder.Fresh, gone: reifier places a constant below
// every level that reads it), which drops 8w constants from every hash-mode
// circuit; the compression function's digest stayed.
func TestCircuitUnchanged(t *testing.T) {
	for _, tc := range []struct {
		values map[string]any
		want   string
	}{
		{map[string]any{}, "51427c922591bc5d8f7f9a66c67c89c6c60bc6068c33d98f62b6dae3cf984861"},
		{map[string]any{"preset": "sha512", "rounds": 20, "blocks": 2}, "f754c15c0962ee37eee0bc347326bfe4df73097ed9e769982ddee146bb6ee9ee"},
		{map[string]any{"preset": "sha224", "message_bits": 1000, "rounds": 3}, "f890a385e33858047071bcbbbd8fe8b8436ccc240f0d074fe8d9aeece22abdc3"},
		{map[string]any{"preset": "sha384", "mode": "compress", "rounds": 5}, "c58fe2f726c5eea98a92ad2929c840c6eedb3ad72f1a019fcd5afc71f4b3b371"},
		{map[string]any{"preset": "sha512-256", "message_bits": 0, "rounds": 2}, "a713b60c439ae8ca76d53fb147a770cf7fb0ad00ec9ba0430c362e472b151833"},
		{map[string]any{"preset": "sha256", "blocks": 3, "rounds": 17}, "9f209fb1203444e5468b7c43ed70f91f2b102b9d19e44ff993e9519d73dc2c6c"},
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
