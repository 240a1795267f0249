package md

import (
	"context"
	"strings"
	"testing"

	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// TestReferenceHandComputed checks the reference on cases worked out by
// hand. With log_w = 1 and one round (round index 13, RC low bits 11),
// f(0) = θρπχ(0) ⊕ ι = bits 0 and 1, so every chain whose compression
// input cancels to zero yields 1100. fOfE0 is Keccak-p[25, 1](e₀) traced by
// hand: θ sets (0,0), column 1 and column 4; π moves them; χ row by row; ι
// adds nothing (RC[11] is even).
func TestReferenceHandComputed(t *testing.T) {
	const fOfE0 = "11101 00011 11000 00110 10001"
	cases := []struct {
		name   string
		params map[string]any
		msg    string
		want   string
	}{
		{"one zero block", map[string]any{"log_w": 1, "rounds": 1, "block_bits": 4, "blocks": 1}, "0000", "1100"},
		{"second block cancels the chain", map[string]any{"log_w": 1, "rounds": 1, "block_bits": 4, "blocks": 2}, "0000 1100", "1100"},
		{"0* fills the last block", map[string]any{"log_w": 1, "rounds": 1, "block_bits": 4, "message_bits": 6}, "0000 11", "1100"},
		{"strengthened: length 12 = 1100 cancels", map[string]any{"log_w": 1, "rounds": 1, "block_bits": 4, "message_bits": 12, "padding": "strengthened"}, "0000 1100 1100", "1100"},
		{"strengthened empty message: length block 0000", map[string]any{"log_w": 1, "rounds": 1, "block_bits": 4, "message_bits": 0, "padding": "strengthened"}, "", "1100"},
		{"short block is zero-extended", map[string]any{"log_w": 1, "rounds": 1, "block_bits": 2, "chain_bits": 4, "blocks": 2}, "00 11", "1100"},
		{"short chain is zero-extended", map[string]any{"log_w": 1, "rounds": 1, "block_bits": 4, "chain_bits": 2, "blocks": 2}, "0000 1100", "11"},
		{"w = 1, f(e0) by hand", map[string]any{"log_w": 0, "rounds": 1, "block_bits": 1, "chain_bits": 25, "blocks": 1}, "1", fOfE0},
		{"Keccak-f[1600](0), published lanes", map[string]any{"log_w": 6, "rounds": 24, "block_bits": 128, "blocks": 1}, strings.Repeat("0", 128),
			bitvec.Vec{0xF1258F7940E1DDE7, 0x84D5CCF933C0478A}.Text(128)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in, n := sdktest.Bits(t, tc.msg)
			out, err := Plugin.Reference(context.Background(), sdktest.Pass(t, Plugin, tc.params), []bitvec.Vec{in})
			if err != nil {
				t.Fatal(err)
			}
			want, wn := sdktest.Bits(t, tc.want)
			got := out[0].Bytes(wn)
			for i := range got {
				if uint(got[i]) != want.Get(i) {
					t.Fatalf("message %q (%d bits): digest %v, want %s", tc.msg, n, got, tc.want)
				}
			}
		})
	}
}

func TestCircuitMatchesReference(t *testing.T) {
	cases := []map[string]any{
		{"log_w": 1, "rounds": 1, "rate": 12, "block_bits": 4, "chain_bits": 4, "blocks": 3},
		{"log_w": 1, "rounds": 2, "block_bits": 3, "chain_bits": 5, "message_bits": 10},
		{"log_w": 1, "rounds": 1, "block_bits": 7, "chain_bits": 2, "message_bits": 20},
		{"log_w": 2, "rounds": 2, "block_bits": 8, "message_bits": 13, "padding": "strengthened"},
		{"log_w": 2, "rounds": 13, "block_bits": 5, "chain_bits": 3, "message_bits": 0, "padding": "strengthened"},
		{"log_w": 0, "rounds": 3, "block_bits": 25, "blocks": 2},
		{"log_w": 3, "rounds": 2, "block_bits": 64, "chain_bits": 32, "message_bits": 150, "padding": "strengthened"},
		{"log_w": 6, "rounds": 24, "rate": 1088, "block_bits": 512, "blocks": 2},
	}
	for _, v := range cases {
		// The host's point pipeline: build, validate, 64 seeded inputs
		// through the circuit and the reference.
		c := sdktest.CheckReference(t, Plugin, v, 64)
		cfg := sdktest.Pass(t, Plugin, v).Prepared.(config)
		if len(c.Inputs) != cfg.msgBits || len(c.Outputs) != cfg.chainBits {
			t.Fatalf("%v: %d inputs, %d outputs; want %d, %d", v, len(c.Inputs), len(c.Outputs), cfg.msgBits, cfg.chainBits)
		}
		// Position hints: every node at the slice of its state bit;
		// message bit j is bit j mod block_bits of its block, loaded into
		// state bit j mod block_bits.
		w := cfg.perm.W()
		sdktest.CheckSlices(t, c, w, func(j int) int { return j % cfg.blockBits % w }, func(j int) int { return j % w })
	}
}

