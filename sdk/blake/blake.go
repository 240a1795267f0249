// Package blake is what BLAKE2 and BLAKE3 share, for hash construction
// plugins (docs/writing-a-hash.md, "Counter-and-flags modes: BLAKE2s and
// BLAKE3"): a message of whole bytes in zero-padded blocks, each
// compression told where its block sits (Block: the bytes hashed so far,
// its length, first and last block of its chunk); the compression's working
// state with its counter and flags as constant words (Input); G and the
// round over its 4×4 words (G, Round); the XOR finalisation (Fold); the
// chain of compressions over every chunk (Mode.Chain) and BLAKE3's tree
// of chunks (Tree). A plugin writes its IV, its message schedule, its flags
// and its compression on these; Chain and Tree do the rest.
//
// Bit order: message bit i is bit 7 − i%8 of byte i/8 (bitvec.PackMSB),
// as for every tcforge construction; a block's bytes are read as
// little-endian words (BLAKE2 and BLAKE3 both), and circuit.LittleEndianBits
// writes a digest back in the standard's byte order.
package blake

import (
	"context"
	"fmt"
	"strconv"

	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/circuit"
)

// Mode is one counter-and-flags mode: the block and chunk sizes and the
// word width.
type Mode struct {
	// BlockBytes is the compression's message block in bytes (64 for
	// BLAKE2s and BLAKE3).
	BlockBytes int
	// ChunkBytes, if positive, cuts the message into chunks of this many
	// bytes (BLAKE3: 1024), each chained from the IV on its own; 0: the
	// whole message is one chain (BLAKE2).
	ChunkBytes int
	// W is the word width in bits (32 for BLAKE2s and BLAKE3).
	W int
}

// The largest message Message accepts.
const MaxBlocks = 1024

// Params returns the two message parameters of a BLAKE mode: message_bits
// (whole bytes) and blocks, for a construction's schema. Mode.Message
// resolves them.
func Params() []sdk.Param {
	return []sdk.Param{
		{Name: "message_bits", Type: sdk.Int, Min: sdk.Bound(0),
			Doc: "message length in bits, a multiple of 8 (the hash reads bytes); default the longest message of `blocks` blocks"},
		{Name: "blocks", Type: sdk.Int, Min: sdk.Bound(1),
			Doc: "message blocks (alternative to message_bits): the message fills this many blocks exactly"},
	}
}

// Message is a resolved message: its length in bytes and the blocks it
// takes (the empty message one block).
type Message struct {
	Bytes, Blocks int
}

// String implements fmt.Stringer.
func (m Message) String() string { return fmt.Sprintf("%d bytes, %d blocks", m.Bytes, m.Blocks) }

// Message resolves the parameters Params declares: message_bits, or the
// message that fills blocks blocks (neither: one block). Its errors are
// *sdk.ParamError blaming the parameter: both given, a length that is not
// whole bytes, or one past MaxBlocks blocks.
func (md Mode) Message(params sdk.Params) (Message, error) {
	var m Message
	if params.Has("message_bits") && params.Has("blocks") {
		return m, params.Errorf("message_bits", "give blocks or message_bits, not both")
	}
	maxBytes := MaxBlocks * md.BlockBytes
	switch {
	case params.Has("message_bits"):
		bits := params.Int("message_bits")
		if bits%8 != 0 {
			return m, params.Errorf("message_bits", "%d bits is not a whole number of bytes: the hash reads bytes", bits)
		}
		if bits/8 > maxBytes {
			return m, params.Errorf("message_bits", "at most %d bytes (%d blocks), got %d", maxBytes, MaxBlocks, bits/8)
		}
		m.Bytes = bits / 8
	case params.Has("blocks"):
		if n := params.Int("blocks"); n > MaxBlocks {
			return m, params.Errorf("blocks", "at most %d blocks, got %d", MaxBlocks, n)
		}
		m.Bytes = params.Int("blocks") * md.BlockBytes
	default:
		m.Bytes = md.BlockBytes
	}
	m.Blocks = len(md.Blocks(m))
	return m, nil
}

// Block is where one compression's block sits in the message.
type Block struct {
	// Index is the block's number in the message, Chunk its chunk's (0
	// without chunks).
	Index, Chunk int
	// Start is the block's first byte in the message, Len the message
	// bytes it holds (the rest of it is zeros): 0 only for the empty
	// message's block (or chunk).
	Start, Len int
	// First and Last say the block is the first or the last of its chunk
	// (BLAKE3's CHUNK_START and CHUNK_END); without chunks Last is the
	// message's last block (BLAKE2's final flag). Root says it is the last
	// block of a message of one chunk, the root of BLAKE3's tree.
	First, Last, Root bool
}

// Flags returns the flags of the block: start if it is its chunk's first,
// end if its last, root if the tree's root (BLAKE3's CHUNK_START,
// CHUNK_END, ROOT).
func (blk Block) Flags(start, end, root uint64) uint64 {
	return Flag(blk.First, start) | Flag(blk.Last, end) | Flag(blk.Root, root)
}

