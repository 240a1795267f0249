package merkle

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
// f(0) = bits 0 and 1 (θ, ρ, π and χ keep 0; ι adds the constant). Two
// equal children xor to zero, and an all-zero leaf block loads the zero
// state, so each tree below hashes to f(0) when it is split as H(i, j) at
// ⌊(i+j)/2⌋ and padded as documented. Other shapes pair a zero leaf's hash
// with a random one: the 3-, 6- and 7-leaf cases fail for the mirrored
// split (⌊n/2⌋ leaves on the left), the 5-leaf case for bottom-up pairing
// with the odd node promoted, ((12)(34))5. fOfE0 is Keccak-p[25, 1](e₀) traced by hand
// (see the md package's test).
func TestReferenceHandComputed(t *testing.T) {
	const fOfE0 = "11101 00011 11000 00110 10001"
	const f0 = "1100 0000"
	toy := func(extra map[string]any) map[string]any {
		v := map[string]any{"log_w": 1, "rounds": 1, "block_bits": 4, "digest_bits": 8}
		for k, x := range extra {
			v[k] = x
		}
		return v
	}
	cases := []struct {
		name   string
		params map[string]any
		msg    string
		want   string
	}{
		{"one zero leaf", toy(map[string]any{"leaves": 1}), "0000", f0},
		{"two equal leaves cancel", toy(map[string]any{"leaves": 2}), "1011 1011", f0},
		{"3 leaves: (12)3", toy(map[string]any{"leaves": 3}), "1011 1011 0000", f0},
		{"5 leaves: ((12)3)(45)", toy(map[string]any{"leaves": 5}), "1011 1011 0000 0110 0110", f0},
		{"6 leaves: ((12)3)((45)6)", toy(map[string]any{"leaves": 6}), "1011 1011 0000 0110 0110 0000", f0},
		{"7 leaves: ((12)(34))((56)7)", toy(map[string]any{"leaves": 7}), "1011 1011 0111 0111 1110 1110 0000", f0},
		{"0* fills the last leaf", toy(map[string]any{"message_bits": 6}), "1000 10", f0},
		{"10* fills the last leaf", toy(map[string]any{"message_bits": 7, "padding": "10*"}), "1101 110", f0},
		{"10* adds a leaf to a full message", toy(map[string]any{"message_bits": 4, "padding": "10*"}), "1000", f0},
		{"empty message, 0*: one zero leaf", toy(map[string]any{"message_bits": 0}), "", f0},
		{"w = 1, f(e0) by hand", map[string]any{"log_w": 0, "rounds": 1, "block_bits": 1, "digest_bits": 25, "leaves": 1}, "1", fOfE0},
		{"Keccak-f[1600](0), published lanes", map[string]any{"log_w": 6, "rounds": 24, "block_bits": 128, "leaves": 2},
			strings.Repeat("1", 256), bitvec.Vec{0xF1258F7940E1DDE7, 0x84D5CCF933C0478A}.Text(128)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in, n := sdktest.Bits(t, tc.msg)
			p := sdktest.Pass(t, Plugin, tc.params)
			if cfg := p.Prepared.(config); cfg.msgBits != n {
				t.Fatalf("message of %d bits, config %+v", n, cfg)
			}
			out, err := Plugin.Reference(context.Background(), p, []bitvec.Vec{in})
			if err != nil {
				t.Fatal(err)
			}
			want, wn := sdktest.Bits(t, tc.want)
			got := out[0].Bytes(wn)
			for i := range got {
				if uint(got[i]) != want.Get(i) {
					t.Fatalf("message %q: root %v, want %s", tc.msg, got, tc.want)
				}
			}
		})
	}
}

