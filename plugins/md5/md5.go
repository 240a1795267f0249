// Package md5 is the MD5 construction plugin (RFC 1321): messages of any
// bit length with the standard padding, any number of blocks, and any
// number of steps (1…64) in each compression. It is written on the SDK's
// word helpers (docs/writing-a-hash.md): the same construction in fewer
// lines than the plumbing sha2 once wrote by hand.
package md5

import (
	"context"
	"crypto/md5"
	"strconv"

	"github.com/tcforge/tcforge/plugins/md5/md5ref"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/mdpad"
)

// Plugin is the md5 construction.
var Plugin = &sdk.Construction{
	Name:    "md5",
	Version: "0.1.0",
	Doc:     "MD5 (RFC 1321): padded messages of any length and blocks, reduced steps.",
	Params: append([]sdk.Param{
		{Name: "steps", Type: sdk.Int, Default: md5ref.Steps, Min: sdk.Bound(1), Max: sdk.Bound(md5ref.Steps), Doc: "steps per compression: 1…64 (four rounds of 16)"},
	}, mdpad.Params()...),
	Prepare:   prepare,
	Build:     build,
	Reference: reference,
	Estimate:  estimate,
}

// padding is MD5's: 512-bit blocks, a 64-bit little-endian length.
func padding() mdpad.Padding {
	return mdpad.Padding{BlockBits: 512, LengthBits: 64, LittleEndian: true}
}

// config is the resolved parameter set.
type config struct {
	steps int
	msg   mdpad.Message
}

// compress is the compression function of cfg's steps.
func (cfg config) compress(b *circuit.Builder, h, block []circuit.Word) []circuit.Word {
	return compress(b, cfg.steps, h, block)
}

func prepare(_ context.Context, pass *sdk.Pass) (any, error) {
	m, err := padding().Message(pass.Params)
	return config{steps: pass.Params.Int("steps"), msg: m}, err
}

// compress is MD5's compression function of steps steps over the chaining
// value h (A, B, C, D) and one block x (16 words).
func compress(b *circuit.Builder, steps int, h, x []circuit.Word) []circuit.Word {
	a, bb, c, d := h[0], h[1], h[2], h[3]
	for i := range steps {
		b.Scope("step "+strconv.Itoa(i+1), func() {
			var f circuit.Addend
			switch i / 16 {
			case 0:
				f = b.Ch(bb, c, d)
			case 1:
				f = b.Mux(d, bb, c)
			case 2:
				f = b.XorWords(bb, c, d)
			default:
				f = b.XorWords(c, b.OrWords(bb, b.NotWord(d)))
			}
			t := b.Sum(a, f, b.ConstWord(uint64(md5ref.T(i)), 32), x[md5ref.Word(i)])
			a, bb, c, d = d, b.Add(bb, circuit.RotL(t, md5ref.S(i))), bb, c
		})
	}
	return mdpad.FeedForward(b, h, []circuit.Word{a, bb, c, d})
}

func build(ctx context.Context, pass *sdk.Pass) (*circuit.Circuit, error) {
	cfg := pass.Prepared.(config)
	b := circuit.NewBuilder()
	h, err := padding().Chain(ctx, b, cfg.msg, iv(), 32, cfg.compress)
	if err != nil {
		return nil, err
	}
	b.Output("digest", padding().Digest(h))
	for k, v := range map[string]int{"steps": cfg.steps, "blocks": cfg.msg.Blocks, "message_bits": cfg.msg.Bits} {
		b.SetAttr(k, int64(v))
	}
	return b.Circuit(), nil
}

// iv is the initial chaining value (crypto/md5 checks it at full steps).
func iv() []uint64 { return []uint64{0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476} }

func estimate(_ context.Context, pass *sdk.Pass) (sdk.Size, error) {
	cfg := pass.Prepared.(config)
	return padding().Estimate(cfg.msg, len(iv()), 32, cfg.compress)
}

func reference(ctx context.Context, pass *sdk.Pass, inputs []bitvec.Vec) ([]bitvec.Vec, error) {
	cfg := pass.Prepared.(config)
	return sdk.EachInput(ctx, inputs, func(in bitvec.Vec) (bitvec.Vec, error) {
		if cfg.steps == md5ref.Steps && cfg.msg.Bits%8 == 0 {
			d := md5.Sum(in.PackMSB(cfg.msg.Bits))
			return bitvec.FromPackedMSB(d[:], 128), nil
		}
		return bitvec.FromBytes(md5ref.Sum(in.Bytes(cfg.msg.Bits), cfg.steps)), nil
	})
}