// Flag returns f if set, else 0.
func Flag(set bool, f uint64) uint64 {
	if set {
		return f
	}
	return 0
}

// Count returns the bytes hashed up to the end of the block: BLAKE2's
// counter t.
func (blk Block) Count() uint64 { return uint64(blk.Start + blk.Len) }

// Chunks returns the number of chunks of m (1 without chunks; the empty
// message has one).
func (md Mode) Chunks(m Message) int {
	if md.ChunkBytes <= 0 || m.Bytes == 0 {
		return 1
	}
	return (m.Bytes + md.ChunkBytes - 1) / md.ChunkBytes
}

// Blocks returns every block of m in order, chunk by chunk.
func (md Mode) Blocks(m Message) []Block {
	var out []Block
	chunk := m.Bytes
	if md.ChunkBytes > 0 {
		chunk = md.ChunkBytes
	}
	for c := range md.Chunks(m) {
		start := c * chunk
		n := min(chunk, m.Bytes-start)
		blocks := max(1, (n+md.BlockBytes-1)/md.BlockBytes)
		for k := range blocks {
			s := start + k*md.BlockBytes
			out = append(out, Block{Index: len(out), Chunk: c, Start: s, Len: min(md.BlockBytes, m.Bytes-s),
				First: k == 0, Last: k == blocks-1, Root: k == blocks-1 && md.Chunks(m) == 1})
		}
	}
	return out
}

// Compress builds one compression: the chaining value after the block
// whose words are m (little-endian, BlockBytes·8/W of them), from the
// chaining value h and the block's place.
type Compress func(b *circuit.Builder, h, m []circuit.Word, blk Block) []circuit.Word

// Chain builds the input "msg" of m.Bytes·8 bits, cuts it into blocks
// padded with constant zero bytes, reads each block as little-endian
// words and chains compress over each chunk's blocks, from the IV as
// constant words (made once a chunk), in scopes "block k" (with chunks,
// "chunk c/block k"). It returns each chunk's last chaining value, or
// ctx's error between blocks.
func (md Mode) Chain(ctx context.Context, b *circuit.Builder, m Message, iv []uint64, compress Compress) ([][]circuit.Word, error) {
	msg := b.Input("msg", 8*m.Bytes)
	var cvs [][]circuit.Word
	var h []circuit.Word
	for _, blk := range md.Blocks(m) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		scope := "block " + strconv.Itoa(blk.Index+1)
		if md.ChunkBytes > 0 {
			scope = "chunk " + strconv.Itoa(blk.Chunk+1) + "/" + scope
		}
		b.Scope(scope, func() {
			if blk.First {
				h = ConstWords(b, md.W, iv...)
			}
			bits := append(msg[8*blk.Start:8*(blk.Start+blk.Len):8*(blk.Start+blk.Len)], b.Zeros(8*(md.BlockBytes-blk.Len))...)
			h = compress(b, h, b.LittleEndianWords(bits, md.W), blk)
		})
		if blk.Last {
			cvs = append(cvs, h)
		}
	}
	return cvs, nil
}

// Parent builds a parent node of the chunk tree: its chaining value from
// its children's, root set for the tree's root.
type Parent func(b *circuit.Builder, left, right []circuit.Word, root bool) []circuit.Word

// Tree combines the chunks' chaining values as BLAKE3 does (BLAKE3 §2.1):
// the left subtree holds the largest power of two of chunks that leaves
// at least one to the right, so the tree is left-complete; each pair is
// one call of parent, in a scope "parent". One chunk is its own root: Tree
// returns it (the chunk's last compression carries the root flag, which
// its Compress sets).
func Tree(b *circuit.Builder, cvs [][]circuit.Word, parent Parent) []circuit.Word {
	var node func(cvs [][]circuit.Word, root bool) []circuit.Word
	node = func(cvs [][]circuit.Word, root bool) []circuit.Word {
		if len(cvs) == 1 {
			return cvs[0]
		}
		k := 1
		for 2*k < len(cvs) {
			k *= 2
		}
		l, r := node(cvs[:k], false), node(cvs[k:], false)
		var out []circuit.Word
		b.Scope("parent", func() { out = parent(b, l, r, root) })
		return out
	}
	return node(cvs, true)
}

// Words returns xs as the uint64 constants Chain, Input and ConstWords
// take (BLAKE2s's and BLAKE3's IV is 32-bit words).
func Words[T ~uint32 | ~uint64](xs ...T) []uint64 {
	out := make([]uint64, len(xs))
	for i, x := range xs {
		out[i] = uint64(x)
	}
	return out
}

// ConstWords returns the constants xs as w-bit constant words.
func ConstWords(b *circuit.Builder, w int, xs ...uint64) []circuit.Word {
	out := make([]circuit.Word, len(xs))
	for i, x := range xs {
		out[i] = b.ConstWord(x, w)
	}
	return out
}

