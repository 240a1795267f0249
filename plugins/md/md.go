package md

import (
	"context"
	"fmt"

	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/keccak"
	"github.com/tcforge/tcforge/sdk/keccak/keccakref"
)

// Padding modes.
const (
	// PaddingZero fills the last block with 0* (the paper's tables).
	PaddingZero = "zero"
	// PaddingStrengthened appends 0* and then one block holding the message
	// length in binary (Merkle's strengthening, the paper's Section 2).
	PaddingStrengthened = "strengthened"
)

// Plugin is the md (Merkle–Damgård) construction.
var Plugin = &sdk.Construction{
	Name:    "md",
	Version: "0.1.0",
	Doc:     "Merkle–Damgård chain over a Keccak-p compression: h = 0, then h = first chain_bits of f(state(h ⊕ block)) per block; zero or strengthened padding.",
	Params: []sdk.Param{
		keccak.LogWParam("the compression's Keccak-p"),
		keccak.RoundsParam(),
		{Name: "rate", Type: sdk.Int, Doc: "optional: the rate part of the state the compression reads and writes (0 < rate < 25w); block_bits and chain_bits must fit in it. The circuit does not otherwise depend on it"},
		{Name: "block_bits", Type: sdk.Int, Default: 256, Doc: "message block size in bits (at least 1, at most the state 25w)"},
		{Name: "chain_bits", Type: sdk.Int, Doc: "chain value size in bits: the first chain_bits state bits after f (at least 1, at most the state 25w; default block_bits)"},
		{Name: "blocks", Type: sdk.Int, Min: sdk.Bound(1), Doc: "message blocks: the message is blocks·block_bits bits (default 1; or give message_bits)"},
		{Name: "message_bits", Type: sdk.Int, Min: sdk.Bound(0), Doc: "message length in bits (alternative to blocks); padded to whole blocks"},
		{Name: "padding", Type: sdk.String, Default: PaddingZero, Enum: []string{PaddingZero, PaddingStrengthened},
			Doc: "\"zero\": 0* fills the last block (the paper); \"strengthened\": 0*, then a final block holding the message length in binary, most significant bit first"},
	},
	Prepare:   prepare,
	Build:     build,
	Reference: reference,
	Estimate:  estimate,
}

// config is the resolved parameter set.
type config struct {
	perm         keccak.Perm
	rate         int // 0: not given
	blockBits    int
	chainBits    int
	msgBits      int
	blocks       int // message blocks after 0* padding
	strengthened bool
}

// compressions is the number of compression calls: the message blocks and,
// when strengthened, the length block.
func (c config) compressions() int {
	if c.strengthened {
		return c.blocks + 1
	}
	return c.blocks
}

// loadBits is how many state bits each compression loads: the chain value
// and the block are xored after zero-extending the shorter one.
func (c config) loadBits() int { return max(c.blockBits, c.chainBits) }

// prepare resolves and checks the parameters: every call's config.
func prepare(_ context.Context, pass *sdk.Pass) (any, error) { return resolve(pass.Params) }

