package run_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/tcforge/tcforge/host/builtin"
	"github.com/tcforge/tcforge/host/config"
	"github.com/tcforge/tcforge/host/registry"
	"github.com/tcforge/tcforge/host/run"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// TestMapperMaxWeight: `mapper "tokens-as-states" {}` over `layerer
// "fusion" {}` (no parameters) maps circuits with modular additions, the
// layerer's max_weight set from the mapper's bound (sdk.Mapper.MaxWeight:
// 2¹⁶, 8-bit chunks; at fusion's own default, 16-bit chunks, SHA-256 and
// BLAKE2s reach Σ|w·x| + |θ| of 10⁶ to 10⁹ and are not exact in float32).
// The depth says which bound the layerer used (SHA-256: (1 + c)·r + 1
// with c = 4 chunks, not 2); the model is verified in float32 against the
// layered circuit. A block that sets max_weight keeps it, and the
// mapper's refusal then names the setting that maps. Full SHA-256,
// BLAKE2s, BLAKE3 (one block) and Ascon-Hash256 in the heavy tier: the
// stock single-pass models of configs/model-frontier.hcl (a minute or
// two each).
func TestMapperMaxWeight(t *testing.T) {
	sdktest.Short(t, "maps reduced SHA-256, BLAKE2s and Ascon through tokens-as-states (seconds)")
	sha256, blake2s, blake3, ascon := []int{3}, []int{1}, []int(nil), []int{1}
	if sdktest.IsHeavy() {
		sha256, blake2s, blake3, ascon = []int{64}, []int{10}, []int{7}, []int{12}
	}
	reg := registry.New(registry.Options{Builtins: builtin.Plugins(), InProcess: true, Log: zerolog.Nop()})
	defer reg.Close()
	for _, tc := range []struct {
		construction string
		rounds       []int
		fusion       string
		depth        func(r int) int // 0: the mapper refuses
	}{
		{"\"sha2\" {\n preset = \"sha256\"\n rounds = %d\n }", sha256, "", func(r int) int { return 5*r + 1 }},
		{"\"blake2s\" {\n rounds = %d\n blocks = 1\n }", blake2s, "", func(r int) int { return 28*r + 1 }},
		{"\"blake3\" {\n rounds = %d\n blocks = 1\n }", blake3, "", func(r int) int { return 28*r + 1 }},
		{"\"ascon\" {\n rounds = %d\n }", ascon, "", func(r int) int { return 8 * r }}, // no additions: 2r levels a permutation, 4 of them
		{"\"sha2\" {\n preset = \"sha256\"\n rounds = %d\n }", sha256[:1], "max_weight = 4194304", nil},
	} {
		for _, r := range tc.rounds {
			src := fmt.Sprintf("pipeline \"p\" {\n  construction %s\n  layerer \"fusion\" { %s }\n  mapper \"tokens-as-states\" {}\n}\n", fmt.Sprintf(tc.construction, r), tc.fusion)
			f, diags := config.Parse("maxweight.hcl", []byte(src))
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			var log strings.Builder
			runner := &run.Runner{Registry: reg, Log: zerolog.New(&log), Jobs: 1, Samples: 32}
			res, err := runner.Run(context.Background(), f.Pipelines[0])
			if err != nil || len(res.Rows) != 1 || len(res.Rows[0].Models) != 1 {
				t.Fatalf("%s: %v, %d rows", src, err, len(res.Rows))
			}
			row, m := res.Rows[0], res.Rows[0].Models[0]
			if tc.depth == nil {
				if m.Err == nil || !strings.Contains(m.Err.Error(), "not exact in float32") || !strings.Contains(m.Err.Error(), "max_weight = 65536") || strings.Contains(log.String(), "max_weight") {
					t.Errorf("%s: model error %v, log %q; want the float32 refusal naming max_weight = 65536, and no default applied", src, m.Err, log.String())
				}
				continue
			}
			if !row.OK() || !m.Verified || m.ExactIn != "fp32" && !strings.Contains(m.ExactIn, "fp32") || row.Stats.Depth != tc.depth(r) || m.Stats.Blocks != row.Stats.Depth-1 {
				t.Errorf("%s: ok %v (%v), model verified %v exact in %q (%v), depth %d, %d blocks; want depth %d (8-bit chunks), a block a level but the last, exact in fp32",
					src, row.OK(), row.Err, m.Verified, m.ExactIn, m.Err, row.Stats.Depth, m.Stats.Blocks, tc.depth(r))
			}
			if !strings.Contains(log.String(), `"max_weight":65536`) || !strings.Contains(log.String(), "tokens-as-states") {
				t.Errorf("%s: the log does not say max_weight was set from the mapper: %s", src, log.String())
			}
		}
	}
}
