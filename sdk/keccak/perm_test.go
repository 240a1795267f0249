package keccak_test

import (
	"crypto/sha3"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/keccak"
	"github.com/tcforge/tcforge/sdk/keccak/keccakref"
)

// evalSamples evaluates c on samples (one byte per bit, each of c's input
// width) and returns the outputs, one byte per bit.
func evalSamples(t *testing.T, c *circuit.Circuit, samples [][]byte) [][]byte {
	t.Helper()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	in := make([]bitvec.Vec, len(samples))
	for s, x := range samples {
		in[s] = bitvec.FromBytes(x)
	}
	out, err := bitvec.EvalSliced(in, len(c.Inputs), c.Eval)
	if err != nil {
		t.Fatal(err)
	}
	res := make([][]byte, len(out))
	for s, v := range out {
		res[s] = v.Bytes(len(c.Outputs))
	}
	return res
}

// randomBits returns n random bits, one byte per bit.
func randomBits(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.IntN(2))
	}
	return b
}

// firstDiff returns the index of the first differing bit, or -1.
func firstDiff(a, b []byte) int {
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

// TestApplyMatchesReference checks the circuit of Perm.Apply against
// keccakref's permutation on random states, for every lane size and round
// counts below, at and above the standard 12+2ℓ (extra rounds use negative
// round indices).
func TestApplyMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for logW := 0; logW <= keccak.MaxLogW; logW++ {
		def := keccak.DefaultRounds(logW)
		for _, rounds := range []int{1, 2, 5, def, def + 3} {
			if logW == keccak.MaxLogW && rounds > def {
				continue // keep the test fast: the largest circuit once
			}
			t.Run(fmt.Sprintf("w=%d/rounds=%d", 1<<logW, rounds), func(t *testing.T) {
				p := keccak.Perm{LogW: logW, Rounds: rounds}
				if err := p.Validate(); err != nil {
					t.Fatal(err)
				}
				b := circuit.NewBuilder()
				in := b.Input("state", p.B())
				b.Output("state", p.Apply(b, in))
				c := b.Circuit()
				samples := make([][]byte, 70) // more than one batch of 64
				for s := range samples {
					samples[s] = randomBits(rng, p.B())
				}
				samples[0] = make([]byte, p.B()) // the zero state
				got := evalSamples(t, c, samples)
				ref := keccakref.Params{LogW: logW, Rounds: rounds}
				for s, x := range samples {
					st := ref.FromBits(x)
					ref.Permute(&st)
					want := ref.ToBits(st)
					if i := firstDiff(got[s], want); i >= 0 {
						t.Fatalf("sample %d: bit %d = %d, want %d", s, i, got[s][i], want[i])
					}
				}
			})
		}
	}
}

// TestApplyStructure checks the shape of one round: θ is one 11-ary XOR
// per bit, χ one ANDNOT and one XOR per bit, ι a register stage only in
// rounds with a non-zero constant; and the provenance tags.
func TestApplyStructure(t *testing.T) {
	for logW := 0; logW <= 3; logW++ {
		p := keccak.Perm{LogW: logW, Rounds: keccak.DefaultRounds(logW)}
		b := circuit.NewBuilder()
		b.Output("s", p.Apply(b, b.Input("s", p.B())))
		c := b.Circuit()
		s := c.Stats()
		n, rounds := p.B(), p.Rounds
		iotaRounds := rounds - p.ZeroConstantRounds()
		if got, want := s.ByOp[circuit.OpXor], 2*n*rounds; got != want {
			t.Errorf("w=%d: %d XORs, want %d", p.W(), got, want)
		}
		if got, want := s.ByOp[circuit.OpAndNot], n*rounds; got != want {
			t.Errorf("w=%d: %d ANDNOTs, want %d", p.W(), got, want)
		}
		if got, want := s.ByOp[circuit.OpNot]+s.ByOp[circuit.OpOr], n*iotaRounds; got != want {
			t.Errorf("w=%d: %d ι registers, want %d", p.W(), got, want)
		}
		if got, want := s.Depth, 3*rounds+iotaRounds; got != want {
			t.Errorf("w=%d: depth %d, want %d", p.W(), got, want)
		}
		tags := map[string]int{}
		for i := range c.Ops {
			if c.Ops[i] != circuit.OpInput {
				tags[c.Tags[c.Tag[i]]]++
			}
		}
		if got := tags["round 1/theta"]; got != n {
			t.Errorf("w=%d: %d nodes tagged round 1/theta, want %d", p.W(), got, n)
		}
		if got := tags[fmt.Sprintf("round %d/chi", rounds)]; got != 2*n {
			t.Errorf("w=%d: %d nodes tagged round %d/chi, want %d", p.W(), got, rounds, 2*n)
		}
		for tag := range tags {
			if !strings.HasPrefix(tag, "round ") {
				t.Errorf("w=%d: node tagged %q outside any round", p.W(), tag)
			}
		}
	}
}

