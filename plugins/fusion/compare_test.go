package fusion_test

// These tests compare fusion with the Reifier-style backend. They import
// plugins/reifier only as a test oracle; the fusion package itself depends
// on sdk alone.

import (
	"context"
	"crypto/sha3"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tcforge/tcforge/plugins/fusion"
	"github.com/tcforge/tcforge/plugins/reifier"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/keccak"
	"github.com/tcforge/tcforge/sdk/keccak/keccakref"
	"github.com/tcforge/tcforge/sdk/layered"
)

// randomCircuit builds a random logic circuit over every op, with repeated
// and constant operands, biased towards recent nodes so that it is deep.
func randomCircuit(rng *rand.Rand, nIn, nNodes, nOut int) *circuit.Circuit {
	b := circuit.NewBuilder()
	nodes := b.Input("x", nIn)
	pick := func() circuit.Node {
		if rng.IntN(3) == 0 {
			return nodes[rng.IntN(len(nodes))]
		}
		return nodes[len(nodes)-1-rng.IntN(min(len(nodes), 6))]
	}
	args := func(n int) []circuit.Node {
		out := make([]circuit.Node, n)
		for i := range out {
			out[i] = pick()
		}
		return out
	}
	for i := 0; i < nNodes; i++ {
		var v circuit.Node
		switch rng.IntN(12) {
		case 0:
			v = b.Const(rng.IntN(2))
		case 1:
			v = b.Not(pick())
		case 2:
			v = b.And(args(1 + rng.IntN(3))...)
		case 3:
			v = b.Or(args(1 + rng.IntN(3))...)
		case 4, 5:
			v = b.Xor(args(1 + rng.IntN(4))...)
		case 6:
			v = b.AndNot(pick(), args(1+rng.IntN(2))...)
		case 7:
			xs := args(1 + rng.IntN(4))
			ws := make([]int32, len(xs))
			for k := range ws {
				ws[k] = int32(rng.IntN(7) - 3)
			}
			v = b.Threshold(int32(rng.IntN(5)-2), xs, ws)
		case 8:
			v = b.Copy(pick())
		case 9:
			v = b.Xor(pick(), b.Const(rng.IntN(2)), pick())
		case 10:
			// χ-like: a ⊕ (¬b ∧ c)
			v = b.Xor(pick(), b.AndNot(pick(), pick()))
		case 11:
			v = b.Xor(b.Xor(pick(), pick()), b.Xor(pick(), pick()))
		}
		nodes = append(nodes, v)
	}
	b.Output("y", args(nOut))
	return b.Circuit()
}

// equalOn checks that l and ref compute c on the given input words.
func equalOn(t *testing.T, c *circuit.Circuit, in []uint64, ls map[string]*layered.Circuit) {
	t.Helper()
	want, err := c.Eval(in)
	if err != nil {
		t.Fatal(err)
	}
	for name, l := range ls {
		got, err := l.Eval(in)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for j := range want {
			if got[j] != want[j] {
				t.Fatalf("%s: output %d: got %016x want %016x", name, j, got[j], want[j])
			}
		}
	}
}