func TestAttrs(t *testing.T) {
	for _, tc := range []struct {
		params                          map[string]any
		blocks, compressions, msg, load int
	}{
		{map[string]any{"log_w": 1, "rounds": 1, "block_bits": 4, "blocks": 3}, 3, 3, 12, 4},
		{map[string]any{"log_w": 1, "rounds": 1, "block_bits": 4, "message_bits": 9}, 3, 3, 9, 4},
		{map[string]any{"log_w": 1, "rounds": 1, "block_bits": 4, "message_bits": 9, "padding": "strengthened"}, 3, 4, 9, 4},
		{map[string]any{"log_w": 1, "rounds": 1, "block_bits": 4, "message_bits": 0}, 1, 1, 0, 4},
		{map[string]any{"log_w": 1, "rounds": 1, "block_bits": 3, "chain_bits": 6, "blocks": 2, "padding": "strengthened"}, 2, 3, 6, 6},
	} {
		c, err := Plugin.Build(context.Background(), sdktest.Pass(t, Plugin, tc.params))
		if err != nil {
			t.Fatalf("%v: %v", tc.params, err)
		}
		a := c.Attrs
		if a["blocks"] != int64(tc.blocks) || a["compressions"] != int64(tc.compressions) || a["message_bits"] != int64(tc.msg) || a["load_bits"] != int64(tc.load) {
			t.Errorf("%v: attrs %v, want blocks %d compressions %d message_bits %d load_bits %d", tc.params, a, tc.blocks, tc.compressions, tc.msg, tc.load)
		}
	}
}

func TestRejectsImpossibleParams(t *testing.T) {
	for _, tc := range []struct {
		params map[string]any
		param  string
		msg    string
	}{
		{map[string]any{"log_w": 1, "block_bits": 0}, "block_bits", "must be at least 1"},
		{map[string]any{"log_w": 1, "block_bits": 51}, "block_bits", "larger than the Keccak-p state of 25w = 50 bits"},
		{map[string]any{"log_w": 1, "block_bits": 4, "chain_bits": 51}, "chain_bits", "larger than the Keccak-p state of 25w = 50 bits"},
		{map[string]any{"log_w": 6, "block_bits": 256, "chain_bits": 1601}, "chain_bits", "larger than the Keccak-p state of 25w = 1600 bits"},
		{map[string]any{"log_w": 1, "block_bits": 4, "chain_bits": 0}, "chain_bits", "must be at least 1"},
		{map[string]any{"log_w": 1, "block_bits": 4, "rate": 50}, "rate", "between 1 and 25w − 1 = 49"},
		{map[string]any{"log_w": 1, "block_bits": 8, "chain_bits": 4, "rate": 6}, "rate", "smaller than block_bits 8"},
		{map[string]any{"log_w": 1, "block_bits": 4, "blocks": 2, "message_bits": 8}, "message_bits", "not both"},
		{map[string]any{"log_w": 1, "block_bits": 4, "message_bits": 16, "padding": "strengthened"}, "message_bits", "does not fit the 4-bit length block"},
	} {
		// Prepare, which the host runs before any call, refuses them.
		sdktest.CheckRefused(t, Plugin, tc.params, tc.param, tc.msg)
	}
	// Bounds in the schema are checked before the plugin runs.
	if _, err := sdk.NewParams(Plugin.Params, map[string]any{"blocks": int64(0)}); err == nil {
		t.Error("blocks = 0 accepted")
	}
}

// TestEstimate: the size the host's size guard sees is within 2% of the
// circuit Build returns.
func TestEstimate(t *testing.T) {
	for _, values := range []map[string]any{
		{"log_w": int64(2), "block_bits": int64(8), "blocks": int64(40)},
		{"log_w": int64(2), "block_bits": int64(8), "blocks": int64(4), "rounds": int64(3)},
		{"log_w": int64(2), "block_bits": int64(8), "chain_bits": int64(12), "message_bits": int64(101), "padding": "strengthened"},
		{"log_w": int64(3), "block_bits": int64(16), "message_bits": int64(500)},
		{"log_w": int64(1), "block_bits": int64(4), "blocks": int64(2)},
	} {
		sdktest.CheckEstimate(t, Plugin, values, 50)
	}
}

// BenchmarkEstimateHuge: what refusing a huge instance costs.
func BenchmarkEstimateHuge(b *testing.B) {
	p, err := sdk.NewPass(context.Background(), Plugin, map[string]any{"log_w": int64(6), "block_bits": int64(256), "blocks": int64(100_000_000)})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Plugin.Estimate(context.Background(), p); err != nil {
			b.Fatal(err)
		}
	}
}
