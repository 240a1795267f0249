package md_test

import (
	"context"
	"testing"

	"github.com/tcforge/tcforge/plugins/md"
	"github.com/tcforge/tcforge/sdk"
)

// BenchmarkBuildFull builds the full-size chain of configs/constructions.hcl:
// 4 blocks of 1088 bits, 256-bit chain value, Keccak-f[1600].
func BenchmarkBuildFull(b *testing.B) {
	p, err := sdk.NewPass(context.Background(), md.Plugin, map[string]any{
		"log_w": int64(6), "rounds": int64(24), "rate": int64(1088),
		"block_bits": int64(1088), "chain_bits": int64(256), "blocks": int64(4)})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := md.Plugin.Build(context.Background(), p); err != nil {
			b.Fatal(err)
		}
	}
}
