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
		{"constants", constants(), 0, "1c608428f8ed87284538814c569634566dfdf2ddd1eef20d7da66facb0846634"},
		{"keccak w=2 r2 2 blocks", sdktest.Build(t, keccak.Plugin, map[string]any{"log_w": int64(1), "rate": int64(25), "rounds": int64(2), "blocks": int64(2)}), 0, "f468732811174fc3ea374ad7431ba3217a12bfbaea73f1d74b974556a25496a8"},
		{"keccak w=8 r3", sdktest.Build(t, keccak.Plugin, map[string]any{"log_w": int64(3), "rate": int64(100), "rounds": int64(3)}), 0, "ac3f49fc7f71a3ca45b6bb1f45b4614a91ed5cdfce23b25d16fe43bde535032c"},
		{"md strengthened", sdktest.Build(t, md.Plugin, map[string]any{"log_w": int64(1), "rounds": int64(2), "block_bits": int64(20), "blocks": int64(2), "padding": "strengthened"}), 0, "2b1ce86f68b47a3c08845898231b2ac6efe222cb0fa502272e48c02ce98261b4"},
		{"merkle 3 leaves", sdktest.Build(t, merkle.Plugin, map[string]any{"log_w": int64(1), "rounds": int64(2), "block_bits": int64(20), "leaves": int64(3)}), 0, "b2503d3ae3d9da3026ce21ddc75ba70afebee31990f00de17dec856db6841c36"},
		{"adder 8", sdktest.Build(t, adder.Plugin, map[string]any{"n": int64(8)}), 0, "63746173a0aa2491ece29b37935a50f4e915e91bee59958f2d5963a375f15d0b"},
		{"sha256 compress r3", sdktest.Build(t, sha2.Plugin, map[string]any{"preset": "sha256", "rounds": int64(3), "mode": "compress"}), 0, "863255a61649a2da383ce94768e1135e742ce929df6ef2e05aeaaa534619c761"},
		{"sha256 compress r3 bounded 2^8", sdktest.Build(t, sha2.Plugin, map[string]any{"preset": "sha256", "rounds": int64(3), "mode": "compress"}), 1 << 8, "e1afbe54374bce03546589d4a9f458d00259be40e5c055f22a7ac3923b0db30f"},
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
			sdktest.CheckLayered(t, tc.c, l, 128)
			if got := sdktest.Digest(t, l); got != tc.want {
				t.Errorf("layered encoding's digest %s, want %s", got, tc.want)
			}
		})
	}
}

// TestConstantsPerLevel checks that a constant read at several levels is
// placed below each of them, never carried: a chain whose last gate reads
// the constant the first gate read costs what the same chain costs with a
// constant of its own for the last gate (what Builder.Fresh made for
// reifier's sake before), and no copy gate carries it.
func TestConstantsPerLevel(t *testing.T) {
	chain := func(n int, fresh bool) *circuit.Circuit {
		b := circuit.NewBuilder()
		x := b.Input("x", 2)
		one := b.Const(1)
		v := b.And(x[0], one) // level 2, the constant at 1
		for range n {
			v = b.Xor(v, x[1]) // two levels each
		}
		last := one
		if fresh {
			last = b.Const(1)
		}
		b.Output("out", []circuit.Node{b.And(v, last), one})
		return b.Circuit()
	}
	for _, n := range []int{1, 2, 5, 20} {
		shared, err := reifier.Compile(context.Background(), chain(n, false))
		if err != nil {
			t.Fatal(err)
		}
		fresh, err := reifier.Compile(context.Background(), chain(n, true))
		if err != nil {
			t.Fatal(err)
		}
		sdktest.CheckLayered(t, chain(n, false), shared, 64)
		s, f := shared.Stats(), fresh.Stats()
		// Depth 2n+4: the first AND at 2, n XORs of two levels, the last
		// AND, the output copies. Copies: x[0] carried to the first AND
		// (1), x[1] to the last XOR's counters at 2n+1 (2n), the constant
		// never; the output level's two.
		wantDepth, wantCopies := 2*n+4, 1+2*n+2
		if s.Depth != wantDepth || s.Copies != wantCopies {
			t.Errorf("n=%d: depth %d, copies %d, want %d, %d (widths %v)", n, s.Depth, s.Copies, wantDepth, wantCopies, s.Widths)
		}
		if s.Depth != f.Depth || s.Width != f.Width || s.Gates != f.Gates || s.Copies != f.Copies || s.Edges != f.Edges {
			t.Errorf("n=%d: a shared constant gives %+v, a fresh one %+v", n, s, f)
		}
	}
}
