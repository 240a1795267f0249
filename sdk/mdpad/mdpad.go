// Package mdpad is Merkle–Damgård strengthening for hash construction
// plugins (MD5, SHA-1, SHA-2): the message parameters every such plugin
// declares (message_bits, blocks) resolved in one call, the padding as
// constant nodes after the message's input bits, and the padding's bits for
// a reference written apart from the circuit.
//
// Bit order: message bit i is bit 7 − i%8 of byte i/8 (bitvec.PackMSB), so
// a whole-byte message's bits are its bytes as the standard reads them.
package mdpad

import (
	"fmt"

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
