// Package keccak is the Keccak sponge construction plugin: SHA-3, SHAKE,
// the original Keccak and toy instances with any lane size w = 2^log_w.
package keccak

import (
	"context"
	"crypto/sha3"
	"fmt"
	"math"

	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/keccak"
	"github.com/tcforge/tcforge/sdk/keccak/keccakref"
)

// Plugin is the keccak construction.
var Plugin = &sdk.Construction{
	Name:    "keccak",
	Version: "0.1.0",
	Doc:     "Keccak sponge (SHA-3, SHAKE, Keccak, toy lane sizes): absorbs the message, squeezes output_bits.",
	Params: []sdk.Param{
		{Name: "preset", Type: sdk.String, Default: "", Enum: []string{"", "sha3-224", "sha3-256", "sha3-384", "sha3-512", "shake128", "shake256", "keccak-256"},
			Doc: "a standard instance (w = 64, 24 rounds); sets rate, padding and output_bits unless given"},
		keccak.LogWParam("the Keccak-p permutation"),
		keccak.RoundsParam(),
		{Name: "rate", Type: sdk.Int, Min: sdk.Bound(1), Doc: "rate r in bits (0 < r < 25w); or give capacity"},
		{Name: "capacity", Type: sdk.Int, Min: sdk.Bound(1), Doc: "capacity c = 25w − r in bits (alternative to rate)"},
		{Name: "blocks", Type: sdk.Int, Min: sdk.Bound(1), Doc: "number of absorbed blocks; with padding, the message is the longest that pads to this many blocks"},
		{Name: "message_bits", Type: sdk.Int, Min: sdk.Bound(0), Doc: "message length in bits (default: the longest one-block message); with padding \"none\" a multiple of rate"},
		{Name: "output_bits", Type: sdk.Int, Min: sdk.Bound(1), Doc: "output length in bits (default: the preset's digest, else rate); beyond rate the sponge squeezes more blocks"},
		{Name: "padding", Type: sdk.String, Enum: []string{"none", "keccak", "sha3", "shake"},
			Doc: "\"none\": the input is the already padded message (the paper's tables); otherwise pad10*1 after the domain suffix (keccak: none, sha3: 01, shake: 1111). Default: the preset's, else none"},
		{Name: "first_block", Type: sdk.String, Default: "xor", Enum: []string{"xor", "load"},
			Doc: "\"xor\": absorb the first block into the zero state (the standard sponge); \"load\": load it into a fresh state (the paper's first experiment)"},
	},
	Prepare:   prepare,
	Build:     build,
	Reference: reference,
	Estimate:  estimate,
}

// config is the resolved parameter set.
type config struct {
	perm        keccak.Perm
	rate        int
	blocks      int
	msgBits     int // circuit input bits
	outBits     int
	suffix      []uint
	padded      bool
	load        bool
	paddingName string
}

type preset struct {
	capacity, out int
	padding       string
}

// presetOf returns the standard instance of that name.
func presetOf(name string) (preset, bool) {
	switch name {
	case "sha3-224":
		return preset{448, 224, "sha3"}, true
	case "sha3-256":
		return preset{512, 256, "sha3"}, true
	case "sha3-384":
		return preset{768, 384, "sha3"}, true
	case "sha3-512":
		return preset{1024, 512, "sha3"}, true
	case "shake128":
		return preset{256, 256, "shake"}, true
	case "shake256":
		return preset{512, 512, "shake"}, true
	case "keccak-256":
		return preset{512, 256, "keccak"}, true
	}
	return preset{}, false
}

func suffixOf(padding string) []uint {
	switch padding {
	case "sha3":
		return []uint{0, 1}
	case "shake":
		return []uint{1, 1, 1, 1}
	}
	return nil
}

// prepare resolves and checks the parameters: every call's config.
func prepare(_ context.Context, pass *sdk.Pass) (any, error) { return resolve(pass.Params) }