// TestRandomCircuits compiles random logic circuits with both backends
// (fusion with each objective, with and without scheduling) and checks
// that all agree with the logic circuit on every input, and that fusion is
// never deeper than reifier.
func TestRandomCircuits(t *testing.T) {
	rng := rand.New(rand.NewPCG(42, 7))
	variants := []fusion.Options{
		{}, {Objective: fusion.Size}, {ASAP: true}, {Objective: fusion.Size, ASAP: true}, {Objective: fusion.Round},
	}
	fewer := 0
	defer func() { t.Logf("scheduling removed copies in %d of 600 layouts", fewer) }()
	for trial := 0; trial < 300; trial++ {
		nIn := 1 + rng.IntN(12)
		c := randomCircuit(rng, nIn, 5+rng.IntN(120), 1+rng.IntN(8))
		ref, err := reifier.Compile(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		ls := map[string]*layered.Circuit{"reifier": ref}
		for _, opt := range variants {
			l, err := fusion.Compile(context.Background(), c, opt)
			if err != nil {
				t.Fatalf("trial %d %+v: %v", trial, opt, err)
			}
			if err := l.Validate(); err != nil {
				t.Fatalf("trial %d %+v: %v", trial, opt, err)
			}
			if l.Depth() > ref.Depth() {
				t.Errorf("trial %d %+v: depth %d > reifier's %d", trial, opt, l.Depth(), ref.Depth())
			}
			ls[fmt.Sprintf("fusion%+v", opt)] = l
		}
		// Values known modulo 2 never cost a level.
		if r, d := ls[fmt.Sprintf("fusion%+v", fusion.Options{Objective: fusion.Round})].Depth(), ls[fmt.Sprintf("fusion%+v", fusion.Options{})].Depth(); r > d {
			t.Errorf("trial %d: round objective depth %d > depth first's %d", trial, r, d)
		}
		// Scheduling never adds copies to the as-soon-as-possible layout.
		for _, obj := range []fusion.Objective{fusion.Depth, fusion.Size} {
			sched := ls[fmt.Sprintf("fusion%+v", fusion.Options{Objective: obj})].Stats()
			asap := ls[fmt.Sprintf("fusion%+v", fusion.Options{Objective: obj, ASAP: true})].Stats()
			if sched.Copies > asap.Copies || sched.Depth != asap.Depth {
				t.Errorf("trial %d %s: scheduled %d copies depth %d, as soon as possible %d copies depth %d", trial, obj, sched.Copies, sched.Depth, asap.Copies, asap.Depth)
			}
			if sched.Copies < asap.Copies {
				fewer++
			}
		}
		total := 1 << nIn
		for base := 0; base < total; base += 64 {
			in := make([]uint64, nIn)
			for lane := 0; lane < 64; lane++ {
				a := (base + lane) % total
				for i := range in {
					in[i] |= uint64((a>>i)&1) << lane
				}
			}
			equalOn(t, c, in, ls)
		}
		if t.Failed() {
			t.Fatalf("trial %d failed", trial)
		}
	}
}

// TestLargeRandomCircuits checks wider random circuits on random inputs.
func TestLargeRandomCircuits(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for trial := 0; trial < 20; trial++ {
		nIn := 20 + rng.IntN(60)
		c := randomCircuit(rng, nIn, 500+rng.IntN(2000), 1+rng.IntN(40))
		ref, err := reifier.Compile(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		ls := map[string]*layered.Circuit{}
		for _, opt := range []fusion.Options{{}, {Objective: fusion.Size}} {
			l, err := fusion.Compile(context.Background(), c, opt)
			if err != nil {
				t.Fatal(err)
			}
			if l.Depth() > ref.Depth() {
				t.Errorf("trial %d: depth %d > reifier's %d", trial, l.Depth(), ref.Depth())
			}
			ls[opt.Objective.String()] = l
		}
		for k := 0; k < 4; k++ {
			in := make([]uint64, nIn)
			for i := range in {
				in[i] = rng.Uint64()
			}
			equalOn(t, c, in, ls)
		}
	}
}

// sponge builds a Keccak sponge: the already padded message (blocks·rate
// bits) xored block by block into the zero state, rate output bits.
func sponge(logW, rounds, rate, blocks int) *circuit.Circuit {
	p := keccak.Perm{LogW: logW, Rounds: rounds}
	b := circuit.NewBuilder()
	msg := b.Input("msg", blocks*rate)
	out := p.Sponge(b, p.ZeroState(b), circuit.Split(msg, rate), rate, rate)
	b.Output("digest", out)
	return b.Circuit()
}

// sha3Circuit builds SHA3-256 on messages of msgBytes bytes.
func sha3Circuit(msgBytes int) *circuit.Circuit {
	p := keccak.Perm{LogW: 6, Rounds: 24}
	b := circuit.NewBuilder()
	msg := b.Input("msg", 8*msgBytes)
	blocks := keccak.Pad(b, msg, []uint{0, 1}, 1088)
	b.Output("digest", p.Sponge(b, p.ZeroState(b), blocks, 1088, 256))
	return b.Circuit()
}

// laneMessages draws 64 random messages of n bytes from rng and packs
// their bits (toBits: the standard's bit order) into the 64 lanes of a
// circuit's inputs words.
func laneMessages(rng *rand.Rand, n, inputs int, toBits func([]byte) []byte) ([][]byte, []uint64) {
	msgs := make([][]byte, 64)
	in := make([]uint64, inputs)
	for lane := range msgs {
		msgs[lane] = make([]byte, n)
		for i := range msgs[lane] {
			msgs[lane][i] = byte(rng.Uint32())
		}
		for i, bit := range toBits(msgs[lane]) {
			in[i] |= uint64(bit) << lane
		}
	}
	return msgs, in
}

// checkLanes checks that lane k of out holds want(msgs[k]) bit for bit
// (what names the circuit and the reference).
func checkLanes(t *testing.T, what string, out []uint64, msgs [][]byte, want func([]byte) []byte) {
	t.Helper()
	for lane, m := range msgs {
		for j, bit := range want(m) {
			if got := byte(out[j] >> lane & 1); got != bit {
				t.Fatalf("%s: message %d: digest bit %d is %d, the reference says %d", what, lane, j, got, bit)
			}
		}
	}
}

// sha3Digest is SHA3-256 of m in FIPS 202 bit order, by crypto/sha3.
func sha3Digest(m []byte) []byte {
	d := sha3.Sum256(m)
	return keccakref.BytesToBits(d[:])
}

// TestKeccakDepthLaw checks fusion's Keccak law on the paper's
// arbitrary-input points and the full lane-size range: two levels a round,
// absorbing costs no level, one output level:
// depth = 2·rounds·blocks + 1.
func TestKeccakDepthLaw(t *testing.T) {
	for _, tt := range []struct{ logW, rounds, blocks int }{
		{1, 1, 1}, {1, 1, 2}, {1, 2, 4}, {2, 2, 2}, {0, 12, 1}, {3, 18, 1}, {4, 20, 2},
	} {
		rate := 25 << tt.logW / 2
		c := sponge(tt.logW, tt.rounds, rate, tt.blocks)
		l, err := fusion.Compile(context.Background(), c, fusion.Options{})
		if err != nil {
			t.Fatal(err)
		}
		s := l.Stats()
		if want := 2*tt.rounds*tt.blocks + 1; s.Depth != want {
			t.Errorf("%+v: depth %d, want %d (widths %v)", tt, s.Depth, want, s.Widths)
		}
		rng := rand.New(rand.NewPCG(uint64(tt.logW), 1))
		in := make([]uint64, len(c.Inputs))
		for i := range in {
			in[i] = rng.Uint64()
		}
		equalOn(t, c, in, map[string]*layered.Circuit{"fusion": l})
	}
}

// TestSHA3_256 compiles full SHA3-256 (24 rounds, one block) with both
// objectives, checks the targets against reifier, and verifies 256
// random messages against crypto/sha3.
func TestSHA3_256(t *testing.T) {
	if testing.Short() {
		t.Skip("full SHA3-256")
	}
	const msgBytes = 135 // the longest message that pads to one block
	c := sha3Circuit(msgBytes)
	ref, err := reifier.Compile(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	rs := ref.Stats()
	for _, obj := range []fusion.Objective{fusion.Depth, fusion.Size} {
		l, err := fusion.Compile(context.Background(), c, fusion.Options{Objective: obj})
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Validate(); err != nil {
			t.Fatal(err)
		}
		s := l.Stats()
		t.Logf("%s: depth %d width %d gates %d copies %d edges %d forms %d nonzeros %d; reifier %d %d %d %d %d",
			obj, s.Depth, s.Width, s.Gates, s.Copies, s.Edges, s.Forms, s.Nonzeros, rs.Depth, rs.Width, rs.Gates, rs.Copies, rs.Edges)
		if s.Width > rs.Width || s.Gates >= rs.Gates || s.Depth >= rs.Depth {
			t.Errorf("%s: width %d gates %d depth %d, reifier %d %d %d", obj, s.Width, s.Gates, s.Depth, rs.Width, rs.Gates, rs.Depth)
		}
		if obj == fusion.Depth && s.Depth > 50 {
			t.Errorf("depth %d > 50", s.Depth)
		}
		// Forms: a state bit or a θ output is one form (1600 a level),
		// and a model stores far fewer entries than the flattened edges.
		if obj == fusion.Depth && (s.Forms != 1600 || s.Nonzeros > 2_000_000 || s.Edges != 11_096_632) {
			t.Errorf("depth first: %d forms, %d nonzeros, %d edges; want 1600, ≤ 2,000,000, 11,096,632", s.Forms, s.Nonzeros, s.Edges)
		}
		if obj == fusion.Size && s.Edges >= rs.Edges {
			t.Errorf("size first: %d edges, reifier %d", s.Edges, rs.Edges)
		}
		rng := rand.New(rand.NewPCG(256, uint64(obj)))
		for batch := 0; batch < 4; batch++ {
			msgs, in := laneMessages(rng, msgBytes, len(c.Inputs), keccakref.BytesToBits)
			out, err := l.Eval(in)
			if err != nil {
				t.Fatal(err)
			}
			checkLanes(t, fmt.Sprintf("%s, batch %d, against crypto/sha3", obj, batch), out, msgs, sha3Digest)
		}
	}
}

// BenchmarkFusionSHA3_256 measures compiling full SHA3-256 (one block,
// padded) with each objective.
func BenchmarkFusionSHA3_256(b *testing.B) {
	c := sha3Circuit(135)
	for _, obj := range []fusion.Objective{fusion.Depth, fusion.Size} {
		b.Run(obj.String(), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				l, err := fusion.Compile(context.Background(), c, fusion.Options{Objective: obj})
				if err != nil {
					b.Fatal(err)
				}
				if i == 0 {
					s := l.Stats()
					b.Logf("depth %d width %d gates %d copies %d edges %d", s.Depth, s.Width, s.Gates, s.Copies, s.Edges)
				}
			}
		})
	}
}

// BenchmarkReifierSHA3_256 measures the Reifier-style backend on the same
// circuit, for comparison.
func BenchmarkReifierSHA3_256(b *testing.B) {
	c := sha3Circuit(135)
	for i := 0; i < b.N; i++ {
		if _, err := reifier.Compile(context.Background(), c); err != nil {
			b.Fatal(err)
		}
	}
}
