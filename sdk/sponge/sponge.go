// Package sponge is a sponge over a permutation for hash construction
// plugins (docs/writing-a-hash.md, "Sponges: Ascon"): the message
// parameters (message_bits, blocks) resolved in one call, the initial
// state as constants (the permutation evaluated on the IV), absorbing the
// padded message into the rate with the permutation after every block,
// squeezing any number of output bits, and the size estimate. A plugin
// writes its permutation; Init, Absorb and Squeeze do the rest.
// (sdk/keccak keeps Keccak's own sponge: its lanes, rate and padding
// differ.)
//
// Byte and bit order: the rate's words are read little-endian (Ascon,
// SP 800-232), and the padding is pad10*: a 1 bit right after the message,
// then zeros to a whole number of blocks, in the standard's bit order,
// which numbers a byte's bits from the least significant (SP 800-232
// §2.1). A message of n bits is ⌊n/8⌋ bytes and, when n mod 8 = k > 0, a
// last byte of k bits (the k low bits of the standard's last byte, its
// padding bit above them). The circuit's input bits are the message's
// bytes, each most significant bit first (bitvec.PackMSB), as for every
// tcforge construction, a partial last byte as its k-bit number most
// significant bit first; output bits the same way. Whole-byte messages
// and digests are thus their bytes as the standard writes them.
package sponge

import (
	"context"
	"fmt"
	"strconv"

	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/circuit"
)

// Sponge is one sponge's shape: a state of Words words of W bits (a
// multiple of 8), of which the first RateWords are the rate.
type Sponge struct {
	Words, W, RateWords int
}

// Permutation builds the permutation of the state s (Words words, least
// significant bit first) and returns the new state.
type Permutation func(b *circuit.Builder, s []circuit.Word) []circuit.Word

// RateBits returns the rate in bits.
func (sp Sponge) RateBits() int { return sp.RateWords * sp.W }

// The largest message Message accepts, in blocks.
const MaxBlocks = 1 << 12

// Params returns the two message parameters of a sponge: message_bits
// (any length) and blocks, for a construction's schema. Message resolves
// them.
func Params() []sdk.Param {
	return []sdk.Param{
		{Name: "message_bits", Type: sdk.Int, Min: sdk.Bound(0),
			Doc: "message length in bits, any (pad10*); default the longest whole-byte message of `blocks` blocks"},
		{Name: "blocks", Type: sdk.Int, Min: sdk.Bound(1),
			Doc: "absorbed blocks (alternative to message_bits): the message is the longest whole-byte one that pads to this many"},
	}
}

// Message is a resolved message: its length in bits and the blocks it
// pads to (pad10* adds at least one bit). CallerPads says the message is
// already padded (Padded): Blocks whole blocks, absorbed as they are.
type Message struct {
	Bits, Blocks int
	CallerPads   bool
}

// Padded returns the message of blocks whole blocks that the caller has
// padded: Absorb takes its bits as they are (a byte module pads them;
// docs/export.md).
func (sp Sponge) Padded(blocks int) Message {
	return Message{Bits: blocks * sp.RateBits(), Blocks: blocks, CallerPads: true}
}

// String implements fmt.Stringer.
func (m Message) String() string { return fmt.Sprintf("%d bits, %d blocks", m.Bits, m.Blocks) }

// Message resolves the parameters Params declares: message_bits, or the
// longest whole-byte message that pads to blocks blocks (neither: one
// block). Its errors are *sdk.ParamError blaming the parameter: both
// given, or a message of more than MaxBlocks blocks.
func (sp Sponge) Message(params sdk.Params) (Message, error) {
	var m Message
	r := sp.RateBits()
	switch {
	case params.Has("message_bits") && params.Has("blocks"):
		return m, params.Errorf("message_bits", "give blocks or message_bits, not both")
	case params.Has("message_bits"):
		m.Bits = params.Int("message_bits")
		if m.Bits/r >= MaxBlocks {
			return m, params.Errorf("message_bits", "at most %d blocks (%d bits), got %d bits", MaxBlocks, MaxBlocks*r-1, m.Bits)
		}
	case params.Has("blocks"):
		n := params.Int("blocks")
		if n > MaxBlocks {
			return m, params.Errorf("blocks", "at most %d blocks, got %d", MaxBlocks, n)
		}
		m.Bits = n*r - 8
	default:
		m.Bits = r - 8
	}
	m.Blocks = m.Bits/r + 1
	return m, nil
}

