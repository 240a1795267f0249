// Package sha2 is the SHA-2 construction plugin: SHA-224, SHA-256,
// SHA-384, SHA-512, SHA-512/224 and SHA-512/256 on messages of any bit
// length (standard padding, any number of blocks), with any number of
// rounds, or the bare compression function.
//
// Words are built with the circuit builder's word helpers: rotations and
// shifts are wiring, Σ and σ are XORs, Ch is two threshold ops whose
// words are added separately (e∧f and ¬e∧g are never both 1, so adding
// both is adding Ch), Maj is one threshold op [a+b+c ≥ 2], and each
// modular addition is one SUMBIT node a bit. A round adds its seven terms
// at once: a' = h + Σ1(e) + Ch + K + W + Σ0(a) + Maj and e' = d + h +
// Σ1(e) + Ch + K + W.
package sha2

import (
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"strconv"

	"github.com/tcforge/tcforge/plugins/sha2/sha2ref"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/mdpad"
)

// Plugin is the sha2 construction.
var Plugin = &sdk.Construction{
	Name:    "sha2",
	Version: "0.1.0",
	Doc:     "SHA-2 (SHA-224/256/384/512, SHA-512/224, SHA-512/256): padded messages of any length and blocks, reduced rounds, or the bare compression function.",
	Params: []sdk.Param{
		{Name: "preset", Type: sdk.String, Default: "sha256", Enum: []string{"sha224", "sha256", "sha384", "sha512", "sha512-224", "sha512-256"},
			Doc: "the SHA-2 function: word size, initial value and digest length"},
		{Name: "rounds", Type: sdk.Int, Min: sdk.Bound(1), Max: sdk.Bound(80),
			Doc: "rounds per compression: 1…64 (32-bit words) or 1…80 (64-bit words); default the standard 64 or 80"},
		mdpad.Params()[0], mdpad.Params()[1],
		{Name: "mode", Type: sdk.String, Default: "hash", Enum: []string{"hash", "compress", "block"},
			Doc: "\"hash\": message in, digest out; \"compress\": chaining value (8 words) and one block (16 words) in, new chaining value out; \"block\": one block the caller padded in (any message that pads to one block: 0–55 bytes for SHA-256), digest out"},
	},
	Prepare:   prepare,
	Build:     build,
	Reference: reference,
	Estimate:  estimate,
}

// config is the resolved parameter set.
type config struct {
	v        sha2ref.Variant
	rounds   int
	compress bool
	block    bool // one padded block in, the IV constant
	msgBits  int
	blocks   int
}

var presets = map[string]sha2ref.Variant{
	"sha224": sha2ref.SHA224, "sha256": sha2ref.SHA256, "sha384": sha2ref.SHA384,
	"sha512": sha2ref.SHA512, "sha512-224": sha2ref.SHA512_224, "sha512-256": sha2ref.SHA512_256,
}

// resolve checks what the schema cannot (rounds past the variant's, a
// message with compress, both lengths) and fills the defaults.
func resolve(p sdk.Params) (config, error) {
	cfg := config{v: presets[p.String("preset")], compress: p.String("mode") == "compress", block: p.String("mode") == "block"}
	cfg.rounds = cfg.v.Rounds()
	if p.Has("rounds") {
		cfg.rounds = p.Int("rounds")
		if cfg.rounds > cfg.v.Rounds() {
			return cfg, p.Errorf("rounds", "%s has %d-bit words and at most %d rounds, got %d", cfg.v.Name, cfg.v.WordBits, cfg.v.Rounds(), cfg.rounds)
		}
	}
	if cfg.compress || cfg.block {
		for _, name := range []string{"message_bits", "blocks"} {
			if p.Has(name) {
				return cfg, p.Errorf(name, "mode %q takes one block and no message; %s does not apply", p.String("mode"), name)
			}
		}
		cfg.blocks = 1
		return cfg, nil
	}
	m, err := padding(cfg.v).Message(p)
	cfg.msgBits, cfg.blocks = m.Bits, m.Blocks
	return cfg, err
}

// padding is v's Merkle–Damgård strengthening: a 2w-bit big-endian length.
func padding(v sha2ref.Variant) mdpad.Padding {
	return mdpad.Padding{BlockBits: v.BlockBits(), LengthBits: 2 * v.WordBits}
}

