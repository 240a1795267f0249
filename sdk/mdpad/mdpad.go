// Package mdpad is Merkle–Damgård strengthening for hash construction
// plugins (MD5, SHA-1, SHA-2): the message parameters every such plugin
// declares (message_bits, blocks) resolved in one call, the padding as
// constant nodes after the message's input bits (and its bits, for a
// reference written apart from the circuit), the chain of compressions
// over the padded blocks with its feed-forward, its digest and its size
// estimate. A hash plugin writes its compression function; Chain does the
// rest (docs/writing-a-hash.md).
//
// Bit order: message bit i is bit 7 − i%8 of byte i/8 (bitvec.PackMSB), so
// a whole-byte message's bits are its bytes as the standard reads them.
package mdpad

import (
	"context"
	"fmt"
	"strconv"

	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/circuit"
)

// Padding is one Merkle–Damgård strengthening: the message, a 1 bit, zeros,
// then the message length in bits as a LengthBits-bit integer, to a whole
// number of BlockBits-bit blocks.
type Padding struct {
	BlockBits  int
	LengthBits int // 64 (MD5, SHA-1, SHA-256) or 128 (SHA-512)
	// LittleEndian writes the length's bytes least significant first
	// (MD5); otherwise most significant first (SHA-1, SHA-2).
	LittleEndian bool
}

// Blocks returns the number of blocks a message of messageBits bits pads
// to.
func (p Padding) Blocks(messageBits int) int {
	return (messageBits + 1 + p.LengthBits + p.BlockBits - 1) / p.BlockBits
}

// LongestMessage returns the length of the longest whole-byte message that
// pads to blocks blocks.
func (p Padding) LongestMessage(blocks int) int {
	n := blocks*p.BlockBits - 1 - p.LengthBits
	return n - n%8
}

// Tail returns the padding bits (0 or 1) that follow a message of
// messageBits bits, in message bit order.
func (p Padding) Tail(messageBits int) []byte {
	n := p.Blocks(messageBits)*p.BlockBits - messageBits
	out := make([]byte, n)
	out[0] = 1
	length := out[n-p.LengthBits:]
	for j := range p.LengthBits {
		// j is the bit's place in message order: byte j/8, bit 7 − j%8.
		byteIdx, bit := j/8, 7-j%8
		if !p.LittleEndian {
			byteIdx = p.LengthBits/8 - 1 - byteIdx
		}
		if sh := 8*byteIdx + bit; sh < 64 {
			length[j] = byte(uint64(messageBits)>>uint(sh)) & 1
		}
	}
	return out
}

// Pad returns the padded message: msg's nodes, then the padding as
// constant nodes (in a "padding" scope), Blocks(len(msg))·BlockBits bits.
func (p Padding) Pad(b *circuit.Builder, msg []circuit.Node) []circuit.Node {
	padded := append([]circuit.Node(nil), msg...)
	b.Scope("padding", func() {
		for _, bit := range p.Tail(len(msg)) {
			padded = append(padded, b.Const(int(bit)))
		}
	})
	return padded
}

// Params returns the two message parameters of a padded hash:
// message_bits (any length) and blocks (the longest whole-byte message of
// that many blocks), for a construction's schema. Message resolves them.
func Params() []sdk.Param {
	return []sdk.Param{
		{Name: "message_bits", Type: sdk.Int, Min: sdk.Bound(0),
			Doc: "message length in bits, any (standard padding); default the longest whole-byte message of `blocks` blocks"},
		{Name: "blocks", Type: sdk.Int, Min: sdk.Bound(1),
			Doc: "padded blocks (alternative to message_bits): the message is the longest whole-byte one that pads to this many"},
	}
}

// Message is a resolved message: its length in bits and the blocks it
// pads to.
type Message struct {
	Bits, Blocks int
}

// The largest message Message accepts (a point past them is refused
// before anything is built).
const (
	MaxBits   = 1 << 24
	MaxBlocks = 1024
)

