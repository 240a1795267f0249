package sponge_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/sponge"
)

// toy is a 2-word sponge of 8-bit words with a one-word rate, and its
// permutation: (a, b) → (b ⊕ (a ⋘ 1), a ⊕ 0x5a), in the circuit and in
// plain Go.
var toy = sponge.Sponge{Words: 2, W: 8, RateWords: 1}

func toyPerm(b *circuit.Builder, s []circuit.Word) []circuit.Word {
	return []circuit.Word{b.XorWords(s[1], circuit.RotL(s[0], 1)), b.XorWords(s[0], b.ConstWord(0x5a, 8))}
}

func toyGo(s [2]uint8) [2]uint8 { return [2]uint8{s[1] ^ (s[0]<<1 | s[0]>>7), s[0] ^ 0x5a} }

// toySum is the toy sponge in plain Go on a message of n bits in
// SP 800-232's bit order (bit i is bit i%8 of byte i/8).
func toySum(iv uint8, msg []byte, n, outBits int) []byte {
	s := toyGo([2]uint8{iv, 0})
	for k := range n/8 + 1 {
		var m uint8
		for i := range 8 {
			if p := 8*k + i; p < n {
				m |= (msg[p/8] >> (p % 8) & 1) << i
			} else if p == n {
				m |= 1 << i
			}
		}
		s[0] ^= m
		s = toyGo(s)
	}
	out := make([]byte, (outBits+7)/8)
	for p := range outBits {
		if p > 0 && p%8 == 0 {
			s = toyGo(s)
		}
		out[p/8] |= (s[0] >> (p % 8) & 1) << (p % 8)
	}
	return out
}

// TestToySponge: Init, Absorb and Squeeze against the toy sponge in plain
// Go, for message lengths across block boundaries and partial bytes, and
// output lengths that are not whole bytes; Estimate against what they
// build.
func TestToySponge(t *testing.T) {
	for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 21} {
		for _, outBits := range []int{3, 8, 13, 24} {
			b := circuit.NewBuilder()
			m := sponge.Message{Bits: n, Blocks: n/8 + 1}
			s, err := toy.Absorb(context.Background(), b, toy.Init(b, []uint64{0x80}, toyPerm), m, toyPerm)
			if err != nil {
				t.Fatal(err)
			}
			b.Output("out", toy.Squeeze(b, s, outBits, toyPerm))
			c := b.Circuit()
			if err := c.Validate(); err != nil {
				t.Fatal(err)
			}
			if got, err := toy.Estimate(m, outBits, toyPerm); err != nil || got != sdk.SizeOf(c) {
				t.Errorf("%d bits in, %d out: estimate %+v (%v), built %+v", n, outBits, got, err, sdk.SizeOf(c))
			}
			for x := range 64 {
				msg := []byte{byte(x * 37), byte(x*101 + 3), byte(x * 7)}
				msg[n/8] &= byte(1)<<(n%8) - 1 // SP 800-232 order: a partial byte's bits at the bottom
				in := bitvec.FromPackedMSB(circuitBytes(msg, n), n)
				out, err := bitvec.EvalSliced([]bitvec.Vec{in}, n, c.Eval)
				if err != nil {
					t.Fatal(err)
				}
				if got, want := out[0].PackMSB(outBits), circuitBytes(toySum(0x80, msg, n, outBits), outBits); string(got) != string(want) {
					t.Fatalf("%d bits in (%x), %d out: circuit %x, want %x", n, msg, outBits, got, want)
				}
			}
		}
	}
}

// circuitBytes moves a partial last byte's bits from its bottom to its top
// (the circuit's order, see the package doc).
func circuitBytes(b []byte, n int) []byte {
	out := append([]byte(nil), b[:(n+7)/8]...)
	if k := n % 8; k > 0 {
		out[n/8] <<= 8 - k
	}
	return out
}