func resolve(p sdk.Params) (config, error) {
	var cfg config
	logW := p.Int("log_w")
	perm, err := keccak.PermFromParams(p, logW)
	if err != nil {
		return cfg, err
	}
	cfg.perm = perm
	comp, err := keccak.CompressionFromParams(p, perm, "chain_bits", keccak.CompressionWhy{
		Block:      "the chain absorbs the message in blocks of block_bits bits",
		BlockState: "each block is xored into the state",
		Out:        "the chain value is the compression's output",
		OutState:   "the chain value is read from the state",
		Rate:       "the block and the chain value enter the rate part of the state",
	})
	if err != nil {
		return cfg, err
	}
	cfg.blockBits, cfg.chainBits, cfg.rate = comp.BlockBits, comp.OutBits, comp.Rate
	cfg.strengthened = p.String("padding") == PaddingStrengthened
	switch {
	case p.Has("blocks") && p.Has("message_bits"):
		return cfg, p.Errorf("message_bits", "give blocks or message_bits, not both")
	case p.Has("message_bits"):
		cfg.msgBits = p.Int("message_bits")
		cfg.blocks = (cfg.msgBits + cfg.blockBits - 1) / cfg.blockBits
		if !cfg.strengthened && cfg.blocks == 0 {
			cfg.blocks = 1 // the empty message pads to one zero block
		}
	default:
		cfg.blocks = 1
		if p.Has("blocks") {
			cfg.blocks = p.Int("blocks")
		}
		cfg.msgBits = cfg.blocks * cfg.blockBits
	}
	if cfg.strengthened && cfg.blockBits < 63 && uint64(cfg.msgBits) >= 1<<uint(cfg.blockBits) {
		name := "blocks"
		if p.Has("message_bits") {
			name = "message_bits"
		}
		return cfg, p.Errorf(name, "the message length %d does not fit the %d-bit length block of strengthened padding (at most %d)", cfg.msgBits, cfg.blockBits, uint64(1)<<uint(cfg.blockBits)-1)
	}
	return cfg, nil
}

// lengthBlock returns the strengthening block: the message length in
// binary over blockBits bits, most significant bit first.
func (c config) lengthBlock() []byte {
	out := make([]byte, c.blockBits)
	for k := range out {
		if sh := c.blockBits - 1 - k; sh < 64 {
			out[k] = byte(uint64(c.msgBits)>>uint(sh)) & 1
		}
	}
	return out
}

// estimate predicts the size of the chain's circuit without building it:
// every compression after the first few is alike, so it builds the chain
// cut to 2 and 3 message blocks (with the real last block, padding and
// strengthening) and extrapolates the difference; a chain of at most 3
// blocks is built as is.
func estimate(ctx context.Context, pass *sdk.Pass) (sdk.Size, error) {
	cfg := pass.Prepared.(config)
	const few = 3
	if cfg.blocks <= few {
		return sizeOf(ctx, cfg)
	}
	cut := func(k int) config {
		c := cfg
		c.blocks = k
		c.msgBits = cfg.msgBits - (cfg.blocks-k)*cfg.blockBits
		return c
	}
	s2, err := sizeOf(ctx, cut(few-1))
	if err != nil {
		return sdk.Size{}, err
	}
	s3, err := sizeOf(ctx, cut(few))
	if err != nil {
		return sdk.Size{}, err
	}
	perBlock := sdk.Size{Nodes: s3.Nodes - s2.Nodes, Edges: s3.Edges - s2.Edges}
	return sdk.BlockLinear(s3, perBlock, int64(cfg.blocks-few))
}

// sizeOf builds the chain of cfg and returns its size.
func sizeOf(ctx context.Context, cfg config) (sdk.Size, error) {
	c, err := buildConfig(ctx, cfg)
	if err != nil {
		return sdk.Size{}, err
	}
	return sdk.SizeOf(c), nil
}

func build(ctx context.Context, pass *sdk.Pass) (*circuit.Circuit, error) {
	return buildConfig(ctx, pass.Prepared.(config))
}