// Message resolves the parameters Params declares: message_bits, or the
// longest whole-byte message of blocks blocks (neither: one block). Its
// errors are *sdk.ParamError blaming the parameter: both given, or a
// value past MaxBits or MaxBlocks.
func (p Padding) Message(params sdk.Params) (Message, error) {
	var m Message
	if params.Has("message_bits") && params.Has("blocks") {
		return m, params.Errorf("message_bits", "give blocks or message_bits, not both")
	}
	switch {
	case params.Has("message_bits"):
		m.Bits = params.Int("message_bits")
		if m.Bits > MaxBits {
			return m, params.Errorf("message_bits", "at most %d bits, got %d", MaxBits, m.Bits)
		}
	default:
		blocks := 1
		if params.Has("blocks") {
			blocks = params.Int("blocks")
			if blocks > MaxBlocks {
				return m, params.Errorf("blocks", "at most %d blocks, got %d", MaxBlocks, blocks)
			}
		}
		if blocks < 1 {
			return m, params.Errorf("blocks", "at least 1 block, got %d", blocks)
		}
		m.Bits = p.LongestMessage(blocks)
	}
	m.Blocks = p.Blocks(m.Bits)
	return m, nil
}

// String implements fmt.Stringer.
func (m Message) String() string { return fmt.Sprintf("%d bits, %d blocks", m.Bits, m.Blocks) }

// Compress builds one compression in b: the next chaining value from the
// chaining value h and one block's words.
type Compress func(b *circuit.Builder, h, block []circuit.Word) []circuit.Word

// words reads a block's bits as w-bit words in the padding's byte order:
// Merkle–Damgård hashes read their words in the order they write the
// length (MD5 little-endian, SHA-1 and SHA-2 big-endian).
func (p Padding) words(b *circuit.Builder, bits []circuit.Node, w int) []circuit.Word {
	if p.LittleEndian {
		return b.LittleEndianWords(bits, w)
	}
	return b.BigEndianWords(bits, w)
}

// Chain builds a Merkle–Damgård hash in b: the input "msg" of m.Bits bits,
// its padding (Pad), the IV as constant w-bit words, then compress over
// every block (in a scope "block k", the block read as words in the
// padding's byte order). It returns the last chaining value, or ctx's
// error between blocks. Digest writes the digest from it.
func (p Padding) Chain(ctx context.Context, b *circuit.Builder, m Message, iv []uint64, w int, compress Compress) ([]circuit.Word, error) {
	padded := p.Pad(b, b.Input("msg", m.Bits))
	h := make([]circuit.Word, len(iv))
	for i, x := range iv {
		h[i] = b.ConstWord(x, w)
	}
	for k := range m.Blocks {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		block := padded[k*p.BlockBits : (k+1)*p.BlockBits]
		b.Scope("block "+strconv.Itoa(k+1), func() {
			h = compress(b, h, p.words(b, block, w))
		})
	}
	return h, nil
}

// Digest returns the bits of the chaining value h in message order (the
// padding's byte order), as the standard writes the digest.
func (p Padding) Digest(h []circuit.Word) []circuit.Node {
	if p.LittleEndian {
		return circuit.LittleEndianBits(h)
	}
	return circuit.BigEndianBits(h)
}

// Estimate returns the size of what Chain builds for m with an IV of
// ivWords w-bit words, without building it: one compression built on
// input words and measured, scaled by the blocks (sdk.BlockLinear), plus
// the message and padding bits and the IV's constants.
func (p Padding) Estimate(m Message, ivWords, w int, compress Compress) (sdk.Size, error) {
	b := circuit.NewBuilder()
	nIn := (ivWords + p.BlockBits/w) * w
	compress(b, p.words(b, b.Input("h", ivWords*w), w), p.words(b, b.Input("block", p.BlockBits), w))
	one := sdk.SizeOf(b.Circuit())
	one.Nodes -= int64(nIn)
	fixed := sdk.Size{Nodes: int64(m.Blocks)*int64(p.BlockBits) + int64(ivWords*w)}
	return sdk.BlockLinear(fixed, one, int64(m.Blocks))
}

// FeedForward ends a compression (Davies–Meyer): h[i] + s[i] for each
// word, in a "feed-forward" scope. The first block's h is the IV, constant
// words the first step read long before; the layerers place a constant
// below each level that reads it (reifier) or fold it (fusion), so it is
// not carried to the end of the block.
func FeedForward(b *circuit.Builder, h, s []circuit.Word) []circuit.Word {
	out := make([]circuit.Word, len(h))
	b.Scope("feed-forward", func() {
		for i := range out {
			out[i] = b.Add(h[i], s[i])
		}
	})
	return out
}
