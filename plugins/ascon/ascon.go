// Package ascon is the Ascon construction plugin: Ascon-Hash256 and
// Ascon-XOF128 of NIST SP 800-232 (a sponge over the 320-bit permutation
// Ascon-p with a 64-bit rate), messages of any bit length, any XOF output
// length, any number of rounds (1…12) of Ascon-p. It is written on the
// SDK's word helpers and sdk/sponge (docs/writing-a-hash.md), whose
// message and output bit order it follows: bytes as SP 800-232 writes
// them, each most significant bit first, a partial last byte as the
// number its low bits hold.
package ascon

import (
	"context"
	"strconv"

	"github.com/tcforge/tcforge/plugins/ascon/asconref"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/sponge"
)

// Plugin is the ascon construction.
var Plugin = &sdk.Construction{
	Name:    "ascon",
	Version: "0.1.0",
	Doc:     "Ascon-Hash256 and Ascon-XOF128 (NIST SP 800-232): messages of any bit length, any XOF output length, reduced rounds of Ascon-p.",
	Params: append([]sdk.Param{
		{Name: "mode", Type: sdk.String, Default: "hash256", Enum: []string{"hash256", "xof128"},
			Doc: "\"hash256\": Ascon-Hash256 (256-bit digest); \"xof128\": Ascon-XOF128 (output_bits)"},
		{Name: "rounds", Type: sdk.Int, Default: asconref.Rounds, Min: sdk.Bound(1), Max: sdk.Bound(asconref.Rounds),
			Doc: "rounds of Ascon-p in every permutation (the initial one, after each absorbed block, between squeezed blocks): 1…12, the last rounds of Ascon-p[12]"},
		{Name: "output_bits", Type: sdk.Int, Min: sdk.Bound(1), Max: sdk.Bound(1 << 16),
			Doc: "xof128: output length in bits, any; default 256 (hash256: 256 only)"},
		{Name: "padding", Type: sdk.String, Default: "sp800-232", Enum: []string{"sp800-232", "caller"},
			Doc: "\"sp800-232\": the message and its padding inside the circuit; \"caller\": the input is the padded message, `blocks` whole 64-bit blocks absorbed as they are (a byte module pads: any message of 0 to 8·blocks − 1 bytes)"},
	}, sponge.Params()...),
	Prepare:   prepare,
	Build:     build,
	Reference: reference,
	Estimate:  estimate,
}

// shape is Ascon's sponge: five 64-bit words, the first the rate.
func shape() sponge.Sponge { return sponge.Sponge{Words: 5, W: 64, RateWords: 1} }

// config is the resolved parameter set.
type config struct {
	iv      uint64
	rounds  int
	outBits int
	msg     sponge.Message
}

func prepare(_ context.Context, pass *sdk.Pass) (any, error) {
	p := pass.Params
	cfg := config{iv: asconref.IVHash256, rounds: p.Int("rounds"), outBits: 256}
	if p.String("mode") == "xof128" {
		cfg.iv = asconref.IVXOF128
		if p.Has("output_bits") {
			cfg.outBits = p.Int("output_bits")
		}
	} else if p.Has("output_bits") && p.Int("output_bits") != 256 {
		return nil, p.Errorf("output_bits", "Ascon-Hash256's digest is 256 bits, got %d (mode = \"xof128\" squeezes any length)", p.Int("output_bits"))
	}
	var err error
	if cfg.msg, err = shape().Message(p); err != nil || p.String("padding") == "sp800-232" {
		return cfg, err
	}
	if p.Has("message_bits") {
		return nil, p.Errorf("message_bits", "padding = \"caller\" takes blocks: the input is whole padded blocks")
	}
	cfg.msg = shape().Padded(cfg.msg.Blocks)
	return cfg, nil
}

