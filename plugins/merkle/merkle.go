package merkle

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
	// PaddingZero fills the last leaf block with 0* (no padding at all when
	// the message fills its leaves, as in the paper's table).
	PaddingZero = "zero"
	// PaddingOneZero appends a 1 and then 0* to fill the last leaf block;
	// a message that fills its blocks gets one more leaf. Unlike 0* it is
	// injective: messages of different lengths never pad alike.
	PaddingOneZero = "10*"
)

// Plugin is the merkle (binary Merkle tree) construction.
var Plugin = &sdk.Construction{
	Name:    "merkle",
	Version: "0.1.0",
	Doc:     "Binary Merkle tree over a Keccak-p compression: leaf = f(state(block)), node = f(state(left ⊕ right)), split H(i, j) at ⌊(i+j)/2⌋; any number of leaves, zero or 10* padding.",
	Params: []sdk.Param{
		keccak.LogWParam("the compression's Keccak-p"),
		keccak.RoundsParam(),
		{Name: "rate", Type: sdk.Int, Doc: "optional: the rate part of the state the compression reads and writes (0 < rate < 25w); block_bits and digest_bits must fit in it. The circuit does not otherwise depend on it"},
		{Name: "block_bits", Type: sdk.Int, Default: 256, Doc: "leaf block size in bits (at least 1, at most the state 25w)"},
		{Name: "digest_bits", Type: sdk.Int, Doc: "size of every leaf and node hash: the first digest_bits state bits after f (at least 1, at most the state 25w; default block_bits)"},
		{Name: "leaves", Type: sdk.Int, Doc: "number of leaves, at least 1 (default: as many as the message needs, else 1)"},
		{Name: "message_bits", Type: sdk.Int, Min: sdk.Bound(0), Doc: "message length in bits (default: the longest message of `leaves` padded blocks)"},
		{Name: "padding", Type: sdk.String, Default: PaddingZero, Enum: []string{PaddingZero, PaddingOneZero},
			Doc: "\"zero\": 0* fills the last leaf block (the paper, where messages fill their leaves); \"10*\": a 1 and then 0*, which adds a leaf when the message fills its blocks"},
	},
	Prepare:   prepare,
	Build:     build,
	Reference: reference,
	Estimate:  estimate,
}

// config is the resolved parameter set.
type config struct {
	perm       keccak.Perm
	rate       int // 0: not given
	blockBits  int
	digestBits int
	leaves     int
	msgBits    int
	oneZero    bool
}

// leavesFor returns how many leaf blocks a message of n bits pads to.
func (c config) leavesFor(n int) int {
	if c.oneZero {
		return n/c.blockBits + 1
	}
	return max(1, (n+c.blockBits-1)/c.blockBits)
}

// maxMessage returns the longest message that pads to c.leaves blocks.
func (c config) maxMessage() int {
	if c.oneZero {
		return c.leaves*c.blockBits - 1
	}
	return c.leaves * c.blockBits
}

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
	comp, err := keccak.CompressionFromParams(p, perm, "digest_bits", keccak.CompressionWhy{
		Block:      "every leaf hashes one block of block_bits bits",
		BlockState: "a leaf loads its block into the state",
		Out:        "every node hash is the first digest_bits state bits",
		OutState:   "hashes are read from the state",
		Rate:       "blocks and hashes enter the rate part of the state",
	})
	if err != nil {
		return cfg, err
	}
	cfg.blockBits, cfg.digestBits, cfg.rate = comp.BlockBits, comp.OutBits, comp.Rate
	cfg.oneZero = p.String("padding") == PaddingOneZero
	if p.Has("leaves") {
		cfg.leaves = p.Int("leaves")
		if cfg.leaves < 1 {
			return cfg, p.Errorf("leaves", "a Merkle tree needs at least one leaf, got %d", cfg.leaves)
		}
	}
	switch {
	case p.Has("message_bits"):
		cfg.msgBits = p.Int("message_bits")
		need := cfg.leavesFor(cfg.msgBits)
		if cfg.leaves == 0 {
			cfg.leaves = need
		} else if need != cfg.leaves {
			return cfg, p.Errorf("message_bits", "a %d-bit message pads (%s) to %d leaves of %d bits, not the %d leaves asked for", cfg.msgBits, p.String("padding"), need, cfg.blockBits, cfg.leaves)
		}
	default:
		if cfg.leaves == 0 {
			cfg.leaves = 1
		}
		cfg.msgBits = cfg.maxMessage()
	}
	return cfg, nil
}

// height returns the height of the tree over n leaves split as H(i, j):
// ⌈log₂ n⌉.
func height(n int) int {
	h := 0
	for (1 << uint(h)) < n {
		h++
	}
	return h
}

