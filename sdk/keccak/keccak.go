// Package keccak builds the Keccak-p permutation and sponge pieces as logic
// circuits, for any construction plugin to compose (the keccak sponge, the
// Merkle–Damgård chain, the Merkle tree all build on these).
//
// State bits are flattened as in FIPS 202 and the paper:
// s[w(5y+x)+z] = a[x][y][z], b = 25w.
//
// Every node built here carries a position hint (circuit.Builder.At): the
// slice z of the state bit it computes (state bit i is in slice i mod w).
// Bits loaded or absorbed into the state that have no hint yet (message
// inputs, padding constants) get the slice they land in.
//
// The independent lane-arithmetic reference lives in package keccakref; the
// two share no code, so that one checks the other.
package keccak

import (
	"fmt"

	"github.com/tcforge/tcforge/sdk/circuit"
)

// MaxLogW is the largest lane-size exponent (w = 64, Keccak-f[1600]).
const MaxLogW = 6

// Perm is a Keccak-p[25w, Rounds] permutation, w = 2^LogW.
type Perm struct {
	LogW   int
	Rounds int
}

// W returns the lane size w.
func (p Perm) W() int { return 1 << p.LogW }

// B returns the state size 25w.
func (p Perm) B() int { return 25 * p.W() }

// DefaultRounds returns the standard round count 12 + 2·log w.
func DefaultRounds(logW int) int { return 12 + 2*logW }

// Validate rejects impossible parameters with the reason.
func (p Perm) Validate() error {
	if p.LogW < 0 || p.LogW > MaxLogW {
		return fmt.Errorf("log_w must be in 0..%d (w a power of two up to 64), got %d", MaxLogW, p.LogW)
	}
	if p.Rounds < 1 {
		return fmt.Errorf("rounds must be at least 1, got %d", p.Rounds)
	}
	return nil
}

// rcBit is bit t of the Keccak LFSR x^8+x^6+x^5+x^4+1 output sequence,
// t taken mod 255.
func rcBit(t int) uint64 {
	t = ((t % 255) + 255) % 255
	r := uint8(1)
	for i := 0; i < t; i++ {
		hi := r & 0x80
		r <<= 1
		if hi != 0 {
			r ^= 0x71
		}
	}
	return uint64(r & 1)
}

// RoundConstants returns the w-bit round constants the permutation uses,
// one per round: Keccak-p[25w, n] runs the last n of the 12+2ℓ standard
// round indices (12+2ℓ−n … 12+2ℓ−1), indices below zero wrapping mod 255 in
// the LFSR; bit 2^j−1 of round ir's constant is rc[j+7·ir], j = 0..ℓ.
func (p Perm) RoundConstants() []uint64 {
	out := make([]uint64, p.Rounds)
	first := DefaultRounds(p.LogW) - p.Rounds
	for i := range out {
		ir := first + i
		var c uint64
		for j := 0; j <= p.LogW; j++ {
			c |= rcBit(j+7*ir) << uint((1<<j)-1)
		}
		out[i] = c
	}
	return out
}

// ZeroConstantRounds counts the rounds whose w-bit round constant is zero
// (the paper's compiler emits no ι level for them).
func (p Perm) ZeroConstantRounds() int {
	n := 0
	for _, c := range p.RoundConstants() {
		if c == 0 {
			n++
		}
	}
	return n
}

// rhoOffsets returns ρ's rotation offset of lane (x, y), index x+5y.
func rhoOffsets() [25]int {
	var off [25]int
	x, y := 1, 0
	for t := 0; t < 24; t++ {
		off[x+5*y] = (t + 1) * (t + 2) / 2
		x, y = y, (2*x+3*y)%5
	}
	return off
}

// Slice returns the slice z of state bit i: i mod w.
func (p Perm) Slice(i int) int { return i & (p.W() - 1) }