// TestRoundConstants checks Perm.RoundConstants and ZeroConstantRounds
// against keccakref's independent LFSR, including negative round indices.
func TestRoundConstants(t *testing.T) {
	for logW := 0; logW <= keccak.MaxLogW; logW++ {
		for _, rounds := range []int{1, 7, keccak.DefaultRounds(logW), keccak.DefaultRounds(logW) + 40} {
			p := keccak.Perm{LogW: logW, Rounds: rounds}
			got := p.RoundConstants()
			idx := keccakref.RoundIndices(logW, rounds)
			for i, ir := range idx {
				if want := keccakref.RoundConstant(logW, ir); got[i] != want {
					t.Errorf("w=%d rounds=%d: constant %d (index %d) = %#x, want %#x", p.W(), rounds, i, ir, got[i], want)
				}
			}
			if got, want := p.ZeroConstantRounds(), keccakref.ZeroConstantRounds(logW, rounds); got != want {
				t.Errorf("w=%d rounds=%d: %d zero-constant rounds, want %d", p.W(), rounds, got, want)
			}
		}
	}
	// Keccak-f[1600]'s first and last round constants (FIPS 202).
	rc := keccak.Perm{LogW: 6, Rounds: 24}.RoundConstants()
	if rc[0] != 0x0000000000000001 || rc[23] != 0x8000000080008008 {
		t.Errorf("Keccak-f[1600] constants %#x … %#x", rc[0], rc[23])
	}
}

func TestPermParams(t *testing.T) {
	for logW, want := range []struct{ w, b, rounds int }{{1, 25, 12}, {2, 50, 14}, {4, 100, 16}, {8, 200, 18}, {16, 400, 20}, {32, 800, 22}, {64, 1600, 24}} {
		p := keccak.Perm{LogW: logW, Rounds: 1}
		if p.W() != want.w || p.B() != want.b || keccak.DefaultRounds(logW) != want.rounds {
			t.Errorf("log_w=%d: w=%d b=%d rounds=%d, want %+v", logW, p.W(), p.B(), keccak.DefaultRounds(logW), want)
		}
	}
	for _, tc := range []struct {
		p    keccak.Perm
		want string
	}{
		{keccak.Perm{LogW: -1, Rounds: 1}, "log_w"},
		{keccak.Perm{LogW: 7, Rounds: 1}, "log_w"},
		{keccak.Perm{LogW: 2, Rounds: 0}, "rounds"},
	} {
		if err := tc.p.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v", tc.p, err)
		}
	}
}

// TestPadMatchesReference checks the circuit of Pad (constants appended to
// the message, split into blocks) against keccakref.Pad10Star1, for message
// lengths around every block boundary, and PaddedBlocks.
func TestPadMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	for _, rate := range []int{1, 2, 3, 8, 18} {
		for _, suffix := range [][]byte{nil, {0, 1}, {1, 1, 1, 1}} {
			for msgBits := 0; msgBits <= 2*rate+3; msgBits++ {
				b := circuit.NewBuilder()
				msg := b.Input("msg", msgBits)
				su := make([]uint, len(suffix))
				for i, x := range suffix {
					su[i] = uint(x)
				}
				blocks := keccak.Pad(b, msg, su, rate)
				var flat []circuit.Node
				for i, blk := range blocks {
					if len(blk) != rate {
						t.Fatalf("rate %d, %d bits: block %d has %d bits", rate, msgBits, i, len(blk))
					}
					flat = append(flat, blk...)
				}
				if got, want := len(blocks), keccak.PaddedBlocks(msgBits, len(suffix), rate); got != want {
					t.Errorf("rate %d, suffix %v, %d bits: %d blocks, PaddedBlocks says %d", rate, suffix, msgBits, got, want)
				}
				b.Output("padded", flat)
				c := b.Circuit()
				samples := [][]byte{randomBits(rng, msgBits), randomBits(rng, msgBits)}
				got := evalSamples(t, c, samples)
				for s, x := range samples {
					want := keccakref.Pad10Star1(x, suffix, rate)
					if i := firstDiff(got[s], want); i >= 0 {
						t.Fatalf("rate %d, suffix %v, %d bits: padded %v, want %v", rate, suffix, msgBits, got[s], want)
					}
				}
			}
		}
	}
}

