package keccak_test

import (
	"bytes"
	"context"
	"crypto/sha3"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tcforge/tcforge/plugins/keccak"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/keccak/keccakref"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

func mustBuild(t *testing.T, values map[string]any) (*circuit.Circuit, *sdk.Pass) {
	t.Helper()
	p := sdktest.Pass(t, keccak.Plugin, values)
	c, err := keccak.Plugin.Build(context.Background(), p)
	if err != nil {
		t.Fatalf("Build(%v): %v", values, err)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("Build(%v): invalid circuit: %v", values, err)
	}
	return c, p
}

// msgVec turns a byte message into circuit input bits (SHA-3's bit order:
// bit i of the message is bit i%8 of byte i/8).
func msgVec(msg []byte) bitvec.Vec { return bitvec.FromBytes(keccakref.BytesToBits(msg)) }

// digestBytes packs n output bits into bytes in the same order.
func digestBytes(v bitvec.Vec, n int) []byte { return keccakref.BitsToBytes(v.Bytes(n)) }

// TestPresetsAgainstStdlib evaluates the circuits of the standard
// instances on random messages and compares with crypto/sha3 directly.
func TestPresetsAgainstStdlib(t *testing.T) {
	tests := []struct {
		preset   string
		msgBytes int // 0: the longest one-block message
		outBits  int
		sum      func(msg []byte, outBytes int) []byte
	}{
		{"sha3-224", 0, 0, func(m []byte, _ int) []byte { d := sha3.Sum224(m); return d[:] }},
		{"sha3-256", 0, 0, func(m []byte, _ int) []byte { d := sha3.Sum256(m); return d[:] }},
		{"sha3-384", 0, 0, func(m []byte, _ int) []byte { d := sha3.Sum384(m); return d[:] }},
		{"sha3-512", 0, 0, func(m []byte, _ int) []byte { d := sha3.Sum512(m); return d[:] }},
		{"shake128", 0, 0, func(m []byte, n int) []byte { return sha3.SumSHAKE128(m, n) }},
		{"shake256", 0, 0, func(m []byte, n int) []byte { return sha3.SumSHAKE256(m, n) }},
		{"sha3-256", 250, 0, func(m []byte, _ int) []byte { d := sha3.Sum256(m); return d[:] }}, // 2 blocks
		{"shake128", 10, 2000, func(m []byte, n int) []byte { return sha3.SumSHAKE128(m, n) }},  // 2 squeezes
		{"sha3-512", 0, 0, func(m []byte, _ int) []byte { d := sha3.Sum512(m); return d[:] }},   // again: deterministic build
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tt := range tests {
		values := map[string]any{"preset": tt.preset}
		if tt.msgBytes > 0 {
			values["message_bits"] = int64(8 * tt.msgBytes)
		}
		if tt.outBits > 0 {
			values["output_bits"] = int64(tt.outBits)
		}
		c, _ := mustBuild(t, values)
		msgBits := len(c.Inputs)
		if msgBits%8 != 0 {
			t.Fatalf("%s: %d message bits, want whole bytes", tt.preset, msgBits)
		}
		var in []bitvec.Vec
		var msgs [][]byte
		for range 3 {
			m := make([]byte, msgBits/8)
			for i := range m {
				m[i] = byte(rng.Uint32())
			}
			msgs = append(msgs, m)
			in = append(in, msgVec(m))
		}
		out, err := bitvec.EvalSliced(in, msgBits, c.Eval)
		if err != nil {
			t.Fatal(err)
		}
		for k, m := range msgs {
			want := tt.sum(m, len(c.Outputs)/8)
			if got := digestBytes(out[k], len(c.Outputs)); !bytes.Equal(got, want) {
				t.Errorf("%s (%d-byte message): circuit %x, crypto/sha3 %x", tt.preset, len(m), got, want)
			}
		}
	}
}

// TestCircuitAgainstReference checks toy lane sizes, round counts,
// paddings and the paper's unpadded multi-block inputs against the
// plugin's Reference (the independent lane-arithmetic keccakref).
func TestCircuitAgainstReference(t *testing.T) {
	tests := []map[string]any{
		{"log_w": int64(0), "rate": int64(12)},
		{"log_w": int64(1), "rate": int64(25), "rounds": int64(2), "blocks": int64(4)},
		{"log_w": int64(2), "rate": int64(50), "rounds": int64(13), "first_block": "load"},
		{"log_w": int64(3), "capacity": int64(100), "padding": "sha3", "message_bits": int64(250)},
		{"log_w": int64(4), "rate": int64(300), "padding": "shake", "output_bits": int64(700)},
		{"log_w": int64(5), "rate": int64(544), "padding": "keccak", "blocks": int64(2)},
		{"preset": "keccak-256"},
		{"preset": "sha3-256", "message_bits": int64(1085)}, // not whole bytes: keccakref, not crypto/sha3
	}
	for _, values := range tests {
		c, p := mustBuild(t, values)
		in := bitvec.Random(rand.New(rand.NewPCG(3, 4)), 70, len(c.Inputs))
		got, err := bitvec.EvalSliced(in, len(c.Inputs), c.Eval)
		if err != nil {
			t.Fatal(err)
		}
		want, err := keccak.Plugin.Reference(context.Background(), p, in)
		if err != nil {
			t.Fatal(err)
		}
		for k := range in {
			if !bitvec.Equal(got[k], want[k], len(c.Outputs)) {
				t.Fatalf("%v: sample %d: circuit and reference differ", values, k)
			}
		}
	}
}

// TestAttrs checks the resolved figures a circuit reports (expect blocks
// read them as construction.*).
func TestAttrs(t *testing.T) {
	tests := []struct {
		values map[string]any
		want   map[string]int64
	}{
		{map[string]any{"preset": "sha3-256"}, map[string]int64{"w": 64, "b": 1600, "rounds": 24, "rate": 1088, "capacity": 512, "blocks": 1, "message_bits": 1080, "output_bits": 256, "squeezes": 0}},
		{map[string]any{"preset": "shake128", "message_bits": int64(1000), "output_bits": int64(3000)}, map[string]int64{"rate": 1344, "blocks": 1, "output_bits": 3000, "squeezes": 2}},
		{map[string]any{"log_w": int64(2), "rate": int64(50), "rounds": int64(19)}, map[string]int64{"w": 4, "b": 100, "rounds": 19, "blocks": 1, "message_bits": 50, "zero_rc_rounds": 2}},
	}
	for _, tt := range tests {
		c, _ := mustBuild(t, tt.values)
		for k, v := range tt.want {
			if c.Attrs[k] != v {
				t.Errorf("%v: %s = %d, want %d", tt.values, k, c.Attrs[k], v)
			}
		}
		if got := int64(len(c.Outputs)); got != c.Attrs["output_bits"] {
			t.Errorf("%v: %d outputs, output_bits = %d", tt.values, got, c.Attrs["output_bits"])
		}
	}
}

// TestRejects: impossible parameters are refused with the reason, by the
// schema or by Prepare (sdk.NewPass), before anything is built.
func TestRejects(t *testing.T) {
	tests := []struct {
		values map[string]any
		param  string
		want   string
	}{
		{map[string]any{"log_w": int64(7), "rate": int64(10)}, "log_w", "at most 6"},
		{map[string]any{"log_w": int64(2), "rate": int64(0)}, "rate", "at least 1"},
		{map[string]any{"log_w": int64(2), "rate": int64(100)}, "rate", "less than the state size"},
		{map[string]any{"log_w": int64(2), "rounds": int64(0), "rate": int64(50)}, "rounds", "at least 1"},
		{map[string]any{"log_w": int64(2)}, "rate", "set rate or capacity"},
		{map[string]any{"log_w": int64(2), "rate": int64(50), "capacity": int64(40)}, "capacity", "must equal the state size"},
		{map[string]any{"preset": "sha3-256", "log_w": int64(4)}, "log_w", "defined for w = 64"},
		{map[string]any{"preset": "sha3-999"}, "preset", "one of"},
		{map[string]any{"log_w": int64(2), "rate": int64(50), "message_bits": int64(70)}, "message_bits", "multiple of rate"},
		{map[string]any{"log_w": int64(2), "rate": int64(50), "blocks": int64(2), "message_bits": int64(100)}, "message_bits", "not both"},
		{map[string]any{"log_w": int64(0), "rate": int64(2), "padding": "shake"}, "rate", "too small"},
	}
	for _, tt := range tests {
		_, err := sdk.NewPass(context.Background(), keccak.Plugin, tt.values)
		pe, ok := sdk.AsParamError(err)
		if !ok {
			t.Errorf("%v: error %v, want a parameter error", tt.values, err)
			continue
		}
		if pe.Param != tt.param || !strings.Contains(pe.Msg, tt.want) {
			t.Errorf("%v: %v, want parameter %q: …%s…", tt.values, pe, tt.param, tt.want)
		}
	}
}

// TestEstimate: the size the host's size guard sees is within 5% of the
// circuit Build returns.
func TestEstimate(t *testing.T) {
	for _, values := range []map[string]any{
		{"preset": "sha3-256"},
		{"preset": "sha3-256", "message_bits": int64(8000)},
		{"preset": "shake128", "output_bits": int64(5000)},
		{"log_w": int64(1), "rate": int64(25), "blocks": int64(4), "rounds": int64(2)},
		{"log_w": int64(3), "capacity": int64(100), "padding": "sha3", "message_bits": int64(250)},
	} {
		sdktest.CheckEstimate(t, keccak.Plugin, values, 20)
	}
}

// BenchmarkBuildSHA3_256 builds the full SHA3-256 logic circuit.
func BenchmarkBuildSHA3_256(b *testing.B) {
	p, err := sdk.NewPass(context.Background(), keccak.Plugin, map[string]any{"preset": "sha3-256"})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := keccak.Plugin.Build(context.Background(), p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEvalLogicSHA3_256 evaluates the SHA3-256 logic circuit on 1024
// messages on all cores; it reports messages per second.
func BenchmarkEvalLogicSHA3_256(b *testing.B) {
	p, err := sdk.NewPass(context.Background(), keccak.Plugin, map[string]any{"preset": "sha3-256"})
	if err != nil {
		b.Fatal(err)
	}
	c, err := keccak.Plugin.Build(context.Background(), p)
	if err != nil {
		b.Fatal(err)
	}
	in := bitvec.Random(rand.New(rand.NewPCG(1, 2)), 1024, len(c.Inputs))
	for b.Loop() {
		if _, err := bitvec.EvalSliced(in, len(c.Inputs), c.Eval); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(in)*b.N)/b.Elapsed().Seconds(), "msgs/s")
}

// TestSlices checks the construction's position hints: every node of the
// sponge — message inputs, padding constants, θ, χ, ι, the state
// registers — is hinted with the slice z of its state bit (message bit j
// lands in state bit j mod rate), and every operand lies in a slice a
// Keccak round reads (z, z−1, z − ρ offset).
func TestSlices(t *testing.T) {
	for _, values := range []map[string]any{
		{"log_w": 0, "rate": 15, "rounds": 2},
		{"log_w": 2, "rate": 60, "rounds": 3, "blocks": 2, "padding": "sha3"},
		{"log_w": 3, "rate": 160, "first_block": "load", "blocks": 2},
		{"log_w": 4, "rate": 200, "output_bits": 500, "padding": "shake"},
		{"preset": "sha3-256"},
	} {
		c, _ := mustBuild(t, values)
		w := 1 << 6
		if lw, ok := values["log_w"]; ok {
			w = 1 << lw.(int)
		}
		rate := c.Attrs["rate"]
		// Message bit j and output bit j (squeezed rate bits at a time)
		// are state bit j mod rate.
		slice := func(j int) int { return int(int64(j)%rate) % w }
		sdktest.CheckSlices(t, c, w, slice, slice)
		// The padding constants too: every node, inputs and constants
		// included, is hinted.
		for i, op := range c.Ops {
			if op == circuit.OpConst && (c.Pos[i] < 0 || int(c.Pos[i]) >= w) {
				t.Fatalf("%v: constant %d (%q) hinted %d", values, i, c.Tags[c.Tag[i]], c.Pos[i])
			}
		}
	}
}