// prepare resolves and checks the parameters: its config is Pass.Prepared.
func prepare(_ context.Context, pass *sdk.Pass) (any, error) { return resolve(pass.Params) }

// estimate counts the nodes and operands build makes, from the
// construction alone (no circuit is built, so a huge sweep is refused
// at once). With T = w(w+1)/2 the operands of one w-bit word in an
// addition (bit k reads bits 0…k), a compression of r rounds makes:
//
//   - each of the max(0, r − 16) schedule steps: σ₀ and σ₁ (2w XORs of
//     3 operands, and the shifts' vacated bits as constants) and a
//     4-word addition (w SUMBITs, 4T operands);
//   - each round: Σ₀, Σ₁ (2w XORs, 6w operands), e∧f, ¬e∧g, Maj (3w
//     nodes, 7w operands), K_t (w constants), a' and e' (2w SUMBITs of
//     8 and 7 words, 15T operands);
//   - the feed-forward: 8 two-word additions (8w SUMBITs, 16T operands);
//
// and the hash mode adds the message inputs, the padding constants and
// the IV (8w constants), which the first block's rounds and feed-forward
// read; compress mode has 24w inputs instead.
func estimate(_ context.Context, pass *sdk.Pass) (sdk.Size, error) {
	cfg := pass.Prepared.(config)
	w := int64(cfg.v.WordBits)
	T := w * (w + 1) / 2
	rot := rotationsOf(cfg.v.WordBits)
	r, steps := int64(cfg.rounds), int64(max(0, cfg.rounds-16))
	nodes := steps*(3*w+int64(rot.s0[2]+rot.s1[2])) + r*8*w + 8*w
	edges := steps*(6*w+4*T) + r*(13*w+15*T) + 16*T
	fixed := sdk.Size{Nodes: 24 * w}
	if cfg.block {
		fixed.Nodes = 16*w + 8*w // the block, the IV
	}
	if !cfg.compress && !cfg.block {
		fixed.Nodes = int64(cfg.blocks)*int64(cfg.v.BlockBits()) + 8*w // message and padding bits, IV
	}
	return sdk.BlockLinear(fixed, sdk.Size{Nodes: nodes, Edges: edges}, int64(cfg.blocks))
}

// rotations are the Σ and σ rotation and shift amounts of one word size.
type rotations struct {
	S0, S1 [3]int
	s0, s1 [3]int // two rotations and a shift
}

func rotationsOf(w int) rotations {
	if w == 32 {
		return rotations{S0: [3]int{2, 13, 22}, S1: [3]int{6, 11, 25}, s0: [3]int{7, 18, 3}, s1: [3]int{17, 19, 10}}
	}
	return rotations{S0: [3]int{28, 34, 39}, S1: [3]int{14, 18, 41}, s0: [3]int{1, 8, 7}, s1: [3]int{19, 61, 6}}
}

// compress builds the compression function over h (eight words) and m
// (16 words) with the given number of rounds. The word helpers hint every
// node with its bit index within its word (a carry of an addition: that of
// the sum bit it serves).
func compress(b *circuit.Builder, w, rounds int, h, m []circuit.Word) []circuit.Word {
	r := rotationsOf(w)
	big := func(x circuit.Word, rs [3]int) circuit.Word {
		return b.XorWords(circuit.RotR(x, rs[0]), circuit.RotR(x, rs[1]), circuit.RotR(x, rs[2]))
	}
	small := func(x circuit.Word, rs [3]int) circuit.Word {
		shr := b.Shr(x, rs[2])
		return b.XorWords(circuit.RotR(x, rs[0]), circuit.RotR(x, rs[1]), shr)
	}
	W := append([]circuit.Word(nil), m...)
	for t := 16; t < rounds; t++ {
		b.Scope("schedule", func() {
			W = append(W, b.Add(small(W[t-2], r.s1), W[t-7], small(W[t-15], r.s0), W[t-16]))
		})
	}
	s := append([]circuit.Word(nil), h...)
	for t := 0; t < rounds; t++ {
		b.Scope("round "+strconv.Itoa(t+1), func() {
			a, bb, c, d, e, f, g, hh := s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]
			S1, S0 := big(e, r.S1), big(a, r.S0)
			ch, maj := b.Ch(e, f, g), b.Maj(a, bb, c)
			K := b.ConstWord(sha2ref.K(w, t), w)
			newA := b.Sum(hh, S1, ch, K, W[t], S0, maj)
			newE := b.Sum(d, hh, S1, ch, K, W[t])
			s = []circuit.Word{newA, a, bb, c, newE, e, f, g}
		})
	}
	return mdpad.FeedForward(b, h, s)
}

