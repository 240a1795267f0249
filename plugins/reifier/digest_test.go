package reifier_test

import (
	"context"
	"testing"

	"github.com/tcforge/tcforge/plugins/adder"
	"github.com/tcforge/tcforge/plugins/keccak"
	"github.com/tcforge/tcforge/plugins/md"
	"github.com/tcforge/tcforge/plugins/merkle"
	"github.com/tcforge/tcforge/plugins/reifier"
	"github.com/tcforge/tcforge/plugins/sha2"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// constants is a small circuit of every op with constants read at several
// levels, a constant output, an input read far above its level, an
// unread constant and a threshold gate.
func constants() *circuit.Circuit {
	b := circuit.NewBuilder()
	x := b.Input("x", 4)
	one, zero := b.Const(1), b.Const(0)
	b.Const(1) // read by nobody
	a := b.And(x[0], x[1], one)
	o := b.Or(a, zero)
	n := b.Not(o)
	v := b.Xor(n, x[2], one)
	t := b.Threshold(2, []circuit.Node{v, x[3], a}, []int32{1, 2, -1})
	d := b.AndNot(t, x[0])
	b.Output("out", []circuit.Node{d, zero, x[1], v})
	return b.Circuit()
}

// TestOutputUnchanged pins the layered circuits bit for bit: the SHA-256
// of the encoding (MarshalBinary) of what Compile (and CompileBounded)
// builds from a few circuits. A refactor must leave these digests alone; a
// change meant to alter the circuits updates them (the test prints the new
// digest) and says why in its commit.
func TestOutputUnchanged(t *testing.T) {
	tests := []struct {
		name   string
		c      *circuit.Circuit
		maxSum int64 // 0: Compile
		want   string
	}{
		{"constants", constants(), 0, "cc017f1ab0c5d65652535e620b904453acba4c2c19dc100d5d1a4ad4cc56a125"},
		{"keccak w=2 r2 2 blocks", sdktest.Build(t, keccak.Plugin, map[string]any{"log_w": int64(1), "rate": int64(25), "rounds": int64(2), "blocks": int64(2)}), 0, "f468732811174fc3ea374ad7431ba3217a12bfbaea73f1d74b974556a25496a8"},
		{"keccak w=8 r3", sdktest.Build(t, keccak.Plugin, map[string]any{"log_w": int64(3), "rate": int64(100), "rounds": int64(3)}), 0, "ac3f49fc7f71a3ca45b6bb1f45b4614a91ed5cdfce23b25d16fe43bde535032c"},
		{"md strengthened", sdktest.Build(t, md.Plugin, map[string]any{"log_w": int64(1), "rounds": int64(2), "block_bits": int64(20), "blocks": int64(2), "padding": "strengthened"}), 0, "2b1ce86f68b47a3c08845898231b2ac6efe222cb0fa502272e48c02ce98261b4"},
		{"merkle 3 leaves", sdktest.Build(t, merkle.Plugin, map[string]any{"log_w": int64(1), "rounds": int64(2), "block_bits": int64(20), "leaves": int64(3)}), 0, "b2503d3ae3d9da3026ce21ddc75ba70afebee31990f00de17dec856db6841c36"},
		{"adder 8", sdktest.Build(t, adder.Plugin, map[string]any{"n": int64(8)}), 0, "63746173a0aa2491ece29b37935a50f4e915e91bee59958f2d5963a375f15d0b"},
		{"sha256 compress r3", sdktest.Build(t, sha2.Plugin, map[string]any{"preset": "sha256", "rounds": int64(3), "mode": "compress"}), 0, "863255a61649a2da383ce94768e1135e742ce929df6ef2e05aeaaa534619c761"},
		{"sha256 compress r3 bounded 2^8", sdktest.Build(t, sha2.Plugin, map[string]any{"preset": "sha256", "rounds": int64(3), "mode": "compress"}), 1 << 8, "6f5d5dc309ad5f66134e559228a41aa970b3d877a3dac7164d1ce0cdd2822e90"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			compile := reifier.Compile
			if tc.maxSum > 0 {
				compile = func(ctx context.Context, c *circuit.Circuit) (*layered.Circuit, error) {
					return reifier.CompileBounded(ctx, c, tc.maxSum)
				}
			}
			l, err := compile(context.Background(), tc.c)
			if err != nil {
				t.Fatal(err)
			}
			if got := sdktest.Digest(t, l); got != tc.want {
				t.Errorf("layered encoding's digest %s, want %s", got, tc.want)
			}
		})
	}
}