// estimate predicts the size of the tree's circuit without building it: a
// tree of n leaves has n leaf and n − 1 node compressions, and all but the
// last leaf (which holds the padding) are alike. It builds a one-leaf tree
// of the last leaf and a two-leaf tree of full blocks less a one-leaf one
// (one leaf block, one leaf and one node compression) and adds n − 1 of
// the latter to the former.
func estimate(ctx context.Context, pass *sdk.Pass) (sdk.Size, error) {
	cfg := pass.Prepared.(config)
	if cfg.leaves <= 2 {
		return sizeOf(ctx, cfg)
	}
	full := func(k int) config {
		c := cfg
		c.leaves, c.msgBits, c.oneZero = k, k*cfg.blockBits, false
		return c
	}
	last := cfg
	last.leaves, last.msgBits = 1, cfg.msgBits-(cfg.leaves-1)*cfg.blockBits
	s1, err := sizeOf(ctx, full(1))
	if err != nil {
		return sdk.Size{}, err
	}
	s2, err := sizeOf(ctx, full(2))
	if err != nil {
		return sdk.Size{}, err
	}
	sl, err := sizeOf(ctx, last)
	if err != nil {
		return sdk.Size{}, err
	}
	n := int64(cfg.leaves - 1)
	return sdk.Size{Nodes: sl.Nodes + n*(s2.Nodes-s1.Nodes), Edges: sl.Edges + n*(s2.Edges-s1.Edges)}, nil
}

// sizeOf builds the tree of cfg and returns its size.
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

// buildConfig returns the tree's logic circuit.
func buildConfig(ctx context.Context, cfg config) (*circuit.Circuit, error) {
	b := circuit.NewBuilder()
	msg := b.Input("msg", cfg.msgBits)
	padded := msg
	// A leaf loads the padding's constant nodes as constant registers
	// (b.ConstValue).
	if pad := cfg.leaves*cfg.blockBits - cfg.msgBits; pad > 0 {
		b.Scope("padding", func() {
			padded = append([]circuit.Node(nil), msg...)
			for k := 0; k < pad; k++ {
				v := 0
				if k == 0 && cfg.oneZero {
					v = 1
				}
				padded = append(padded, b.Const(v))
			}
		})
	}
	blocks := circuit.Split(padded, cfg.blockBits)
	if len(blocks) != cfg.leaves {
		return nil, fmt.Errorf("merkle: padded message has %d blocks, want %d leaves", len(blocks), cfg.leaves)
	}
	// hash returns H(i, j), leaves numbered from 0.
	var hash func(i, j int) []circuit.Node
	hash = func(i, j int) []circuit.Node {
		var out []circuit.Node
		if i == j {
			blk := blocks[i]
			known := make([]int8, len(blk))
			for k, x := range blk {
				known[k] = -1
				if v, ok := b.ConstValue(x); ok {
					known[k] = int8(v)
				}
			}
			b.Scope(fmt.Sprintf("leaf %d", i+1), func() { out = cfg.perm.Compress(b, blk, known, cfg.digestBits) })
			return out
		}
		m := (i + j) / 2
		left, right := hash(i, m), hash(m+1, j)
		b.Scope(fmt.Sprintf("node %d-%d", i+1, j+1), func() {
			out = cfg.perm.Compress(b, keccak.Absorb(b, left, right), nil, cfg.digestBits)
		})
		return out
	}
	root := hash(0, cfg.leaves-1)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("merkle: building the tree: %w", err)
	}
	b.Output("digest", root)
	attrs := map[string]int{
		"log_w": cfg.perm.LogW, "w": cfg.perm.W(), "b": cfg.perm.B(), "rounds": cfg.perm.Rounds,
		"block_bits": cfg.blockBits, "digest_bits": cfg.digestBits, "leaves": cfg.leaves,
		"message_bits": cfg.msgBits, "padded_bits": cfg.leaves * cfg.blockBits,
		"height": height(cfg.leaves), "nodes": cfg.leaves - 1, "compressions": 2*cfg.leaves - 1,
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

// reference computes the tree with the independent lane-arithmetic Keccak
// reference.
func reference(ctx context.Context, pass *sdk.Pass, inputs []bitvec.Vec) ([]bitvec.Vec, error) {
	cfg := pass.Prepared.(config)
	ref := keccakref.Params{LogW: cfg.perm.LogW, Rounds: cfg.perm.Rounds}
	return sdk.EachInput(ctx, inputs, func(in bitvec.Vec) (bitvec.Vec, error) {
		return bitvec.FromBytes(cfg.root(ref, in.Bytes(cfg.msgBits))), nil
	})
}

// root hashes msg (one byte per bit) into the tree's root.
func (c config) root(ref keccakref.Params, msg []byte) []byte {
	padded := make([]byte, c.leaves*c.blockBits)
	copy(padded, msg)
	if c.oneZero {
		padded[len(msg)] = 1
	}
	var h func(i, j int) []byte
	h = func(i, j int) []byte {
		if i == j {
			return ref.Compress(padded[i*c.blockBits:(i+1)*c.blockBits], c.digestBits)
		}
		m := (i + j) / 2
		x := h(i, m)
		for k, v := range h(m+1, j) {
			x[k] ^= v
		}
		return ref.Compress(x, c.digestBits)
	}
	return h(0, c.leaves-1)
}