// Init returns the state after the permutation of the IV's words (the
// rest zero) as constant words: the initialisation every message shares,
// computed by evaluating perm's circuit on the IV, so that a layerer gets
// constants instead of a permutation of constants.
func (sp Sponge) Init(b *circuit.Builder, iv []uint64, perm Permutation) []circuit.Word {
	scratch := circuit.NewBuilder()
	out := perm(scratch, scratch.LittleEndianWords(scratch.Input("iv", sp.Words*sp.W), sp.W))
	scratch.Output("s", circuit.LittleEndianBits(out))
	c := scratch.Circuit()
	words := make([]uint64, sp.Words)
	copy(words, iv)
	got, err := bitvec.EvalSliced([]bitvec.Vec{bitvec.FromLittleEndianWords(words, sp.W)}, len(c.Inputs), c.Eval)
	if err != nil {
		panic(fmt.Sprintf("sponge: evaluating the permutation: %v", err)) // a circuit the builder made
	}
	s := make([]circuit.Word, sp.Words)
	b.Scope("init", func() {
		for i, w := range got[0].LittleEndianWords(sp.Words, sp.W) {
			s[i] = b.ConstWord(w, sp.W)
		}
	})
	return s
}

// Absorb builds the input "msg" of m.Bits bits and absorbs it into s:
// each padded block XORed into the rate (a padding bit that is 1 is a NOT,
// one that is 0 nothing; none when the caller pads), then the
// permutation, in scopes "block k". It returns the state, or ctx's error
// between blocks.
func (sp Sponge) Absorb(ctx context.Context, b *circuit.Builder, s []circuit.Word, m Message, perm Permutation) ([]circuit.Word, error) {
	msg := b.Input("msg", m.Bits)
	s = append([]circuit.Word(nil), s...)
	for k := range m.Blocks {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b.Scope("block "+strconv.Itoa(k+1), func() {
			for i := range sp.RateWords {
				w := append(circuit.Word(nil), s[i]...)
				for j := range w {
					node, bit := sp.messageBit(msg, m.Bits, k*sp.RateBits()+i*sp.W+j-j%8, j%8)
					switch {
					case node >= 0:
						b.SetPos(node, j)
						b.At(j, func() { w[j] = b.Xor(w[j], node) })
					case bit == 1:
						b.At(j, func() { w[j] = b.Not(w[j]) })
					}
				}
				s[i] = w
			}
			s = perm(b, s)
		})
	}
	return s, nil
}

// messageBit returns what the padded message holds at bit c (from the
// least significant) of the byte that starts at bit offset byteStart of
// the padded stream: a message node, or no node (−1) and the padding's
// constant bit.
func (sp Sponge) messageBit(msg []circuit.Node, n, byteStart, c int) (circuit.Node, int) {
	q, whole, k := byteStart/8, n/8, n%8
	switch {
	case q < whole:
		return msg[8*q+7-c], 0
	case q > whole:
		return -1, 0
	case c < k: // the partial last byte: its k bits, most significant first
		return msg[8*q+k-1-c], 0
	case c == k:
		return -1, 1
	}
	return -1, 0
}

// Squeeze returns n output bits from s: the rate, then the permutation and
// the rate again as long as more are needed (in scopes "squeeze k"), in
// message order (see the package doc; a partial last byte is its low
// bits).
func (sp Sponge) Squeeze(b *circuit.Builder, s []circuit.Word, n int, perm Permutation) []circuit.Node {
	var out []circuit.Node
	for k := 0; len(out) < n; k++ {
		if k > 0 {
			b.Scope("squeeze "+strconv.Itoa(k), func() { s = perm(b, s) })
		}
		out = append(out, circuit.LittleEndianBits(s[:sp.RateWords])...)
	}
	whole, rest := n/8, n%8
	if rest == 0 {
		return out[:8*whole]
	}
	return append(out[:8*whole:8*whole], out[8*whole+8-rest:8*whole+8]...)
}

// Permutations returns the permutations that absorbing m and squeezing
// outBits bits take (Init's not counted).
func (sp Sponge) Permutations(m Message, outBits int) int {
	return m.Blocks + (outBits+sp.RateBits()-1)/sp.RateBits() - 1
}

// Estimate returns the size of what Init, Absorb and Squeeze build for m
// and outBits output bits, without building it: one permutation built on
// input words and measured, scaled by Permutations (sdk.BlockLinear),
// plus the message bits, a XOR a message bit, the padding bit's NOT and
// Init's constants.
func (sp Sponge) Estimate(m Message, outBits int, perm Permutation) (sdk.Size, error) {
	b := circuit.NewBuilder()
	n := sp.Words * sp.W
	perm(b, b.LittleEndianWords(b.Input("s", n), sp.W))
	one := sdk.SizeOf(b.Circuit())
	one.Nodes -= int64(n)
	pad := int64(1) // the padding bit's NOT
	if m.CallerPads {
		pad = 0
	}
	fixed := sdk.Size{Nodes: 2*int64(m.Bits) + pad + int64(n), Edges: 2*int64(m.Bits) + pad}
	return sdk.BlockLinear(fixed, one, int64(sp.Permutations(m, outBits)))
}