// TestPadded: a message the caller padded is absorbed as it is: the
// circuit on the padded bits equals the circuit of the unpadded message,
// and Estimate counts no padding bit.
func TestPadded(t *testing.T) {
	for _, n := range []int{0, 5, 8, 13} {
		padded := toy.Padded(n/8 + 1)
		b := circuit.NewBuilder()
		s, err := toy.Absorb(context.Background(), b, toy.Init(b, []uint64{0x80}, toyPerm), padded, toyPerm)
		if err != nil {
			t.Fatal(err)
		}
		b.Output("out", toy.Squeeze(b, s, 16, toyPerm))
		c := b.Circuit()
		if got, err := toy.Estimate(padded, 16, toyPerm); err != nil || got != sdk.SizeOf(c) {
			t.Errorf("%d bits, padded: estimate %+v (%v), built %+v", n, got, err, sdk.SizeOf(c))
		}
		msg := []byte{0x5b, 0x1d}
		msg[n/8] &= byte(1)<<(n%8) - 1
		// The caller's padding: a 1 after the message's bits, in
		// SP 800-232's order; then the circuit's byte order.
		p := append([]byte(nil), msg[:(n+7)/8]...)
		if n%8 == 0 {
			p = append(p, 1)
		} else {
			p[n/8] |= 1 << (n % 8)
		}
		in := bitvec.FromPackedMSB(p, padded.Bits)
		out, err := bitvec.EvalSliced([]bitvec.Vec{in}, padded.Bits, c.Eval)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := out[0].PackMSB(16), circuitBytes(toySum(0x80, msg, n, 16), 16); string(got) != string(want) {
			t.Errorf("%d bits padded by the caller: %x, want %x", n, got, want)
		}
	}
}

func TestMessage(t *testing.T) {
	sp := sponge.Sponge{Words: 5, W: 64, RateWords: 1}
	for _, tc := range []struct {
		values map[string]any
		want   sponge.Message
		param  string
	}{
		{map[string]any{}, sponge.Message{Bits: 56, Blocks: 1}, ""},
		{map[string]any{"message_bits": 0}, sponge.Message{Bits: 0, Blocks: 1}, ""},
		{map[string]any{"message_bits": 63}, sponge.Message{Bits: 63, Blocks: 1}, ""},
		{map[string]any{"message_bits": 64}, sponge.Message{Bits: 64, Blocks: 2}, ""},
		{map[string]any{"blocks": 3}, sponge.Message{Bits: 184, Blocks: 3}, ""},
		{map[string]any{"blocks": 3, "message_bits": 8}, sponge.Message{}, "message_bits"},
		{map[string]any{"blocks": 4097}, sponge.Message{}, "blocks"},
		{map[string]any{"message_bits": 64 * 4096}, sponge.Message{}, "message_bits"},
	} {
		p, err := sdk.NewParams(sponge.Params(), tc.values)
		if err != nil {
			t.Fatal(err)
		}
		m, err := sp.Message(p)
		if pe, ok := sdk.AsParamError(err); tc.param != "" && (!ok || pe.Param != tc.param) {
			t.Errorf("%v: %v, want parameter %q refused", tc.values, err, tc.param)
		} else if tc.param == "" && (err != nil || m != tc.want) {
			t.Errorf("%v: %v, %v; want %v", tc.values, m, err, tc.want)
		}
	}
}

// A toy sponge over a permutation of two 8-bit words with an 8-bit rate:
// Init evaluates the permutation on the IV into constants, Absorb reads
// the message ("ab", two blocks and the padding's block), Squeeze two
// bytes. The circuit's output equals the same sponge in plain Go.
func ExampleSponge_Absorb() {
	sp := sponge.Sponge{Words: 2, W: 8, RateWords: 1}
	perm := func(b *circuit.Builder, s []circuit.Word) []circuit.Word {
		return []circuit.Word{b.XorWords(s[1], circuit.RotL(s[0], 1)), b.XorWords(s[0], b.ConstWord(0x5a, 8))}
	}
	b := circuit.NewBuilder()
	m := sponge.Message{Bits: 16, Blocks: 3}
	s, _ := sp.Absorb(context.Background(), b, sp.Init(b, []uint64{0x80}, perm), m, perm)
	b.Output("digest", sp.Squeeze(b, s, 16, perm))
	c := b.Circuit()
	out, _ := bitvec.EvalSliced([]bitvec.Vec{bitvec.FromPackedMSB([]byte("ab"), 16)}, 16, c.Eval)
	fmt.Printf("%x\n", out[0].PackMSB(16))

	p := func(s [2]uint8) [2]uint8 { return [2]uint8{s[1] ^ (s[0]<<1 | s[0]>>7), s[0] ^ 0x5a} }
	st := p([2]uint8{0x80, 0})
	for _, x := range []uint8{'a', 'b', 0x01} { // the message bytes, then pad10*: a 1 in bit 0
		st[0] ^= x
		st = p(st)
	}
	d0 := st[0]
	st = p(st)
	fmt.Printf("%02x%02x\n", d0, st[0])
	// Output:
	// b5fa
	// b5fa
}