// Input returns a compression's working state: the chaining value h, then
// the constants tail as words of h's width — the IV words with the
// counter and the flags XORed in (BLAKE2s: IV₄ ⊕ t₀, IV₅ ⊕ t₁, IV₆ ⊕ f₀)
// or beside them (BLAKE3: t₀, t₁, the block's length, the flags). A
// fresh slice: Round rewrites it in place.
func Input(b *circuit.Builder, h []circuit.Word, tail ...uint64) []circuit.Word {
	return append(append([]circuit.Word(nil), h...), ConstWords(b, len(h[0]), tail...)...)
}

// Fold is the XOR finalisation: word i of the result is v[i] ⊕ v[i+n] for
// n = len(v)/2, XORed with h[i] too unless h is nil (BLAKE2: h the
// chaining value the compression started from; BLAKE3: nil).
func Fold(b *circuit.Builder, v, h []circuit.Word) []circuit.Word {
	n := len(v) / 2
	out := make([]circuit.Word, n)
	b.Scope("finalise", func() {
		for i := range out {
			if h != nil {
				out[i] = b.XorWords(h[i], v[i], v[i+n])
			} else {
				out[i] = b.XorWords(v[i], v[i+n])
			}
		}
	})
	return out
}

// Rotations are G's four right rotations: (16, 12, 8, 7) for BLAKE2s and
// BLAKE3, (32, 24, 16, 63) for BLAKE2b.
type Rotations [4]int

// G mixes words a, bb, c, d of the working state v with the message words
// x and y (RFC 7693 §3.1), in place: two additions of three words, two of
// two, four XORs and rotations (wiring).
func G(b *circuit.Builder, v []circuit.Word, a, bb, c, d int, x, y circuit.Word, r Rotations) {
	v[a] = b.Add(v[a], v[bb], x)
	v[d] = circuit.RotR(b.XorWords(v[d], v[a]), r[0])
	v[c] = b.Add(v[c], v[d])
	v[bb] = circuit.RotR(b.XorWords(v[bb], v[c]), r[1])
	v[a] = b.Add(v[a], v[bb], y)
	v[d] = circuit.RotR(b.XorWords(v[d], v[a]), r[2])
	v[c] = b.Add(v[c], v[d])
	v[bb] = circuit.RotR(b.XorWords(v[bb], v[c]), r[3])
}

// Round is one round over the 4×4 working state v: G on the four columns
// with message words m[s[0]], m[s[1]] to m[s[6]], m[s[7]], then on the
// four diagonals with m[s[8]] … m[s[15]]; s is the round's message
// schedule (BLAKE2's σ, BLAKE3's permuted order).
func Round(b *circuit.Builder, v, m []circuit.Word, s [16]int, r Rotations) {
	for i, q := range [8][4]int{{0, 4, 8, 12}, {1, 5, 9, 13}, {2, 6, 10, 14}, {3, 7, 11, 15},
		{0, 5, 10, 15}, {1, 6, 11, 12}, {2, 7, 8, 13}, {3, 4, 9, 14}} {
		G(b, v, q[0], q[1], q[2], q[3], m[s[2*i]], m[s[2*i+1]], r)
	}
}

// Estimate returns the size of what Chain (and, with parent, Tree)
// builds for m with an IV of len(iv) words, without building it: one
// compression and one parent built on input words and measured, scaled by
// the blocks and the parents (sdk.BlockLinear), plus the message bits, the
// padding and the IV's constants. Every compression of a mode has the same
// size (its counter and flags are constants either way).
func (md Mode) Estimate(m Message, iv []uint64, compress Compress, parent Parent) (sdk.Size, error) {
	words := md.BlockBytes * 8 / md.W
	one := measure(len(iv)+words, md.W, func(b *circuit.Builder, in []circuit.Word) {
		compress(b, in[:len(iv)], in[len(iv):], Block{First: true, Last: true})
	})
	chunks := int64(md.Chunks(m))
	fixed := sdk.Size{Nodes: 8*int64(m.Blocks*md.BlockBytes) + chunks*int64(len(iv)*md.W)}
	total, err := sdk.BlockLinear(fixed, one, int64(m.Blocks))
	if err != nil || parent == nil || chunks == 1 {
		return total, err
	}
	p := measure(2*len(iv), md.W, func(b *circuit.Builder, in []circuit.Word) { parent(b, in[:len(iv)], in[len(iv):], false) })
	return sdk.BlockLinear(total, p, chunks-1)
}

// measure returns the size of what fn builds on n input words of w bits,
// the inputs not counted.
func measure(n, w int, fn func(b *circuit.Builder, in []circuit.Word)) sdk.Size {
	b := circuit.NewBuilder()
	in := b.LittleEndianWords(b.Input("in", n*w), w)
	fn(b, in)
	s := sdk.SizeOf(b.Circuit())
	s.Nodes -= int64(n * w)
	return s
}
