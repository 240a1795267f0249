package merkle_test

import (
	"context"
	"testing"

	"github.com/tcforge/tcforge/plugins/merkle"
	"github.com/tcforge/tcforge/sdk"
)

// BenchmarkBuildFull builds the full-size tree of configs/constructions.hcl:
// 8 leaves of 1088 bits, 256-bit digests, Keccak-f[1600].
func BenchmarkBuildFull(b *testing.B) {
	p, err := sdk.NewPass(context.Background(), merkle.Plugin, map[string]any{
		"log_w": int64(6), "rounds": int64(24), "rate": int64(1088),
		"block_bits": int64(1088), "digest_bits": int64(256), "leaves": int64(8)})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := merkle.Plugin.Build(context.Background(), p); err != nil {
			b.Fatal(err)
		}
	}
}
