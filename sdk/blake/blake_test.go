package blake_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/blake"
	"github.com/tcforge/tcforge/sdk/circuit"
)

// TestBlocks: where each block sits, for BLAKE2's one chain and BLAKE3's
// chunks of 1024 bytes, at the boundaries.
func TestBlocks(t *testing.T) {
	b2 := blake.Mode{BlockBytes: 64, W: 32}
	b3 := blake.Mode{BlockBytes: 64, ChunkBytes: 1024, W: 32}
	for _, tc := range []struct {
		md            blake.Mode
		bytes, blocks int
		chunks        int
		last          blake.Block
	}{
		{b2, 0, 1, 1, blake.Block{Index: 0, Start: 0, Len: 0, First: true, Last: true, Root: true}},
		{b2, 64, 1, 1, blake.Block{Index: 0, Start: 0, Len: 64, First: true, Last: true, Root: true}},
		{b2, 65, 2, 1, blake.Block{Index: 1, Start: 64, Len: 1, Last: true, Root: true}},
		{b3, 0, 1, 1, blake.Block{First: true, Last: true, Root: true}},
		{b3, 1024, 16, 1, blake.Block{Index: 15, Start: 960, Len: 64, Last: true, Root: true}},
		{b3, 1025, 17, 2, blake.Block{Index: 16, Chunk: 1, Start: 1024, Len: 1, First: true, Last: true}},
		{b3, 3073, 49, 4, blake.Block{Index: 48, Chunk: 3, Start: 3072, Len: 1, First: true, Last: true}},
	} {
		m := blake.Message{Bytes: tc.bytes}
		bl := tc.md.Blocks(m)
		if len(bl) != tc.blocks || tc.md.Chunks(m) != tc.chunks || bl[len(bl)-1] != tc.last {
			t.Errorf("%+v, %d bytes: %d blocks, %d chunks, last %+v; want %d, %d, %+v", tc.md, tc.bytes, len(bl), tc.md.Chunks(m), bl[len(bl)-1], tc.blocks, tc.chunks, tc.last)
		}
		if got := bl[len(bl)-1].Count(); got != uint64(tc.bytes) {
			t.Errorf("%d bytes: the last block counts %d", tc.bytes, got)
		}
		if got, want := bl[0].Flags(1, 2, 8), blake.Flag(true, 1)|blake.Flag(len(bl) == 1, 2|blake.Flag(tc.chunks == 1, 8)); got != want {
			t.Errorf("%+v, %d bytes: the first block's flags %d, want %d", tc.md, tc.bytes, got, want)
		}
	}
}

func TestMessage(t *testing.T) {
	md := blake.Mode{BlockBytes: 64, W: 32}
	for _, tc := range []struct {
		values map[string]any
		want   blake.Message
		param  string
	}{
		{map[string]any{}, blake.Message{Bytes: 64, Blocks: 1}, ""},
		{map[string]any{"message_bits": 0}, blake.Message{Bytes: 0, Blocks: 1}, ""},
		{map[string]any{"blocks": 3}, blake.Message{Bytes: 192, Blocks: 3}, ""},
		{map[string]any{"message_bits": 1032}, blake.Message{Bytes: 129, Blocks: 3}, ""},
		{map[string]any{"message_bits": 9}, blake.Message{}, "message_bits"},
		{map[string]any{"message_bits": 8, "blocks": 1}, blake.Message{}, "message_bits"},
		{map[string]any{"blocks": 1025}, blake.Message{}, "blocks"},
		{map[string]any{"message_bits": 8 * 65537}, blake.Message{}, "message_bits"},
		{map[string]any{"message_bits": 1 << 62}, blake.Message{}, "message_bits"},
	} {
		p, err := sdk.NewParams(blake.Params(), tc.values)
		if err != nil {
			t.Fatal(err)
		}
		m, err := md.Message(p)
		if pe, ok := sdk.AsParamError(err); tc.param != "" && (!ok || pe.Param != tc.param) {
			t.Errorf("%v: %v, want parameter %q refused", tc.values, err, tc.param)
		} else if tc.param == "" && (err != nil || m != tc.want) {
			t.Errorf("%v: %v, %v; want %v", tc.values, m, err, tc.want)
		}
	}
}

