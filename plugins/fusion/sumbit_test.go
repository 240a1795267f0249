package fusion_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tcforge/tcforge/plugins/fusion"
	"github.com/tcforge/tcforge/plugins/reifier"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
)

// randomSumCircuit is randomCircuit with SUMBIT nodes mixed in: sums of
// up to 8 earlier nodes (constants, negations and parities among them)
// with exponents up to 9 and bits up to 10, and small word additions.
func randomSumCircuit(rng *rand.Rand, nIn, nNodes, nOut int) *circuit.Circuit {
	b := circuit.NewBuilder()
	nodes := b.Input("x", nIn)
	pick := func() circuit.Node { return nodes[rng.IntN(len(nodes))] }
	for i := 0; i < nNodes; i++ {
		var v circuit.Node
		switch rng.IntN(6) {
		case 0:
			v = b.Not(pick())
		case 1:
			v = b.Xor(pick(), pick(), pick())
		case 2:
			v = b.Threshold(2, []circuit.Node{pick(), pick(), pick()}, []int32{1, 1, 1})
		case 3:
			v = b.Const(rng.IntN(2))
		default:
			k := 1 + rng.IntN(8)
			xs := make([]circuit.Node, k)
			es := make([]int32, k)
			for j := range xs {
				xs[j], es[j] = pick(), int32(rng.IntN(10))
			}
			v = b.SumBit(rng.IntN(11), xs, es)
		}
		nodes = append(nodes, v)
	}
	if len(nodes) >= 12 { // one 4-bit addition of three words
		w := func() []circuit.Node { return []circuit.Node{pick(), pick(), pick(), pick()} }
		nodes = append(nodes, b.Add(w(), w(), w())...)
	}
	out := make([]circuit.Node, nOut)
	for i := range out {
		out[i] = nodes[len(nodes)-1-rng.IntN(min(len(nodes), 12))]
	}
	b.Output("y", out)
	return b.Circuit()
}

// TestRandomSums compiles random circuits with SUMBIT nodes with reifier
// and fusion (both objectives, with the default bound and with bounds
// that split the sums into chunks of 1 to 3 bits) and checks every
// layered circuit against the logic circuit on all inputs, and fusion
// never deeper than reifier under the same bound.
func TestRandomSums(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 4))
	for trial := 0; trial < 120; trial++ {
		nIn := 1 + rng.IntN(10)
		c := randomSumCircuit(rng, nIn, 4+rng.IntN(60), 1+rng.IntN(6))
		for _, bound := range []int64{circuit.DefaultMaxSum, 4, 40} {
			ref, err := reifier.CompileBounded(context.Background(), c, bound)
			if err != nil {
				t.Fatalf("trial %d bound %d: reifier: %v", trial, bound, err)
			}
			ls := map[string]*layered.Circuit{"reifier": ref}
			for _, opt := range []fusion.Options{{MaxSum: bound}, {Objective: fusion.Size, MaxSum: bound}, {Objective: fusion.Round, MaxSum: bound}} {
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
				t.Fatalf("trial %d bound %d failed", trial, bound)
			}
		}
	}
}

// TestSumRule checks the switching-function realisation of one sum: bit 2
// of x₀ + x₁ + 2x₂ + 4x₃ + 4x₄ (sum up to 12) is one level of
// ⌊12/4⌋ = 3 gates [S ≥ 4] − [S ≥ 8] + [S ≥ 12] in fusion, and two
// levels (3 counters and their parity) in reifier.
func TestSumRule(t *testing.T) {
	b := circuit.NewBuilder()
	x := b.Input("x", 5)
	b.Output("y", []circuit.Node{b.SumBit(2, x, []int32{0, 0, 1, 2, 2})})
	c := b.Circuit()
	f, err := fusion.Compile(context.Background(), c, fusion.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := reifier.Compile(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if f.Depth() != 2 || f.LevelWidth(1) != 3 {
		t.Errorf("fusion: depth %d, %d gates on level 1; want 2 and 3 (the 3 thresholds, then the output gate)", f.Depth(), f.LevelWidth(1))
	}
	if r.Depth() != 3 || r.LevelWidth(1) != 3 || r.LevelWidth(2) != 1 {
		t.Errorf("reifier: depth %d, widths %d, %d; want 3 (counters, parity, output copy), 3, 1", r.Depth(), r.LevelWidth(1), r.LevelWidth(2))
	}
	in := make([]uint64, 5)
	for lane := 0; lane < 32; lane++ {
		for i := range in {
			in[i] |= uint64(lane>>i&1) << lane
		}
	}
	equalOn(t, c, in, map[string]*layered.Circuit{"fusion": f, "reifier": r})
}
