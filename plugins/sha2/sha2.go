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
		{Name: "message_bits", Type: sdk.Int, Min: sdk.Bound(0),
			Doc: "message length in bits, any (standard padding); default the longest whole-byte message of `blocks` blocks"},
		{Name: "blocks", Type: sdk.Int, Min: sdk.Bound(1),
			Doc: "padded blocks (alternative to message_bits): the message is the longest whole-byte one that pads to this many"},
		{Name: "mode", Type: sdk.String, Default: "hash", Enum: []string{"hash", "compress"},
			Doc: "\"hash\": message in, digest out; \"compress\": chaining value (8 words) and one block (16 words) in, new chaining value out"},
	},
	Prepare:   prepare,
	Build:     build,
	Reference: reference,
}

// config is the resolved parameter set.
type config struct {
	v        sha2ref.Variant
	rounds   int
	compress bool
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
	cfg := config{v: presets[p.String("preset")], compress: p.String("mode") == "compress"}
	cfg.rounds = cfg.v.Rounds()
	if p.Has("rounds") {
		cfg.rounds = p.Int("rounds")
		if cfg.rounds > cfg.v.Rounds() {
			return cfg, p.Errorf("rounds", "%s has %d-bit words and at most %d rounds, got %d", cfg.v.Name, cfg.v.WordBits, cfg.v.Rounds(), cfg.rounds)
		}
	}
	if cfg.compress {
		for _, name := range []string{"message_bits", "blocks"} {
			if p.Has(name) {
				return cfg, p.Errorf(name, "mode \"compress\" takes one block and no message; %s does not apply", name)
			}
		}
		cfg.blocks = 1
		return cfg, nil
	}
	if p.Has("message_bits") && p.Has("blocks") {
		return cfg, p.Errorf("message_bits", "give blocks or message_bits, not both")
	}
	switch {
	case p.Has("message_bits"):
		cfg.msgBits = p.Int("message_bits")
		if cfg.msgBits > 1<<24 {
			return cfg, p.Errorf("message_bits", "at most %d bits, got %d", 1<<24, cfg.msgBits)
		}
	default:
		cfg.blocks = 1
		if p.Has("blocks") {
			cfg.blocks = p.Int("blocks")
			if cfg.blocks > 1024 {
				return cfg, p.Errorf("blocks", "at most 1024 blocks, got %d", cfg.blocks)
			}
		}
		n := cfg.blocks*cfg.v.BlockBits() - 1 - 2*cfg.v.WordBits
		cfg.msgBits = n - n%8
	}
	cfg.blocks = cfg.v.PaddedBlocks(cfg.msgBits)
	return cfg, nil
}

// prepare resolves and checks the parameters: its config is Pass.Prepared.
func prepare(_ context.Context, pass *sdk.Pass) (any, error) { return resolve(pass.Params) }

// word is a w-bit word of circuit nodes, least significant bit first.
type word = []circuit.Node

// msbWords splits bits (most significant first, as the standard writes
// them) into w-bit words.
func msbWords(bs []circuit.Node, w int) []word {
	out := make([]word, len(bs)/w)
	for i := range out {
		out[i] = make(word, w)
		for j := 0; j < w; j++ {
			out[i][j] = bs[i*w+w-1-j]
		}
	}
	return out
}