// permute is Ascon-p with cfg's rounds (SP 800-232 §3): each round adds
// its constant to word 2, applies the S-box to every bit slice, then the
// linear layer to every word.
func (cfg config) permute(b *circuit.Builder, s []circuit.Word) []circuit.Word {
	for i := asconref.Rounds + 4 - cfg.rounds; i < asconref.Rounds+4; i++ {
		b.Scope("round "+strconv.Itoa(i-asconref.Rounds-3+cfg.rounds), func() {
			t := make([]circuit.Word, 5)
			for w := range t {
				t[w] = make(circuit.Word, 64)
			}
			for j := range 64 {
				b.At(j, func() {
					x := sbox(b, [5]circuit.Node{s[0][j], s[1][j], b.XorConst(s[2][j], uint(asconref.Constant(i)>>j)), s[3][j], s[4][j]})
					for w := range t {
						t[w][j] = x[w]
					}
				})
			}
			for w, r := range [5][2]int{{19, 28}, {61, 39}, {1, 6}, {10, 17}, {7, 41}} {
				t[w] = b.XorWords(t[w], circuit.RotR(t[w], r[0]), circuit.RotR(t[w], r[1]))
			}
			s = t
		})
	}
	return s
}

// sbox is the S-box on one bit slice x0…x4 as SP 800-232's bitsliced
// instructions (Figure 3): x0 ⊕= x4, x4 ⊕= x3, x2 ⊕= x1; tᵢ = ¬xᵢ ∧ xᵢ₊₁;
// xᵢ ⊕= tᵢ₊₁; x1 ⊕= x0, x0 ⊕= x4, x3 ⊕= x2, x2 = ¬x2.
func sbox(b *circuit.Builder, x [5]circuit.Node) [5]circuit.Node {
	x[0], x[4], x[2] = b.Xor(x[0], x[4]), b.Xor(x[4], x[3]), b.Xor(x[2], x[1])
	var t [5]circuit.Node
	for i := range t {
		t[i] = b.AndNot(x[i], x[(i+1)%5])
	}
	for i := range x {
		x[i] = b.Xor(x[i], t[(i+1)%5])
	}
	return [5]circuit.Node{b.Xor(x[0], x[4]), b.Xor(x[1], x[0]), b.Not(x[2]), b.Xor(x[3], x[2]), x[4]}
}

func build(ctx context.Context, pass *sdk.Pass) (*circuit.Circuit, error) {
	cfg := pass.Prepared.(config)
	b := circuit.NewBuilder()
	s, err := shape().Absorb(ctx, b, shape().Init(b, []uint64{cfg.iv}, cfg.permute), cfg.msg, cfg.permute)
	if err != nil {
		return nil, err
	}
	b.Output("digest", shape().Squeeze(b, s, cfg.outBits, cfg.permute))
	for k, v := range map[string]int{"rounds": cfg.rounds, "blocks": cfg.msg.Blocks, "message_bits": cfg.msg.Bits, "output_bits": cfg.outBits} {
		b.SetAttr(k, int64(v))
	}
	if cfg.msg.CallerPads {
		b.SetAttr("padded_bits", int64(cfg.msg.Bits))
	}
	return b.Circuit(), nil
}

func estimate(_ context.Context, pass *sdk.Pass) (sdk.Size, error) {
	cfg := pass.Prepared.(config)
	return shape().Estimate(cfg.msg, cfg.outBits, cfg.permute)
}

func reference(ctx context.Context, pass *sdk.Pass, inputs []bitvec.Vec) ([]bitvec.Vec, error) {
	cfg := pass.Prepared.(config)
	return sdk.EachInput(ctx, inputs, func(in bitvec.Vec) (bitvec.Vec, error) {
		msg := asconref.FromCircuit(in.PackMSB(cfg.msg.Bits), cfg.msg.Bits)
		var d []byte
		if cfg.msg.CallerPads {
			d = asconref.SumPadded(cfg.iv, msg, cfg.msg.Blocks, cfg.outBits, cfg.rounds)
		} else {
			d = asconref.Sum(cfg.iv, msg, cfg.msg.Bits, cfg.outBits, cfg.rounds)
		}
		return bitvec.FromPackedMSB(asconref.ToCircuit(d, cfg.outBits), cfg.outBits), nil
	})
}