func resolve(p sdk.Params) (config, error) {
	var cfg config
	ps, hasPreset := presetOf(p.String("preset"))
	logW := p.Int("log_w")
	if hasPreset && p.Has("log_w") && logW != 6 {
		return cfg, p.Errorf("log_w", "preset %q is defined for w = 64 (log_w = 6), got log_w = %d", p.String("preset"), logW)
	}
	if hasPreset {
		logW = 6
	}
	perm, err := keccak.PermFromParams(p, logW)
	if err != nil {
		return cfg, err
	}
	cfg.perm = perm
	b := cfg.perm.B()
	switch {
	case p.Has("rate") && p.Has("capacity"):
		if p.Int("rate")+p.Int("capacity") != b {
			return cfg, p.Errorf("capacity", "rate + capacity must equal the state size 25w = %d, got %d + %d", b, p.Int("rate"), p.Int("capacity"))
		}
		cfg.rate = p.Int("rate")
	case p.Has("rate"):
		cfg.rate = p.Int("rate")
	case p.Has("capacity"):
		if p.Int("capacity") >= b {
			return cfg, p.Errorf("capacity", "capacity must be less than the state size 25w = %d, got %d", b, p.Int("capacity"))
		}
		cfg.rate = b - p.Int("capacity")
	case hasPreset:
		cfg.rate = b - ps.capacity
	default:
		return cfg, p.Errorf("rate", "set rate or capacity (or a preset)")
	}
	if cfg.rate >= b {
		return cfg, p.Errorf("rate", "rate must be less than the state size 25w = %d (w = %d), got %d", b, cfg.perm.W(), cfg.rate)
	}
	cfg.paddingName = "none"
	if hasPreset {
		cfg.paddingName = ps.padding
	}
	if p.Has("padding") {
		cfg.paddingName = p.String("padding")
	}
	cfg.padded = cfg.paddingName != "none"
	cfg.suffix = suffixOf(cfg.paddingName)
	cfg.load = p.String("first_block") == "load"
	if p.Has("blocks") && p.Has("message_bits") {
		return cfg, p.Errorf("message_bits", "give blocks or message_bits, not both")
	}
	overhead := len(cfg.suffix) + 2
	if p.Has("message_bits") && p.Int("message_bits") > math.MaxInt64/4 {
		// Its padded blocks would overflow the arithmetic below.
		return cfg, p.Errorf("message_bits", "%d is far too large to build (at most %d)", p.Int("message_bits"), int64(math.MaxInt64/4))
	}
	switch {
	case !cfg.padded && p.Has("message_bits"):
		m := p.Int("message_bits")
		if m == 0 || m%cfg.rate != 0 {
			return cfg, p.Errorf("message_bits", "with padding \"none\" the input is the padded message: a positive multiple of rate %d, got %d", cfg.rate, m)
		}
		cfg.msgBits, cfg.blocks = m, m/cfg.rate
	case !cfg.padded:
		cfg.blocks = 1
		if p.Has("blocks") {
			cfg.blocks = p.Int("blocks")
		}
		cfg.msgBits = cfg.blocks * cfg.rate
	case p.Has("message_bits"):
		cfg.msgBits = p.Int("message_bits")
		cfg.blocks = keccak.PaddedBlocks(cfg.msgBits, len(cfg.suffix), cfg.rate)
	default:
		cfg.blocks = 1
		if p.Has("blocks") {
			cfg.blocks = p.Int("blocks")
		}
		cfg.msgBits = cfg.blocks*cfg.rate - overhead
		if hasPreset {
			cfg.msgBits -= cfg.msgBits % 8 // whole bytes, as byte-oriented SHA-3 APIs take them
		}
		if cfg.msgBits < 0 {
			return cfg, p.Errorf("rate", "rate %d is too small for the %d-bit suffix and pad10*1", cfg.rate, len(cfg.suffix))
		}
	}
	if _, ok := sdk.Mul(int64(cfg.blocks), int64(cfg.rate), 2); !ok {
		return cfg, p.Errorf("blocks", "%d blocks of %d bits are far too many to build", cfg.blocks, cfg.rate)
	}
	cfg.outBits = cfg.rate
	if hasPreset {
		cfg.outBits = ps.out
	}
	if p.Has("output_bits") {
		cfg.outBits = p.Int("output_bits")
	}
	return cfg, nil
}

// estimate predicts the circuit's size from one round of the permutation
// (built for real, a few thousand nodes at most) times the rounds and
// permutations, plus the message and absorbing XORs.
func estimate(ctx context.Context, pass *sdk.Pass) (sdk.Size, error) {
	cfg := pass.Prepared.(config)
	b := circuit.NewBuilder()
	one := keccak.Perm{LogW: cfg.perm.LogW, Rounds: 1}
	one.Apply(b, one.ZeroState(b))
	c := b.Circuit()
	roundNodes := int64(len(c.Ops) - cfg.perm.B()) // less the zero state's constants
	var perms, nodes, edges sdk.Count
	perms.Add(int64(cfg.blocks)).Add(int64((cfg.outBits - 1) / cfg.rate))
	np, ok := perms.Value()
	if !ok {
		np = -1 // a negative factor: nodes and edges overflow too
	}
	rounds := int64(cfg.perm.Rounds)
	nodes.Add(np, rounds, roundNodes).Add(int64(cfg.msgBits)).Add(2, int64(cfg.blocks), int64(cfg.rate))
	edges.Add(np, rounds, int64(len(c.Args))).Add(2, int64(cfg.blocks), int64(cfg.rate))
	param := "rounds"
	if int64(cfg.blocks) > rounds {
		param = "blocks"
		if pass.Params.Has("message_bits") {
			param = "message_bits"
		}
	}
	return sdk.CheckedSize(nodes, edges, param)
}

