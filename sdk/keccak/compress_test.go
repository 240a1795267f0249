package keccak_test

import (
	"math/rand/v2"
	"testing"

	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/keccak"
	"github.com/tcforge/tcforge/sdk/keccak/keccakref"
)

// TestCompressMatchesReference checks Perm.Compress, with some loaded bits
// known constants, against keccakref's Compress on random inputs.
func TestCompressMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct{ logW, rounds, load, out int }{
		{0, 1, 25, 25}, {1, 2, 12, 8}, {2, 13, 40, 100}, {3, 3, 7, 64}, {6, 24, 1088, 256},
	} {
		p := keccak.Perm{LogW: tc.logW, Rounds: tc.rounds}
		known := make([]int8, tc.load)
		for i := range known {
			known[i] = int8(rng.IntN(3)) - 1 // −1 (input), 0 or 1
		}
		known[0] = -1
		b := circuit.NewBuilder()
		in := b.Input("x", tc.load)
		b.Output("y", p.Compress(b, in, known, tc.out))
		c := b.Circuit()
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
		samples := bitvec.Random(rng, 64, tc.load)
		words, err := c.Eval(bitvec.Slice(samples, tc.load))
		if err != nil {
			t.Fatal(err)
		}
		got := bitvec.Unslice(words, 64)
		ref := keccakref.Params{LogW: tc.logW, Rounds: tc.rounds}
		for s, v := range samples {
			x := v.Bytes(tc.load)
			for i, k := range known {
				if k >= 0 {
					x[i] = byte(k)
				}
			}
			want := ref.Compress(x, tc.out)
			for i := range want {
				if got[s].Get(i) != uint(want[i]) {
					t.Fatalf("log_w=%d rounds=%d: sample %d, bit %d = %d, want %d", tc.logW, tc.rounds, s, i, got[s].Get(i), want[i])
				}
			}
		}
	}
}

// TestLoadRegisters checks Load's state-building level: copies of the
// loaded bits, constant registers clocked by the first unknown bit, and
// plain constants when every bit is known.
func TestLoadRegisters(t *testing.T) {
	p := keccak.Perm{LogW: 1, Rounds: 1}
	b := circuit.NewBuilder()
	in := b.Input("x", 3)
	s := p.Load(b, in, []int8{1, -1, -1})
	all := p.Load(b, in[:2], []int8{0, 1})
	c := b.Circuit()
	check := func(name string, n circuit.Node, op circuit.Op, theta int32, args []circuit.Node, weights []int32) {
		t.Helper()
		a, w := c.Operands(n)
		if c.Ops[n] != op || c.Param[n] != theta || len(a) != len(args) {
			t.Fatalf("%s: %s θ=%d args %v, want %s θ=%d args %v", name, c.Ops[n], c.Param[n], a, op, theta, args)
		}
		for i := range a {
			if a[i] != args[i] || (weights != nil && w[i] != weights[i]) {
				t.Fatalf("%s: args %v weights %v, want %v %v", name, a, w, args, weights)
			}
		}
	}
	if len(s) != 50 || len(all) != 50 {
		t.Fatalf("states of %d and %d bits, want 50", len(s), len(all))
	}
	check("known 1", s[0], circuit.OpThreshold, 0, []circuit.Node{in[1]}, []int32{0})
	check("copy", s[1], circuit.OpOr, 0, []circuit.Node{in[1]}, nil)
	check("copy", s[2], circuit.OpOr, 0, []circuit.Node{in[2]}, nil)
	for i := 3; i < 50; i++ {
		check("zero", s[i], circuit.OpThreshold, 1, []circuit.Node{in[1]}, []int32{0})
	}
	check("all known: 0", all[0], circuit.OpConst, 0, nil, nil)
	check("all known: 1", all[1], circuit.OpConst, 1, nil, nil)
	check("all known: rest", all[49], circuit.OpConst, 0, nil, nil)
}