// Apply appends the permutation to b and returns the new state. Each round
// is scoped "round i" with steps "theta", "chi" and "iota" (ρ and π are
// wiring only); every node is hinted with the slice z of its bit.
func (p Perm) Apply(b *circuit.Builder, s []circuit.Node) []circuit.Node {
	w, n := p.W(), p.B()
	if len(s) != n {
		panic(fmt.Sprintf("keccak: state has %d bits, want %d", len(s), n))
	}
	idx := func(x, y, z int) int { return w*(5*(y%5)+x%5) + ((z%w)+w)%w }
	rho := rhoOffsets()
	rcs := p.RoundConstants()
	a := append([]circuit.Node(nil), s...)
	for r := 0; r < p.Rounds; r++ {
		b.Scope(fmt.Sprintf("round %d", r+1), func() {
			// θ: each bit xors itself with columns x−1 (at z) and x+1 (at z−1).
			t := make([]circuit.Node, n)
			b.Scope("theta", func() {
				for y := 0; y < 5; y++ {
					for x := 0; x < 5; x++ {
						for z := 0; z < w; z++ {
							ops := make([]circuit.Node, 0, 11)
							ops = append(ops, a[idx(x, y, z)])
							for yy := 0; yy < 5; yy++ {
								ops = append(ops, a[idx(x+4, yy, z)])
							}
							for yy := 0; yy < 5; yy++ {
								ops = append(ops, a[idx(x+1, yy, z-1)])
							}
							b.At(z, func() { t[idx(x, y, z)] = b.Xor(ops...) })
						}
					}
				}
			})
			// ρ and π: B[y][2x+3y] = rot(A[x][y], r[x][y]).
			bb := make([]circuit.Node, n)
			for y := 0; y < 5; y++ {
				for x := 0; x < 5; x++ {
					off := rho[x+5*y]
					for z := 0; z < w; z++ {
						bb[idx(y, 2*x+3*y, z)] = t[idx(x, y, z-off)]
					}
				}
			}
			// χ: a[x] ⊕ (¬a[x+1] ∧ a[x+2]).
			b.Scope("chi", func() {
				for y := 0; y < 5; y++ {
					for x := 0; x < 5; x++ {
						for z := 0; z < w; z++ {
							b.At(z, func() {
								inhib := b.AndNot(bb[idx(x+1, y, z)], bb[idx(x+2, y, z)])
								a[idx(x, y, z)] = b.Xor(bb[idx(x, y, z)], inhib)
							})
						}
					}
				}
			})
			// ι: xor the round constant into lane (0, 0). As the paper's
			// compiler does, a round with a non-zero constant is a full
			// register stage (NOT where the constant bit is 1, an explicit
			// copy elsewhere); a zero constant costs nothing.
			if rcs[r] != 0 {
				b.Scope("iota", func() {
					for i := range a {
						b.At(p.Slice(i), func() {
							if i < w && (rcs[r]>>uint(i))&1 == 1 {
								a[i] = b.Not(a[i])
							} else {
								a[i] = b.Copy(a[i])
							}
						})
					}
				})
			}
		})
	}
	return a
}

// State builds a fresh Keccak state from bits: explicit registers (copies)
// of bits in s[0:len(bits)], constant zeros for the rest. This is the
// paper's "state-building" level.
func (p Perm) State(b *circuit.Builder, bits []circuit.Node) []circuit.Node {
	n := p.B()
	if len(bits) > n {
		panic(fmt.Sprintf("keccak: %d bits do not fit a %d-bit state", len(bits), n))
	}
	s := make([]circuit.Node, n)
	b.Scope("state", func() {
		for i, x := range bits {
			hintFree(b, x, p.Slice(i))
			b.At(p.Slice(i), func() { s[i] = b.Copy(x) })
		}
		for i := len(bits); i < n; i++ {
			b.At(p.Slice(i), func() { s[i] = b.Const(0) })
		}
	})
	return s
}

// hintFree gives node x the hint z if it has none yet.
func hintFree(b *circuit.Builder, x circuit.Node, z int) {
	if b.PosOf(x) == circuit.NoPos {
		b.SetPos(x, z)
	}
}

// ZeroState returns an all-zero state of constants.
func (p Perm) ZeroState(b *circuit.Builder) []circuit.Node {
	s := make([]circuit.Node, p.B())
	b.Scope("state", func() {
		for i := range s {
			b.At(p.Slice(i), func() { s[i] = b.Const(0) })
		}
	})
	return s
}

// Absorb xors block into the first len(block) state bits and returns the
// new state. Bit i of the result gets the position hint of s[i], and so
// does block[i] if it has none (a message bit takes the slice it lands in).
func Absorb(b *circuit.Builder, s, block []circuit.Node) []circuit.Node {
	out := append([]circuit.Node(nil), s...)
	b.Scope("absorb", func() {
		for i, m := range block {
			z := int(b.PosOf(s[i]))
			if z != circuit.NoPos {
				hintFree(b, m, z)
			}
			b.At(z, func() { out[i] = b.Xor(s[i], m) })
		}
	})
	return out
}