func build(ctx context.Context, pass *sdk.Pass) (*circuit.Circuit, error) {
	cfg := pass.Prepared.(config)
	b := circuit.NewBuilder()
	if size, err := estimate(ctx, pass); err == nil {
		b.Grow(int(size.Nodes)+int(size.Nodes)/16, int(size.Edges)+int(size.Edges)/16)
	}
	msg := b.Input("msg", cfg.msgBits)
	var blocks [][]circuit.Node
	if cfg.padded {
		blocks = keccak.Pad(b, msg, cfg.suffix, cfg.rate)
	} else {
		blocks = circuit.Split(msg, cfg.rate)
	}
	var s []circuit.Node
	if cfg.load {
		b.Scope("block 1", func() {
			s = cfg.perm.State(b, blocks[0])
			s = cfg.perm.Apply(b, s)
		})
		blocks = blocks[1:]
	} else {
		s = cfg.perm.ZeroState(b)
	}
	// Sponge numbers its blocks from 1; with "load" the first is done.
	out := cfg.perm.Sponge(b, s, blocks, cfg.rate, cfg.outBits)
	b.Output("digest", out)
	// squeezes: the extra permutations squeezing output_bits > rate takes.
	squeezes := 0
	if cfg.outBits > cfg.rate {
		squeezes = (cfg.outBits - cfg.rate + cfg.rate - 1) / cfg.rate
	}
	for k, v := range map[string]int{
		"log_w": cfg.perm.LogW, "w": cfg.perm.W(), "b": cfg.perm.B(), "rounds": cfg.perm.Rounds,
		"rate": cfg.rate, "capacity": cfg.perm.B() - cfg.rate, "blocks": cfg.blocks,
		"message_bits": cfg.msgBits, "padded_bits": cfg.blocks * cfg.rate, "output_bits": cfg.outBits,
		"squeezes": squeezes, "zero_rc_rounds": cfg.perm.ZeroConstantRounds(),
	} {
		b.SetAttr(k, int64(v))
	}
	return b.Circuit(), ctx.Err()
}

func reference(ctx context.Context, pass *sdk.Pass, inputs []bitvec.Vec) ([]bitvec.Vec, error) {
	cfg := pass.Prepared.(config)
	ref := keccakref.Params{LogW: cfg.perm.LogW, Rounds: cfg.perm.Rounds}
	return sdk.EachInput(ctx, inputs, func(in bitvec.Vec) (bitvec.Vec, error) {
		msg := in.Bytes(cfg.msgBits)
		if d, ok := stdlibDigest(cfg, msg); ok {
			return bitvec.FromBytes(d), nil
		}
		padded := msg
		if cfg.padded {
			suffix := make([]byte, len(cfg.suffix))
			for k, s := range cfg.suffix {
				suffix[k] = byte(s)
			}
			padded = keccakref.Pad10Star1(msg, suffix, cfg.rate)
		}
		if len(padded) != cfg.blocks*cfg.rate {
			return nil, fmt.Errorf("keccak reference: padded message has %d bits, want %d", len(padded), cfg.blocks*cfg.rate)
		}
		return bitvec.FromBytes(ref.Sponge(padded, cfg.rate, cfg.outBits)), nil
	})
}

// stdlibDigest computes standard SHA-3 and SHAKE instances with Go's
// crypto/sha3 (whole-byte messages only), so that full-size points are
// verified against the standard library itself. It returns the output as
// one byte per bit.
func stdlibDigest(cfg config, msg []byte) ([]byte, bool) {
	if cfg.perm.LogW != 6 || cfg.perm.Rounds != 24 || len(msg)%8 != 0 {
		return nil, false
	}
	data := keccakref.BitsToBytes(msg)
	capacity := cfg.perm.B() - cfg.rate
	var sum []byte
	switch {
	case cfg.paddingName == "sha3" && cfg.outBits == capacity/2:
		switch capacity {
		case 448:
			d := sha3.Sum224(data)
			sum = d[:]
		case 512:
			d := sha3.Sum256(data)
			sum = d[:]
		case 768:
			d := sha3.Sum384(data)
			sum = d[:]
		case 1024:
			d := sha3.Sum512(data)
			sum = d[:]
		default:
			return nil, false
		}
	case cfg.paddingName == "shake" && (capacity == 256 || capacity == 512):
		n := (cfg.outBits + 7) / 8
		if capacity == 256 {
			sum = sha3.SumSHAKE128(data, n)
		} else {
			sum = sha3.SumSHAKE256(data, n)
		}
	default:
		return nil, false
	}
	return keccakref.BytesToBits(sum)[:cfg.outBits], true
}