func build(ctx context.Context, pass *sdk.Pass) (*circuit.Circuit, error) {
	cfg := pass.Prepared.(config)
	w := cfg.v.WordBits
	b := circuit.NewBuilder()
	if cfg.compress {
		h := b.BigEndianWords(b.Input("chain", 8*w), w)
		m := b.BigEndianWords(b.Input("block", 16*w), w)
		b.Output("chain", circuit.BigEndianBits(compress(b, w, cfg.rounds, h, m)))
	} else if cfg.block {
		h := make([]circuit.Word, 8)
		for i := range h {
			h[i] = b.ConstWord(cfg.v.IV[i], w)
		}
		m := b.BigEndianWords(b.Input("block", 16*w), w)
		b.Output("digest", circuit.BigEndianBits(compress(b, w, cfg.rounds, h, m))[:cfg.v.DigestBits])
	} else {
		h, err := padding(cfg.v).Chain(ctx, b, mdpad.Message{Bits: cfg.msgBits, Blocks: cfg.blocks}, cfg.v.IV[:], w,
			func(b *circuit.Builder, h, block []circuit.Word) []circuit.Word {
				return compress(b, w, cfg.rounds, h, block)
			})
		if err != nil {
			return nil, err
		}
		b.Output("digest", circuit.BigEndianBits(h)[:cfg.v.DigestBits])
	}
	for k, v := range map[string]int{
		"w": w, "rounds": cfg.rounds, "blocks": cfg.blocks, "message_bits": cfg.msgBits,
		"digest_bits": cfg.v.DigestBits, "block_bits": cfg.v.BlockBits(),
	} {
		b.SetAttr(k, int64(v))
	}
	return b.Circuit(), ctx.Err()
}

func reference(ctx context.Context, pass *sdk.Pass, inputs []bitvec.Vec) ([]bitvec.Vec, error) {
	cfg := pass.Prepared.(config)
	w := cfg.v.WordBits
	return sdk.EachInput(ctx, inputs, func(in bitvec.Vec) (bitvec.Vec, error) {
		if cfg.compress {
			all := in.Bytes(24 * w)
			return bitvec.FromBytes(cfg.v.Compress(all[:8*w], all[8*w:], cfg.rounds)), nil
		}
		if cfg.block {
			iv := bitvec.NewVec(8 * w)
			for i, x := range cfg.v.IV {
				for k := range w {
					iv.Set(i*w+k, uint(x>>(w-1-k))&1)
				}
			}
			return bitvec.FromBytes(cfg.v.Compress(iv.Bytes(8*w), in.Bytes(16*w), cfg.rounds)[:cfg.v.DigestBits]), nil
		}
		if cfg.rounds == cfg.v.Rounds() && cfg.msgBits%8 == 0 {
			return bitvec.FromPackedMSB(stdlib(cfg.v, in.PackMSB(cfg.msgBits)), cfg.v.DigestBits), nil
		}
		return bitvec.FromBytes(cfg.v.Sum(in.Bytes(cfg.msgBits), cfg.rounds)), nil
	})
}

// stdlib computes a standard digest with crypto/sha256 or crypto/sha512,
// so that full-round points are verified against the standard library.
func stdlib(v sha2ref.Variant, data []byte) []byte {
	switch v.Name {
	case "SHA-224":
		d := sha256.Sum224(data)
		return d[:]
	case "SHA-256":
		d := sha256.Sum256(data)
		return d[:]
	case "SHA-384":
		d := sha512.Sum384(data)
		return d[:]
	case "SHA-512":
		d := sha512.Sum512(data)
		return d[:]
	case "SHA-512/224":
		d := sha512.Sum512_224(data)
		return d[:]
	}
	d := sha512.Sum512_256(data)
	return d[:]
}