// msbBits is the inverse of msbWords.
func msbBits(ws []word) []circuit.Node {
	var out []circuit.Node
	for _, x := range ws {
		for j := len(x) - 1; j >= 0; j-- {
			out = append(out, x[j])
		}
	}
	return out
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

// bitPos gives bit i of each word the position hint i where the bit has
// none yet (a fresh result, an input, a constant; a bit that already
// belongs to another word, as a rotated or shifted one does, keeps its).
func bitPos(b *circuit.Builder, ws ...word) {
	for _, x := range ws {
		for i, n := range x {
			if b.PosOf(n) == circuit.NoPos {
				b.SetPos(n, i)
			}
		}
	}
}

// compress builds the compression function over h (eight words) and m
// (16 words) with the given number of rounds. Every node is hinted with
// its bit index within its word (a carry of an addition: that of the sum
// bit it serves).
func compress(b *circuit.Builder, w, rounds int, h, m []word) []word {
	r := rotationsOf(w)
	bitPos(b, h...)
	bitPos(b, m...)
	big := func(x word, rs [3]int) word {
		out := b.XorWords(circuit.RotR(x, rs[0]), circuit.RotR(x, rs[1]), circuit.RotR(x, rs[2]))
		bitPos(b, out)
		return out
	}
	small := func(x word, rs [3]int) word {
		shr := b.Shr(x, rs[2])
		bitPos(b, shr)
		out := b.XorWords(circuit.RotR(x, rs[0]), circuit.RotR(x, rs[1]), shr)
		bitPos(b, out)
		return out
	}
	add := func(ws ...word) word {
		out := b.Add(ws...)
		bitPos(b, out)
		return out
	}
	W := append([]word(nil), m...)
	for t := 16; t < rounds; t++ {
		b.Scope("schedule", func() {
			W = append(W, add(small(W[t-2], r.s1), W[t-7], small(W[t-15], r.s0), W[t-16]))
		})
	}
	s := append([]word(nil), h...)
	for t := 0; t < rounds; t++ {
		b.Scope("round "+strconv.Itoa(t+1), func() {
			a, bb, c, d, e, f, g, hh := s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]
			S1 := big(e, r.S1)
			S0 := big(a, r.S0)
			ef := make(word, w)  // e ∧ f
			neg := make(word, w) // ¬e ∧ g
			maj := make(word, w)
			for i := 0; i < w; i++ {
				b.At(i, func() {
					ef[i] = b.And(e[i], f[i])
					neg[i] = b.AndNot(e[i], g[i])
					maj[i] = b.Threshold(2, []circuit.Node{a[i], bb[i], c[i]}, []int32{1, 1, 1})
				})
			}
			K := b.ConstWord(sha2ref.K(w, t), w)
			bitPos(b, K)
			newA := add(hh, S1, ef, neg, K, W[t], S0, maj)
			newE := add(d, hh, S1, ef, neg, K, W[t])
			s = []word{newA, a, bb, c, newE, e, f, g}
		})
	}
	out := make([]word, 8)
	b.Scope("feed-forward", func() {
		for i := range out {
			out[i] = add(h[i], s[i])
		}
	})
	return out
}

func build(ctx context.Context, pass *sdk.Pass) (*circuit.Circuit, error) {
	cfg := pass.Prepared.(config)
	w := cfg.v.WordBits
	b := circuit.NewBuilder()
	if cfg.compress {
		h := msbWords(b.Input("chain", 8*w), w)
		m := msbWords(b.Input("block", 16*w), w)
		b.Output("chain", msbBits(compress(b, w, cfg.rounds, h, m)))
	} else {
		msg := b.Input("msg", cfg.msgBits)
		var padded []circuit.Node
		b.Scope("padding", func() {
			padded = append(padded, msg...)
			for _, bit := range cfg.v.Pad(make([]byte, cfg.msgBits))[cfg.msgBits:] {
				padded = append(padded, b.Const(int(bit)))
			}
		})
		h := make([]word, 8)
		for i, x := range cfg.v.IV {
			h[i] = b.ConstWord(x, w)
		}
		for k := 0; k < cfg.blocks; k++ {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			block := padded[k*cfg.v.BlockBits() : (k+1)*cfg.v.BlockBits()]
			b.Scope("block "+strconv.Itoa(k+1), func() {
				h = compress(b, w, cfg.rounds, h, msbWords(block, w))
			})
		}
		b.Output("digest", msbBits(h)[:cfg.v.DigestBits])
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
