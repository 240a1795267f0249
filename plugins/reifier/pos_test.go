package reifier

import (
	"context"
	"slices"
	"testing"

	keccakplugin "github.com/tcforge/tcforge/plugins/keccak"
	"github.com/tcforge/tcforge/plugins/md"
	"github.com/tcforge/tcforge/plugins/merkle"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// TestPos checks that both modes carry a Keccak construction's position
// hints onto every gate and copy: SHA3-256's padded one-block sponge at
// full lane size (w = 64) with 2 and 3 rounds, a toy one (w = 4,
// 2 blocks), a toy Merkle–Damgård chain and Merkle tree. Nothing is
// unhinted; every level's gates of a sponge split evenly over the
// slices; a copy has its source's hint; and no gate reads across an offset a Keccak
// round does not (z, z − 1, z − r for the ρ offsets r; logged per level).
// A circuit without hints compiles to one without.
func TestPos(t *testing.T) {
	for _, tc := range []struct {
		name   string
		plugin *sdk.Construction
		w      int
		values map[string]any
		even   bool // every level's gates split evenly over the slices
	}{
		{"sha3-256 2 rounds", keccakplugin.Plugin, 64, map[string]any{"preset": "sha3-256", "rounds": 2}, true},
		{"sha3-256 3 rounds", keccakplugin.Plugin, 64, map[string]any{"preset": "sha3-256", "rounds": 3}, true},
		{"w=4 2 blocks", keccakplugin.Plugin, 4, map[string]any{"log_w": 2, "rate": 48, "blocks": 2, "rounds": 2}, true},
		{"md", md.Plugin, 8, map[string]any{"log_w": 3, "rounds": 2, "block_bits": 64, "chain_bits": 32, "message_bits": 150, "padding": "strengthened"}, false},
		{"merkle", merkle.Plugin, 4, map[string]any{"log_w": 2, "rounds": 2, "block_bits": 8, "message_bits": 40, "padding": "10*"}, false},
	} {
		w, values := tc.w, tc.values
		c := sdktest.Build(t, tc.plugin, values)
		offsets := sdktest.KeccakOffsets(w)
		for _, mode := range []string{"paper", "current"} {
			var l *layered.Circuit
			var err error
			if mode == "paper" {
				l, err = Compile(context.Background(), c)
			} else {
				l, err = CompileCurrent(context.Background(), c)
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := l.Validate(); err != nil {
				t.Fatal(err)
			}
			levels, err := sdktest.SliceLevels(l, w)
			if err != nil {
				t.Fatalf("%s, %s: %v", tc.name, mode, err)
			}
			uneven := 0
			for _, ls := range levels {
				even := ls.Even()
				if !even {
					uneven++
				}
				t.Logf("%s, %s: level %d: %d gates a slice (even %v), reading offsets %v", tc.name, mode, ls.Level, ls.PerSlice[0], even, ls.Offsets)
				for _, d := range ls.Offsets {
					if _, ok := slices.BinarySearch(offsets, d); !ok {
						t.Errorf("%s, %s: level %d reads across offset %d", tc.name, mode, ls.Level, d)
					}
				}
			}
			if tc.even && uneven > 0 {
				t.Errorf("%s, %s: %d levels with their gates spread unevenly over the slices", tc.name, mode, uneven)
			}
			for L := 1; L <= l.Depth(); L++ {
				for i := range l.LevelWidth(L) {
					g := int(l.LevelStart[L-1]) + i
					if l.Kind[g] != layered.KindCopy {
						continue
					}
					src, _ := l.Row(g)
					if got, want := l.Pos[g], l.PosAt(L-1, int(src[0])); got != want {
						t.Fatalf("%s, %s: level %d copy %d hinted %d, its source %d", tc.name, mode, L, i, got, want)
					}
				}
			}
			plain := *c
			plain.Pos = nil
			if mode == "paper" {
				l, err = Compile(context.Background(), &plain)
			} else {
				l, err = CompileCurrent(context.Background(), &plain)
			}
			if err != nil || l.HasPos() || l.InputPos != nil {
				t.Errorf("%s, %s: circuit without hints: err %v, hints %v", tc.name, mode, err, l.HasPos())
			}
		}
	}
}
