// Package blake3 is the BLAKE3 construction plugin, hash mode (256-bit
// output): messages of any whole number of bytes in chunks of 1024 bytes
// joined by the tree of parent nodes, any number of rounds (1…7) in each
// compression. It is written on the SDK's word helpers and sdk/blake (the
// counter-and-flags mode BLAKE2 and BLAKE3 share; docs/writing-a-hash.md).
package blake3

import (
	"context"
	"strconv"

	"github.com/tcforge/tcforge/plugins/blake3/blake3ref"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/blake"
	"github.com/tcforge/tcforge/sdk/circuit"
)

// Plugin is the blake3 construction.
var Plugin = &sdk.Construction{
	Name:    "blake3",
	Version: "0.1.0",
	Doc:     "BLAKE3, hash mode (256-bit digest): messages of any whole number of bytes, chunks and their tree, reduced rounds.",
	Params: append([]sdk.Param{
		{Name: "rounds", Type: sdk.Int, Default: blake3ref.Rounds, Min: sdk.Bound(1), Max: sdk.Bound(blake3ref.Rounds), Doc: "rounds per compression: 1…7"},
	}, blake.Params()...),
	Prepare:   prepare,
	Build:     build,
	Reference: reference,
	Estimate:  estimate,
}

// mode is BLAKE3's: 64-byte blocks of 32-bit words in chunks of 1024
// bytes.
func mode() blake.Mode {
	return blake.Mode{BlockBytes: blake3ref.BlockLen, ChunkBytes: blake3ref.ChunkLen, W: 32}
}

// config is the resolved parameter set.
type config struct {
	rounds int
	msg    blake.Message
}

func prepare(_ context.Context, pass *sdk.Pass) (any, error) {
	m, err := mode().Message(pass.Params)
	return config{rounds: pass.Params.Int("rounds"), msg: m}, err
}

// f is BLAKE3's compression function (BLAKE3 §2.2) with cfg's rounds,
// truncated to the chaining value: the working state is h, the first four
// IV words, the counter t, the block's length n and its flags; the rounds,
// the message permuted between them; then v[0…7] ⊕ v[8…15].
func (cfg config) f(b *circuit.Builder, h, m []circuit.Word, t uint64, n int, flags uint64) []circuit.Word {
	iv := blake3ref.IV()
	v := blake.Input(b, h, uint64(iv[0]), uint64(iv[1]), uint64(iv[2]), uint64(iv[3]), t, t>>32, uint64(n), flags)
	for r := range cfg.rounds {
		b.Scope("round "+strconv.Itoa(r+1), func() { blake.Round(b, v, m, blake3ref.Schedule(r), blake.Rotations{16, 12, 8, 7}) })
	}
	return blake.Fold(b, v, nil)
}

// compress is a chunk's compression of one block: the counter is the
// chunk's number; the flags say the chunk's first and last block, and the
// root where the message is one chunk.
func (cfg config) compress(b *circuit.Builder, h, m []circuit.Word, blk blake.Block) []circuit.Word {
	return cfg.f(b, h, m, uint64(blk.Chunk), blk.Len, blk.Flags(blake3ref.ChunkStart, blake3ref.ChunkEnd, blake3ref.Root))
}

// parent is a parent node: the IV as key, its children's chaining values
// as the block, counter 0, a full block.
func (cfg config) parent(b *circuit.Builder, l, r []circuit.Word, root bool) []circuit.Word {
	m := append(append([]circuit.Word(nil), l...), r...)
	return cfg.f(b, blake.ConstWords(b, 32, iv()...), m, 0, blake3ref.BlockLen, blake3ref.Parent|blake.Flag(root, blake3ref.Root))
}

// iv is the key words of the hash mode: the IV.
func iv() []uint64 { k := blake3ref.IV(); return blake.Words(k[:]...) }

func build(ctx context.Context, pass *sdk.Pass) (*circuit.Circuit, error) {
	cfg := pass.Prepared.(config)
	b := circuit.NewBuilder()
	cvs, err := mode().Chain(ctx, b, cfg.msg, iv(), cfg.compress)
	if err != nil {
		return nil, err
	}
	b.Output("digest", circuit.LittleEndianBits(blake.Tree(b, cvs, cfg.parent)))
	for k, v := range map[string]int{"rounds": cfg.rounds, "blocks": cfg.msg.Blocks, "chunks": len(cvs), "message_bits": 8 * cfg.msg.Bytes} {
		b.SetAttr(k, int64(v))
	}
	return b.Circuit(), nil
}

func estimate(_ context.Context, pass *sdk.Pass) (sdk.Size, error) {
	cfg := pass.Prepared.(config)
	return mode().Estimate(cfg.msg, iv(), cfg.compress, cfg.parent)
}

func reference(ctx context.Context, pass *sdk.Pass, inputs []bitvec.Vec) ([]bitvec.Vec, error) {
	cfg := pass.Prepared.(config)
	return sdk.EachInput(ctx, inputs, func(in bitvec.Vec) (bitvec.Vec, error) {
		d := blake3ref.Sum(in.PackMSB(8*cfg.msg.Bytes), cfg.rounds)
		return bitvec.FromPackedMSB(d[:], 256), nil
	})
}