// TestTree: BLAKE3's tree shapes (left-complete): which chunks each
// parent joins, and the root flag only at the top.
func TestTree(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{{1, "0"}, {2, "R(0 1)"}, {3, "R((0 1) 2)"}, {4, "R((0 1) (2 3))"}, {5, "R(((0 1) (2 3)) 4)"}, {7, "R(((0 1) (2 3)) ((4 5) 6))"}} {
		b := circuit.NewBuilder()
		names := map[circuit.Node]string{}
		var cvs [][]circuit.Word
		for i := range tc.n {
			n := b.Input("cv", 1)
			names[n[0]] = fmt.Sprint(i)
			cvs = append(cvs, []circuit.Word{n})
		}
		root := blake.Tree(b, cvs, func(b *circuit.Builder, l, r []circuit.Word, root bool) []circuit.Word {
			x := b.Copy(l[0][0])
			names[x] = "(" + names[l[0][0]] + " " + names[r[0][0]] + ")"
			if root {
				names[x] = "R" + names[x]
			}
			return []circuit.Word{{x}}
		})
		if got := names[root[0][0]]; got != tc.want {
			t.Errorf("%d chunks: %s, want %s", tc.n, got, tc.want)
		}
	}
}

// TestEstimate: Estimate against what Chain and Tree build, with and
// without chunks.
func TestEstimate(t *testing.T) {
	iv := []uint64{1, 2, 3, 4, 5, 6, 7, 8}
	compress := func(b *circuit.Builder, h, m []circuit.Word, blk blake.Block) []circuit.Word {
		v := blake.Input(b, h, 1, 2, 3, 4, 5, 6, uint64(blk.Len), 8)
		blake.Round(b, v, m, [16]int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, blake.Rotations{1, 2, 3, 4})
		return blake.Fold(b, v, nil)
	}
	parent := func(b *circuit.Builder, l, r []circuit.Word, root bool) []circuit.Word {
		return compress(b, blake.ConstWords(b, 8, iv...), append(l, r...), blake.Block{})
	}
	for _, md := range []blake.Mode{{BlockBytes: 16, W: 8}, {BlockBytes: 16, ChunkBytes: 32, W: 8}} {
		for _, n := range []int{0, 15, 16, 17, 100} {
			m := blake.Message{Bytes: n, Blocks: len(md.Blocks(blake.Message{Bytes: n}))}
			b := circuit.NewBuilder()
			cvs, err := md.Chain(context.Background(), b, m, iv, compress)
			if err != nil {
				t.Fatal(err)
			}
			b.Output("h", circuit.LittleEndianBits(blake.Tree(b, cvs, parent)))
			got, err := md.Estimate(m, iv, compress, parent)
			if built := sdk.SizeOf(b.Circuit()); err != nil || got != built {
				t.Errorf("%+v, %d bytes: estimate %+v (%v), built %+v", md, n, got, err, built)
			}
		}
	}
}

// A toy counter-and-flags hash on Chain: 8-byte blocks of 8-bit words,
// each compression one round of G over h, four constant words (the
// block's byte count among them) and the block, folded back with h. The
// circuit's digest equals the same function in plain Go.
func ExampleMode_Chain() {
	md := blake.Mode{BlockBytes: 8, W: 8}
	iv := []uint64{1, 2, 3, 4}
	compress := func(b *circuit.Builder, h, m []circuit.Word, blk blake.Block) []circuit.Word {
		v := blake.Input(b, h, 5, 6, 7^blk.Count(), 8) // 4 + 4 words: a 4×2 toy state
		blake.G(b, v, 0, 2, 4, 6, m[0], m[1], blake.Rotations{1, 2, 3, 4})
		return blake.Fold(b, v, h)
	}
	b := circuit.NewBuilder()
	m := blake.Message{Bytes: 3, Blocks: 1}
	h, _ := md.Chain(context.Background(), b, m, iv, compress)
	b.Output("digest", circuit.LittleEndianBits(h[0]))
	c := b.Circuit()
	in := bitvec.FromPackedMSB([]byte("abc"), 24)
	out, _ := bitvec.EvalSliced([]bitvec.Vec{in}, 24, c.Eval)
	fmt.Printf("%x\n", out[0].PackMSB(32))

	rotr := func(x uint8, r int) uint8 { return x>>r | x<<(8-r) }
	v := [8]uint8{1, 2, 3, 4, 5, 6, 7 ^ 3, 8}
	x, y := uint8('a'), uint8('b') // m[0], m[1]: the block's first bytes
	v[0] += v[2] + x
	v[6] = rotr(v[6]^v[0], 1)
	v[4] += v[6]
	v[2] = rotr(v[2]^v[4], 2)
	v[0] += v[2] + y
	v[6] = rotr(v[6]^v[0], 3)
	v[4] += v[6]
	v[2] = rotr(v[2]^v[4], 4)
	fmt.Printf("%02x%02x%02x%02x\n", 1^v[0]^v[4], 2^v[1]^v[5], 3^v[2]^v[6], 4^v[3]^v[7])
	// Output:
	// 38069508
	// 38069508
}