func TestCircuitMatchesReference(t *testing.T) {
	cases := []map[string]any{
		{"log_w": 1, "rounds": 1, "rate": 12, "block_bits": 4, "leaves": 4},
		{"log_w": 1, "rounds": 2, "block_bits": 4, "digest_bits": 6, "leaves": 3},
		{"log_w": 1, "rounds": 1, "block_bits": 7, "digest_bits": 3, "message_bits": 30},
		{"log_w": 2, "rounds": 2, "block_bits": 8, "message_bits": 40, "padding": "10*"},
		{"log_w": 2, "rounds": 13, "block_bits": 5, "digest_bits": 9, "message_bits": 33, "padding": "10*"},
		{"log_w": 0, "rounds": 3, "block_bits": 25, "leaves": 7},
		{"log_w": 3, "rounds": 2, "block_bits": 64, "digest_bits": 32, "message_bits": 150},
		{"log_w": 1, "rounds": 1, "block_bits": 4, "message_bits": 0},
		{"log_w": 6, "rounds": 24, "rate": 1088, "block_bits": 512, "leaves": 2},
	}
	for _, v := range cases {
		// The host's point pipeline: build, validate, 64 seeded inputs
		// through the circuit and the reference.
		c := sdktest.CheckReference(t, Plugin, v, 64)
		cfg := sdktest.Pass(t, Plugin, v).Prepared.(config)
		if len(c.Inputs) != cfg.msgBits || len(c.Outputs) != cfg.digestBits {
			t.Fatalf("%v: %d inputs, %d outputs; want %d, %d", v, len(c.Inputs), len(c.Outputs), cfg.msgBits, cfg.digestBits)
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
		params                   map[string]any
		leaves, msg, height, cmp int
	}{
		{map[string]any{"log_w": 1, "block_bits": 4}, 1, 4, 0, 1},
		{map[string]any{"log_w": 1, "block_bits": 4, "leaves": 8}, 8, 32, 3, 15},
		{map[string]any{"log_w": 1, "block_bits": 4, "leaves": 5}, 5, 20, 3, 9},
		{map[string]any{"log_w": 1, "block_bits": 4, "leaves": 5, "padding": "10*"}, 5, 19, 3, 9},
		{map[string]any{"log_w": 1, "block_bits": 4, "message_bits": 9}, 3, 9, 2, 5},
		{map[string]any{"log_w": 1, "block_bits": 4, "message_bits": 8, "padding": "10*"}, 3, 8, 2, 5},
		{map[string]any{"log_w": 1, "block_bits": 4, "leaves": 3, "message_bits": 9}, 3, 9, 2, 5},
	} {
		c, err := Plugin.Build(context.Background(), sdktest.Pass(t, Plugin, tc.params))
		if err != nil {
			t.Fatalf("%v: %v", tc.params, err)
		}
		a := c.Attrs
		if a["leaves"] != int64(tc.leaves) || a["message_bits"] != int64(tc.msg) || a["height"] != int64(tc.height) || a["compressions"] != int64(tc.cmp) {
			t.Errorf("%v: attrs %v, want leaves %d message_bits %d height %d compressions %d", tc.params, a, tc.leaves, tc.msg, tc.height, tc.cmp)
		}
	}
}

func TestRejectsImpossibleParams(t *testing.T) {
	for _, tc := range []struct {
		params map[string]any
		param  string
		msg    string
	}{
		{map[string]any{"log_w": 1, "block_bits": 4, "leaves": 0}, "leaves", "needs at least one leaf, got 0"},
		{map[string]any{"log_w": 1, "block_bits": 4, "leaves": -3}, "leaves", "needs at least one leaf, got -3"},
		{map[string]any{"log_w": 1, "block_bits": 0}, "block_bits", "must be at least 1"},
		{map[string]any{"log_w": 1, "block_bits": 51}, "block_bits", "larger than the Keccak-p state of 25w = 50 bits"},
		{map[string]any{"log_w": 1, "block_bits": 4, "digest_bits": 51}, "digest_bits", "larger than the Keccak-p state of 25w = 50 bits"},
		{map[string]any{"log_w": 1, "block_bits": 4, "digest_bits": 0}, "digest_bits", "must be at least 1"},
		{map[string]any{"log_w": 1, "block_bits": 4, "rate": 0}, "rate", "between 1 and 25w − 1 = 49"},
		{map[string]any{"log_w": 1, "block_bits": 4, "digest_bits": 8, "rate": 6}, "rate", "smaller than block_bits 4 or digest_bits 8"},
		{map[string]any{"log_w": 1, "block_bits": 4, "leaves": 2, "message_bits": 9}, "message_bits", "pads (zero) to 3 leaves"},
		{map[string]any{"log_w": 1, "block_bits": 4, "leaves": 2, "message_bits": 8, "padding": "10*"}, "message_bits", "pads (10*) to 3 leaves"},
	} {
		// Prepare, which the host runs before any call, refuses them.
		sdktest.CheckRefused(t, Plugin, tc.params, tc.param, tc.msg)
	}
}

// TestEstimate: the size the host's size guard sees is within 2% of the
// circuit Build returns.
func TestEstimate(t *testing.T) {
	for _, values := range []map[string]any{
		{"log_w": int64(2), "block_bits": int64(8), "leaves": int64(40)},
		{"log_w": int64(2), "block_bits": int64(8), "leaves": int64(7), "rounds": int64(3)},
		{"log_w": int64(2), "block_bits": int64(8), "digest_bits": int64(12), "message_bits": int64(101), "padding": "10*"},
		{"log_w": int64(3), "block_bits": int64(16), "message_bits": int64(500)},
		{"log_w": int64(1), "block_bits": int64(4), "leaves": int64(2)},
	} {
		sdktest.CheckEstimate(t, Plugin, values, 50)
	}
}

// BenchmarkEstimateHuge: what refusing a huge instance costs.
func BenchmarkEstimateHuge(b *testing.B) {
	p, err := sdk.NewPass(context.Background(), Plugin, map[string]any{"log_w": int64(6), "block_bits": int64(256), "leaves": int64(100_000_000)})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Plugin.Estimate(context.Background(), p); err != nil {
			b.Fatal(err)
		}
	}
}