// TestSpongeMatchesReference checks Pad + Sponge circuits against
// keccakref's sponge for a few configurations, including outputs longer
// than the rate (extra squeezes) and messages of several blocks.
func TestSpongeMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	for _, tc := range []struct {
		logW, rounds, rate, msgBits, outBits int
		suffix                               []byte
	}{
		{0, 2, 10, 0, 25, nil},                    // empty message, 3 squeezes
		{1, 3, 18, 40, 16, []byte{1, 1, 1, 1}},    // SHAKE-like suffix, 3 blocks
		{2, 14, 40, 70, 100, []byte{0, 1}},        // SHA-3 suffix, 2 blocks, 3 squeezes
		{3, 5, 144, 143, 200, []byte{0, 1}},       // suffix spills into a second block
		{4, 16, 392, 1000, 8, nil},                // several blocks, short output
		{2, 1, 99, 96, 99, []byte{1, 1, 1, 1}},    // rate of all but one bit
		{5, 2, 576, 10, 1152, []byte{1, 1, 1, 1}}, // two rate-sized outputs at w=32
	} {
		t.Run(fmt.Sprintf("w=%d/rounds=%d/rate=%d/msg=%d/out=%d", 1<<tc.logW, tc.rounds, tc.rate, tc.msgBits, tc.outBits), func(t *testing.T) {
			p := keccak.Perm{LogW: tc.logW, Rounds: tc.rounds}
			b := circuit.NewBuilder()
			msg := b.Input("msg", tc.msgBits)
			su := make([]uint, len(tc.suffix))
			for i, x := range tc.suffix {
				su[i] = uint(x)
			}
			blocks := keccak.Pad(b, msg, su, tc.rate)
			b.Output("digest", p.Sponge(b, p.ZeroState(b), blocks, tc.rate, tc.outBits))
			c := b.Circuit()
			if len(c.Outputs) != tc.outBits {
				t.Fatalf("%d output bits, want %d", len(c.Outputs), tc.outBits)
			}
			samples := make([][]byte, 65)
			for s := range samples {
				samples[s] = randomBits(rng, tc.msgBits)
			}
			got := evalSamples(t, c, samples)
			ref := keccakref.Params{LogW: tc.logW, Rounds: tc.rounds}
			for s, x := range samples {
				want := keccakref.Hash(ref, tc.rate, tc.suffix, x, tc.outBits)
				if i := firstDiff(got[s], want); i >= 0 {
					t.Fatalf("sample %d: bit %d = %d, want %d", s, i, got[s][i], want[i])
				}
			}
		})
	}
}

// TestSpongeState checks Sponge on a State-built (copied) initial state
// and Absorb of a block shorter than the rate, against keccakref.Sponge
// on the same bits.
func TestSpongeState(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 28))
	p := keccak.Perm{LogW: 1, Rounds: 4}
	const rate, capBits = 30, 20
	b := circuit.NewBuilder()
	init := b.Input("init", rate)     // the rate part of the initial state
	short := b.Input("block", rate-7) // a short block: the rest of the rate is absorbed as zeros
	s := p.State(b, init)             // capacity bits are constant zeros
	out := p.Sponge(b, s, [][]circuit.Node{short}, rate, 2*rate+5)
	b.Output("out", out)
	c := b.Circuit()
	samples := make([][]byte, 20)
	for i := range samples {
		samples[i] = randomBits(rng, 2*rate-7)
	}
	got := evalSamples(t, c, samples)
	ref := keccakref.Params{LogW: 1, Rounds: 4}
	for i, x := range samples {
		// keccakref.Sponge starts from zero: absorb the initial rate bits
		// first, unpermuted, by hand.
		st := make([]byte, rate+capBits)
		copy(st, x[:rate])
		for k, m := range x[rate:] {
			st[k] ^= m
		}
		state := ref.FromBits(st)
		ref.Permute(&state)
		var want []byte
		for {
			bitsNow := ref.ToBits(state)
			want = append(want, bitsNow[:min(rate, 2*rate+5-len(want))]...)
			if len(want) == 2*rate+5 {
				break
			}
			ref.Permute(&state)
		}
		if j := firstDiff(got[i], want); j >= 0 {
			t.Fatalf("sample %d: bit %d = %d, want %d", i, j, got[i][j], want[j])
		}
	}
}

// TestSHA3_256Circuit checks the full SHA3-256 circuit (w = 64, 24 rounds,
// one block) against crypto/sha3.
func TestSHA3_256Circuit(t *testing.T) {
	p := keccak.Perm{LogW: 6, Rounds: 24}
	const rate = 1088
	rng := rand.New(rand.NewPCG(29, 30))
	for _, msgBytes := range []int{0, 3, 135} {
		b := circuit.NewBuilder()
		msg := b.Input("msg", 8*msgBytes)
		blocks := keccak.Pad(b, msg, []uint{0, 1}, rate)
		b.Output("digest", p.Sponge(b, p.ZeroState(b), blocks, rate, 256))
		c := b.Circuit()
		msgs := make([][]byte, 3)
		samples := make([][]byte, len(msgs))
		for s := range msgs {
			msgs[s] = make([]byte, msgBytes)
			for i := range msgs[s] {
				msgs[s][i] = byte(rng.Uint32())
			}
			samples[s] = keccakref.BytesToBits(msgs[s])
		}
		got := evalSamples(t, c, samples)
		for s, m := range msgs {
			want := sha3.Sum256(m)
			if digest := keccakref.BitsToBytes(got[s]); string(digest) != string(want[:]) {
				t.Errorf("SHA3-256 of %d bytes: circuit %x, crypto/sha3 %x", msgBytes, digest, want)
			}
		}
	}
}

// TestApplyPanics checks that a state of the wrong size is refused.
func TestApplyPanics(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "state has") {
			t.Errorf("recover() = %v", r)
		}
	}()
	b := circuit.NewBuilder()
	keccak.Perm{LogW: 1, Rounds: 1}.Apply(b, b.Input("s", 49))
}
