// Package sha1 is the SHA-1 construction plugin (FIPS 180-4 §6.1): messages
// of any bit length with the standard padding, any number of blocks, and
// any number of steps (1…80) in each compression. It is written on the
// SDK's word helpers (docs/writing-a-hash.md).
package sha1

import (
	"context"
	"crypto/sha1"
	"strconv"

	"github.com/tcforge/tcforge/plugins/sha1/sha1ref"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/mdpad"
)

// Plugin is the sha1 construction.
var Plugin = &sdk.Construction{
	Name:    "sha1",
	Version: "0.1.0",
	Doc:     "SHA-1 (FIPS 180-4): padded messages of any length and blocks, reduced steps.",
	Params: append([]sdk.Param{
		{Name: "steps", Type: sdk.Int, Default: sha1ref.Steps, Min: sdk.Bound(1), Max: sdk.Bound(sha1ref.Steps), Doc: "steps per compression: 1…80"},
	}, mdpad.Params()...),
	Prepare:   prepare,
	Build:     build,
	Reference: reference,
	Estimate:  estimate,
}

// padding is SHA-1's: 512-bit blocks, a 64-bit big-endian length.
func padding() mdpad.Padding { return mdpad.Padding{BlockBits: 512, LengthBits: 64} }

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

// compress is SHA-1's compression function of steps steps over the
// chaining value h (five words) and one block m (16 words).
func compress(b *circuit.Builder, steps int, h, m []circuit.Word) []circuit.Word {
	w := append([]circuit.Word(nil), m...)
	for t := 16; t < steps; t++ {
		b.Scope("schedule", func() { w = append(w, circuit.RotL(b.XorWords(w[t-3], w[t-8], w[t-14], w[t-16]), 1)) })
	}
	s := append([]circuit.Word(nil), h...)
	for t := range steps {
		b.Scope("step "+strconv.Itoa(t+1), func() {
			a, bb, c, d, e := s[0], s[1], s[2], s[3], s[4]
			var f circuit.Addend
			switch {
			case t < 20:
				f = b.Ch(bb, c, d)
			case t < 40 || t >= 60:
				f = b.XorWords(bb, c, d)
			default:
				f = b.Maj(bb, c, d)
			}
			a = b.Sum(circuit.RotL(a, 5), f, e, b.ConstWord(uint64(sha1ref.K(t)), 32), w[t])
			s = []circuit.Word{a, s[0], circuit.RotL(bb, 30), c, d}
		})
	}
	return mdpad.FeedForward(b, h, s)
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

// iv is the initial chaining value (crypto/sha1 checks it at full steps).
func iv() []uint64 { return []uint64{0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0} }

func estimate(_ context.Context, pass *sdk.Pass) (sdk.Size, error) {
	cfg := pass.Prepared.(config)
	return padding().Estimate(cfg.msg, len(iv()), 32, cfg.compress)
}

func reference(ctx context.Context, pass *sdk.Pass, inputs []bitvec.Vec) ([]bitvec.Vec, error) {
	cfg := pass.Prepared.(config)
	return sdk.EachInput(ctx, inputs, func(in bitvec.Vec) (bitvec.Vec, error) {
		if cfg.steps == sha1ref.Steps && cfg.msg.Bits%8 == 0 {
			d := sha1.Sum(in.PackMSB(cfg.msg.Bits))
			return bitvec.FromPackedMSB(d[:], 160), nil
		}
		return bitvec.FromBytes(sha1ref.Sum(in.Bytes(cfg.msg.Bits), cfg.steps)), nil
	})
}