// buildConfig returns the chain's logic circuit.
func buildConfig(ctx context.Context, cfg config) (*circuit.Circuit, error) {
	b := circuit.NewBuilder()
	msg := b.Input("msg", cfg.msgBits)
	// The constant nodes made here (padding, the zero chain value) are
	// loaded by a compression as constant registers (b.ConstValue).
	constant := func(v byte) circuit.Node { return b.Const(int(v)) }
	blocks := circuit.Split(msg, cfg.blockBits)
	b.Scope("padding", func() {
		// 0*: fill the last message block (or make one zero block).
		if len(blocks) < cfg.blocks {
			blocks = append(blocks, nil)
		}
		if last := len(blocks) - 1; last >= 0 && len(blocks[last]) < cfg.blockBits {
			full := append([]circuit.Node(nil), blocks[last]...)
			for len(full) < cfg.blockBits {
				full = append(full, constant(0))
			}
			blocks[last] = full
		}
		if cfg.strengthened {
			lb := make([]circuit.Node, cfg.blockBits)
			for k, v := range cfg.lengthBlock() {
				lb[k] = constant(v)
			}
			blocks = append(blocks, lb)
		}
	})
	if len(blocks) != cfg.compressions() {
		return nil, fmt.Errorf("md: padded message has %d blocks, want %d", len(blocks), cfg.compressions())
	}
	h := make([]circuit.Node, cfg.chainBits)
	// Position hints: every bit is hinted with the slice z of the state
	// bit it lands in (k mod w for bit k of the chain value or a block),
	// as the permutation's nodes are.
	b.Scope("iv", func() {
		for i := range h {
			b.At(cfg.perm.Slice(i), func() { h[i] = constant(0) })
		}
	})
	n := cfg.loadBits()
	for i, m := range blocks {
		b.Scope(fmt.Sprintf("block %d", i+1), func() {
			// x = (h ‖ 0*) ⊕ (m ‖ 0*): the block is xored into the chain
			// bits (even into the zero chain value of the first block, as
			// in the paper); bits only one of them has are passed on.
			x := make([]circuit.Node, n)
			known := make([]int8, n)
			b.Scope("absorb", func() {
				for k := range x {
					z := cfg.perm.Slice(k)
					if k < len(m) {
						b.SetPos(m[k], z)
					}
					switch {
					case k < len(h) && k < len(m):
						b.At(z, func() { x[k] = b.Xor(h[k], m[k]) })
					case k < len(h):
						x[k] = h[k]
					default:
						x[k] = m[k]
					}
					known[k] = -1
					if v, ok := b.ConstValue(x[k]); ok {
						known[k] = int8(v)
					}
				}
			})
			h = cfg.perm.Compress(b, x, known, cfg.chainBits)
		})
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("md: building block %d: %w", i+1, err)
		}
	}
	b.Output("digest", h)
	attrs := map[string]int{
		"log_w": cfg.perm.LogW, "w": cfg.perm.W(), "b": cfg.perm.B(), "rounds": cfg.perm.Rounds,
		"block_bits": cfg.blockBits, "chain_bits": cfg.chainBits, "load_bits": cfg.loadBits(),
		"blocks": cfg.blocks, "compressions": cfg.compressions(), "message_bits": cfg.msgBits,
		"padded_bits": cfg.compressions() * cfg.blockBits, "strengthened": boolInt(cfg.strengthened),
		"zero_rc_rounds": cfg.perm.ZeroConstantRounds(),
	}
	if cfg.rate > 0 {
		attrs["rate"] = cfg.rate
	}
	for k, v := range attrs {
		b.SetAttr(k, int64(v))
	}
	return b.Circuit(), nil
}

func boolInt(v bool) int {
	if v {
		return 1
	}
	return 0
}

// reference computes the chain with the independent lane-arithmetic
// Keccak reference.
func reference(ctx context.Context, pass *sdk.Pass, inputs []bitvec.Vec) ([]bitvec.Vec, error) {
	cfg := pass.Prepared.(config)
	ref := keccakref.Params{LogW: cfg.perm.LogW, Rounds: cfg.perm.Rounds}
	return sdk.EachInput(ctx, inputs, func(in bitvec.Vec) (bitvec.Vec, error) {
		return bitvec.FromBytes(cfg.digest(ref, in.Bytes(cfg.msgBits))), nil
	})
}

// digest runs the chain over msg (one byte per bit).
func (c config) digest(ref keccakref.Params, msg []byte) []byte {
	padded := make([]byte, c.blocks*c.blockBits)
	copy(padded, msg)
	if c.strengthened {
		padded = append(padded, c.lengthBlock()...)
	}
	h := make([]byte, c.chainBits)
	for off := 0; off < len(padded); off += c.blockBits {
		x := make([]byte, c.loadBits())
		copy(x, h)
		for i, m := range padded[off : off+c.blockBits] {
			x[i] ^= m
		}
		h = ref.Compress(x, c.chainBits)
	}
	return h
}