// Sponge absorbs blocks (each at most rate bits) into the state s,
// permuting after each, then squeezes outBits bits: the first rate bits of
// the state, permuting between squeezes only when more output is needed.
// Each block's work is scoped "block i", each squeeze "squeeze i".
func (p Perm) Sponge(b *circuit.Builder, s []circuit.Node, blocks [][]circuit.Node, rate, outBits int) []circuit.Node {
	for i, blk := range blocks {
		b.Scope(fmt.Sprintf("block %d", i+1), func() {
			s = Absorb(b, s, blk)
			s = p.Apply(b, s)
		})
	}
	out := make([]circuit.Node, 0, outBits)
	for k := 1; ; k++ {
		take := min(rate, outBits-len(out))
		out = append(out, s[:take]...)
		if len(out) >= outBits {
			return out
		}
		b.Scope(fmt.Sprintf("squeeze %d", k), func() { s = p.Apply(b, s) })
	}
}

// Pad appends the domain suffix bits and pad10*1 (as constant nodes) to msg
// so that its length is a multiple of rate, and splits it into blocks.
func Pad(b *circuit.Builder, msg []circuit.Node, suffix []uint, rate int) [][]circuit.Node {
	padded := append([]circuit.Node(nil), msg...)
	b.Scope("padding", func() {
		for _, s := range suffix {
			padded = append(padded, b.Const(int(s)))
		}
		padded = append(padded, b.Const(1))
		for (len(padded)+1)%rate != 0 {
			padded = append(padded, b.Const(0))
		}
		padded = append(padded, b.Const(1))
	})
	return circuit.Split(padded, rate)
}

// PaddedBlocks returns how many rate-bit blocks a message of msgBits bits
// occupies after the suffix and pad10*1.
func PaddedBlocks(msgBits, suffixBits, rate int) int {
	return (msgBits + suffixBits + 2 + rate - 1) / rate
}

// Load builds a fresh Keccak state as one level of registers: state bit i
// is a copy of bits[i] for i < len(bits), and a constant register for the
// rest (0) and for loaded bits whose value is known when the circuit is
// built (known[i] = 0 or 1; known[i] = −1, or a nil known, copies
// bits[i], and bits[i] is ignored where known[i] ≥ 0).
//
// A constant register is a threshold gate that reads a clock bit with
// weight 0 — [0·clock ≥ 1] = 0, [0·clock ≥ 0] = 1 — so that it sits in the
// same level as the copies. The clock is the first loaded bit that is not
// known: callers put a bit of the latest level first. If every loaded bit
// is known, the registers are plain constant nodes.
//
// Why not State's constant nodes: a constant has no inputs, so a layerer
// may schedule it anywhere, and with it every θ column sum that reads only
// constants. When the state is built above level 1 (a Merkle–Damgård
// block, a Merkle tree node), an as-soon-as-possible layerer computes those
// sums early and carries them across the levels in between. The paper's MD
// and Merkle circuits show no such thing — every level of each f has f's
// full width, and the state-building level is 25w wide — so the zeros of
// its state-building level were registers of that level, as here.
func (p Perm) Load(b *circuit.Builder, bits []circuit.Node, known []int8) []circuit.Node {
	n := p.B()
	if len(bits) > n {
		panic(fmt.Sprintf("keccak: cannot load %d bits into a %d-bit state", len(bits), n))
	}
	if known != nil && len(known) != len(bits) {
		panic(fmt.Sprintf("keccak: %d known flags for %d loaded bits", len(known), len(bits)))
	}
	isKnown := func(i int) bool { return known != nil && known[i] >= 0 }
	clock := circuit.Node(-1)
	for i := range bits {
		if !isKnown(i) {
			clock = bits[i]
			break
		}
	}
	constant := func(v int8) circuit.Node {
		if clock < 0 {
			return b.Const(int(v))
		}
		return b.Threshold(int32(1-v), []circuit.Node{clock}, []int32{0})
	}
	s := make([]circuit.Node, n)
	b.Scope("state", func() {
		for i, x := range bits {
			hintFree(b, x, p.Slice(i))
			b.At(p.Slice(i), func() {
				if isKnown(i) {
					s[i] = constant(known[i] & 1)
				} else {
					s[i] = b.Copy(x)
				}
			})
		}
		for i := len(bits); i < n; i++ {
			b.At(p.Slice(i), func() { s[i] = constant(0) })
		}
	})
	return s
}

// Compress appends the compression function c(x) = first outBits bits of
// f(Load(x)) used by the Merkle–Damgård chain and the Merkle tree: the
// state-building level (see Load for bits and known), the permutation, and
// a truncation to outBits bits (wiring only).
func (p Perm) Compress(b *circuit.Builder, bits []circuit.Node, known []int8, outBits int) []circuit.Node {
	if outBits < 0 || outBits > p.B() {
		panic(fmt.Sprintf("keccak: cannot take %d output bits of a %d-bit state", outBits, p.B()))
	}
	return p.Apply(b, p.Load(b, bits, known))[:outBits]
}
