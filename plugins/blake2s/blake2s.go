// Package blake2s is the BLAKE2s-256 construction plugin (RFC 7693),
// unkeyed: messages of any whole number of bytes, any number of rounds
// (1…10) in each compression. It is written on the SDK's word helpers and
// sdk/blake (the counter-and-flags mode BLAKE2 and BLAKE3 share;
// docs/writing-a-hash.md).
package blake2s

import (
	"context"
	"encoding/binary"
	"strconv"

	"golang.org/x/crypto/blake2s"

	"github.com/tcforge/tcforge/plugins/blake2s/blake2sref"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/blake"
	"github.com/tcforge/tcforge/sdk/circuit"
)

// Plugin is the blake2s construction.
var Plugin = &sdk.Construction{
	Name:    "blake2s",
	Version: "0.1.0",
	Doc:     "BLAKE2s-256 (RFC 7693), unkeyed: messages of any whole number of bytes, reduced rounds.",
	Params: append([]sdk.Param{
		{Name: "rounds", Type: sdk.Int, Default: blake2sref.Rounds, Min: sdk.Bound(1), Max: sdk.Bound(blake2sref.Rounds), Doc: "rounds per compression: 1…10"},
		{Name: "mode", Type: sdk.String, Default: "hash", Enum: []string{"hash", "block"},
			Doc: "\"hash\": the message (message_bits or blocks) and its blocks, counters and flags inside the circuit; \"block\": one final block whose byte counter is an input: inputs block (512 bits, the message zero-padded to 64 bytes) and length (64 bits, the message's length in bits, big-endian; the counter is length/8), the digest of any message of 0 to 64 bytes (a byte module pads)"},
	}, blake.Params()...),
	Prepare:   prepare,
	Build:     build,
	Reference: reference,
	Estimate:  estimate,
}

// mode is BLAKE2s's: 64-byte blocks of 32-bit words, one chain.
func mode() blake.Mode { return blake.Mode{BlockBytes: 64, W: 32} }

// config is the resolved parameter set.
type config struct {
	rounds int
	msg    blake.Message
	block  bool // mode "block": one final block, the counter an input
}

func prepare(_ context.Context, pass *sdk.Pass) (any, error) {
	p := pass.Params
	m, err := mode().Message(p)
	cfg := config{rounds: p.Int("rounds"), msg: m, block: p.String("mode") == "block"}
	for _, name := range []string{"message_bits", "blocks"} {
		if cfg.block && p.Has(name) {
			return nil, p.Errorf(name, "mode = \"block\" hashes one block of 0 to 64 bytes, whose length is an input")
		}
	}
	return cfg, err
}

// compress is BLAKE2s's F (RFC 7693 §3.2) with cfg's rounds: the working
// state is h, the IV with the byte counter t and, for the last block, the
// final flag f₀ = 0xffffffff XORed in; the rounds; then h ⊕ v[0…7] ⊕
// v[8…15].
func (cfg config) compress(b *circuit.Builder, h, m []circuit.Word, blk blake.Block) []circuit.Word {
	iv, t, f := blake2sref.IV(), blk.Count(), blake.Flag(blk.Last, 0xffffffff)
	v := blake.Input(b, h, uint64(iv[0]), uint64(iv[1]), uint64(iv[2]), uint64(iv[3]),
		uint64(iv[4])^t, uint64(iv[5])^t>>32, uint64(iv[6])^f, uint64(iv[7]))
	for r := range cfg.rounds {
		b.Scope("round "+strconv.Itoa(r+1), func() { blake.Round(b, v, m, blake2sref.Sigma(r), blake.Rotations{16, 12, 8, 7}) })
	}
	return blake.Fold(b, v, h)
}

// h0 is the first chaining value: the IV with the parameter block
// (digest length 32, no key) XORed into its first word.
func h0() []uint64 {
	iv := blake2sref.IV()
	iv[0] ^= blake2sref.ParamBlock
	return blake.Words(iv[:]...)
}

// buildBlock builds mode "block": the final block's compression from h0,
// its counter t read from the input length (bits 3… of the message's
// length in bits, big-endian: t = length/8) and XORed into the IV's
// words 4 and 5 (a NOT for an IV bit that is 1), the flag f₀ constant.
func (cfg config) buildBlock(b *circuit.Builder) {
	block, length := b.LittleEndianWords(b.Input("block", 512), 32), b.Input("length", 64)
	t := make([]circuit.Word, 2) // t₀, t₁: bit k of t is bit k + 3 of length, node 60 − k
	iv := blake2sref.IV()
	for w := range t {
		t[w] = make(circuit.Word, 32)
		for i := range t[w] {
			if k := 32*w + i; k <= 60 {
				b.At(i, func() { t[w][i] = b.XorConst(length[60-k], uint(iv[4+w]>>i)) })
			} else {
				b.At(i, func() { t[w][i] = b.Const(int(iv[4+w] >> i & 1)) })
			}
		}
	}
	h := blake.ConstWords(b, 32, h0()...)
	v := append(append(append(append([]circuit.Word(nil), h...), blake.ConstWords(b, 32, blake.Words(iv[:4]...)...)...), t...),
		blake.ConstWords(b, 32, uint64(^iv[6]), uint64(iv[7]))...)
	for r := range cfg.rounds {
		b.Scope("round "+strconv.Itoa(r+1), func() { blake.Round(b, v, block, blake2sref.Sigma(r), blake.Rotations{16, 12, 8, 7}) })
	}
	b.Output("digest", circuit.LittleEndianBits(blake.Fold(b, v, h)))
}

func build(ctx context.Context, pass *sdk.Pass) (*circuit.Circuit, error) {
	cfg := pass.Prepared.(config)
	b := circuit.NewBuilder()
	if cfg.block {
		cfg.buildBlock(b)
		b.SetAttr("rounds", int64(cfg.rounds))
		return b.Circuit(), nil
	}
	h, err := mode().Chain(ctx, b, cfg.msg, h0(), cfg.compress)
	if err != nil {
		return nil, err
	}
	b.Output("digest", circuit.LittleEndianBits(h[0]))
	for k, v := range map[string]int{"rounds": cfg.rounds, "blocks": cfg.msg.Blocks, "message_bits": 8 * cfg.msg.Bytes} {
		b.SetAttr(k, int64(v))
	}
	return b.Circuit(), nil
}

func estimate(_ context.Context, pass *sdk.Pass) (sdk.Size, error) {
	cfg := pass.Prepared.(config)
	if cfg.block { // one compression: build it
		b := circuit.NewBuilder()
		cfg.buildBlock(b)
		return sdk.SizeOf(b.Circuit()), nil
	}
	return mode().Estimate(cfg.msg, h0(), cfg.compress, nil)
}

func reference(ctx context.Context, pass *sdk.Pass, inputs []bitvec.Vec) ([]bitvec.Vec, error) {
	cfg := pass.Prepared.(config)
	return sdk.EachInput(ctx, inputs, func(in bitvec.Vec) (bitvec.Vec, error) {
		if cfg.block {
			b := in.PackMSB(576)
			d := blake2sref.Block(b[:64], binary.BigEndian.Uint64(b[64:])>>3, cfg.rounds)
			return bitvec.FromPackedMSB(d[:], 256), nil
		}
		msg := in.PackMSB(8 * cfg.msg.Bytes)
		var d [32]byte
		if cfg.rounds == blake2sref.Rounds {
			d = blake2s.Sum256(msg)
		} else {
			d = blake2sref.Sum(msg, cfg.rounds)
		}
		return bitvec.FromPackedMSB(d[:], 256), nil
	})
}
