package fusion

import (
	"context"
	"testing"

	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
)

// exhaustive checks l against c on every assignment of c's inputs (at most
// 16 of them), 64 assignments a word.
func exhaustive(t *testing.T, c *circuit.Circuit, l *layered.Circuit) {
	t.Helper()
	n := len(c.Inputs)
	if n > 16 {
		t.Fatalf("%d inputs: too many for an exhaustive check", n)
	}
	if err := l.Validate(); err != nil {
		t.Fatalf("invalid layered circuit: %v", err)
	}
	total := 1 << n
	for base := 0; base < total; base += 64 {
		in := make([]uint64, n)
		for lane := 0; lane < 64; lane++ {
			a := (base + lane) % total
			for i := 0; i < n; i++ {
				in[i] |= uint64((a>>i)&1) << lane
			}
		}
		want, err := c.Eval(in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := l.Eval(in)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%d outputs, want %d", len(got), len(want))
		}
		for j := range want {
			if got[j] != want[j] {
				t.Fatalf("output %d differs on assignments %d..%d: got %016x want %016x", j, base, base+63, got[j], want[j])
			}
		}
	}
}

// build returns a circuit with n inputs named x and the outputs fn returns.
func build(n int, fn func(b *circuit.Builder, x []circuit.Node) []circuit.Node) *circuit.Circuit {
	b := circuit.NewBuilder()
	x := b.Input("x", n)
	b.Output("y", fn(b, x))
	return b.Circuit()
}

type N = circuit.Node

// TestRules checks each rule on a small circuit: exact outputs on every
// input, and the depth, gate and copy counts the rule promises.
func TestRules(t *testing.T) {
	tests := []struct {
		name   string
		inputs int
		fn     func(b *circuit.Builder, x []N) []N
		opts   Options
		depth  int
		gates  int // copies included
		copies int
	}{
		// Rule 1: constants fold; AND with 1 is the operand, OR with 1 is 1.
		{"const-and", 1, func(b *circuit.Builder, x []N) []N { return []N{b.And(x[0], b.Const(1))} }, Options{}, 1, 1, 1},
		{"const-or", 1, func(b *circuit.Builder, x []N) []N { return []N{b.Or(x[0], b.Const(1))} }, Options{}, 1, 1, 0},
		{"const-xor-only", 0, func(b *circuit.Builder, x []N) []N { return []N{b.Xor(b.Const(1), b.Const(1)), b.Const(1)} }, Options{}, 1, 2, 0},
		{"const-threshold", 2, func(b *circuit.Builder, x []N) []N {
			// [2x0 + 3·1 − x1 ≥ 4] = [2x0 − x1 ≥ 1] = x0 ∧ ¬x1 … one gate.
			return []N{b.Threshold(4, []N{x[0], b.Const(1), x[1]}, []int32{2, 3, -1})}
		}, Options{}, 1, 1, 0},
		// Rule 2: NOT, XOR with a constant and copies are free.
		{"not-chain", 1, func(b *circuit.Builder, x []N) []N { return []N{b.Not(b.Copy(b.Not(b.Not(x[0]))))} }, Options{}, 1, 1, 0},
		{"xor-const", 1, func(b *circuit.Builder, x []N) []N { return []N{b.Xor(x[0], b.Const(1), b.Const(0))} }, Options{}, 1, 1, 0},
		// Rule 3: a threshold op is one gate; as an output it is computed
		// on the output level itself.
		{"and3", 3, func(b *circuit.Builder, x []N) []N { return []N{b.And(x[0], x[1], x[2])} }, Options{}, 1, 1, 0},
		{"andnot-of-not", 3, func(b *circuit.Builder, x []N) []N { return []N{b.AndNot(b.Not(x[0]), x[1], x[2])} }, Options{}, 1, 1, 0},
		// Rule 4: parity of n values is n counters, a linear form read by
		// the output gate.
		{"parity5", 5, func(b *circuit.Builder, x []N) []N { return []N{b.Xor(x...)} }, Options{}, 2, 6, 0},
		{"parity-negated", 3, func(b *circuit.Builder, x []N) []N { return []N{b.Not(b.Xor(x...))} }, Options{}, 2, 4, 0},
		// Rule 5: χ's a ⊕ (¬b ∧ c) is two gates of one level.
		{"chi", 3, func(b *circuit.Builder, x []N) []N { return []N{b.Xor(x[0], b.AndNot(x[1], x[2]))} }, Options{}, 2, 3, 0},
		// Rule 5: a threshold of parities; AND(x0⊕x1, x2⊕x3) is two gates.
		{"and-of-parities", 4, func(b *circuit.Builder, x []N) []N {
			return []N{b.And(b.Xor(x[0], x[1]), b.Xor(x[2], x[3]))}
		}, Options{}, 2, 3, 0},
		// Rule 5: a threshold of a threshold collapses to one gate.
		{"and-of-or", 3, func(b *circuit.Builder, x []N) []N { return []N{b.And(x[0], b.Or(x[1], x[2]))} }, Options{}, 1, 1, 0},
		// Rule 6: XORs of XORs flatten, duplicates cancel mod 2.
		{"flatten", 4, func(b *circuit.Builder, x []N) []N { return []N{b.Xor(b.Xor(x[0], x[1]), b.Xor(x[2], x[3]))} }, Options{}, 2, 5, 0},
		{"cancel", 3, func(b *circuit.Builder, x []N) []N { return []N{b.Xor(b.Xor(x[0], x[1]), b.Xor(x[1], x[2]))} }, Options{}, 2, 3, 0},
		{"cancel-to-input", 2, func(b *circuit.Builder, x []N) []N { return []N{b.Xor(b.Xor(x[0], x[1]), x[1])} }, Options{}, 1, 1, 1},
		// Rule 6 through a χ: absorbing a bit into a χ output is one
		// switching function of three switch points, not a new level.
		{"absorb", 4, func(b *circuit.Builder, x []N) []N {
			return []N{b.Xor(b.Xor(x[0], b.AndNot(x[1], x[2])), x[3])}
		}, Options{}, 2, 4, 0},
		// Rule 7: p's two-gate form (level 1) is an output on level 3: it
		// is lifted once into one gate on level 2, which the output gate
		// copies, instead of carrying both of its gates.
		{"lift", 6, func(b *circuit.Builder, x []N) []N {
			p := b.Xor(x[0], x[1])                              // level 1, two gates
			q := b.Xor(x[2], b.AndNot(x[3], x[4]))              // level 1, pending
			r := b.Xor(q, b.And(b.Xor(x[2], x[3], x[5]), x[4])) // level 2
			return []N{b.And(r, p), p}
		}, Options{}, 3, 12, 1},
		// Edge cases: no outputs; inputs as outputs, one of them twice.
		{"no-outputs", 2, func(b *circuit.Builder, x []N) []N { b.And(x[0], x[1]); return nil }, Options{}, 1, 0, 0},
		{"input-outputs", 2, func(b *circuit.Builder, x []N) []N { return []N{x[1], x[0], x[1]} }, Options{}, 1, 3, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := build(tt.inputs, tt.fn)
			l, err := Compile(context.Background(), c, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			exhaustive(t, c, l)
			s := l.Stats()
			if s.Depth != tt.depth || s.Gates != tt.gates || s.Copies != tt.copies {
				t.Errorf("depth %d gates %d copies %d (widths %v), want %d %d %d", s.Depth, s.Gates, s.Copies, s.Widths, tt.depth, tt.gates, tt.copies)
			}
		})
	}
}

// TestObjectives checks both ends of the trade-off on a parity of six
// inputs read by eight threshold gates: depth first fuses the parity into
// every reader (two levels), size first materialises it once (fewer edges).
func TestObjectives(t *testing.T) {
	c := build(14, func(b *circuit.Builder, x []N) []N {
		p := b.Xor(x[:6]...)
		var out []N
		for i := 6; i < 14; i++ {
			out = append(out, b.And(p, x[i]))
		}
		return out
	})
	stats := map[Objective]layered.Stats{}
	for _, obj := range []Objective{Depth, Size} {
		l, err := Compile(context.Background(), c, Options{Objective: obj})
		if err != nil {
			t.Fatal(err)
		}
		exhaustive(t, c, l)
		stats[obj] = l.Stats()
	}
	d, s := stats[Depth], stats[Size]
	if d.Depth != 2 || s.Depth != 3 {
		t.Errorf("depths %d (depth first) and %d (size first), want 2 and 3", d.Depth, s.Depth)
	}
	if s.Edges >= d.Edges {
		t.Errorf("size first has %d edges, depth first %d: want fewer", s.Edges, d.Edges)
	}
	t.Logf("depth first: %+v", d)
	t.Logf("size first:  %+v", s)
}

// TestSchedule checks rule 8: g = x0 ∧ x1 is read only on the last
// level, and x0, x1 are carried up there anyway, so moving g up from level
// 1 saves its copy; the outputs stay exact.
func TestSchedule(t *testing.T) {
	c := build(8, func(b *circuit.Builder, x []N) []N {
		g := b.And(x[0], x[1])
		z := b.Xor(x[2], b.AndNot(x[3], x[4])) // level 1
		z = b.And(z, x[5])                     // level 2 …
		z = b.Xor(x[6], b.AndNot(z, x[7]))     // … fused into level 2
		return []N{b.And(g, z), b.Or(g, z), b.Xor(x[0], x[1], z)}
	})
	for _, tt := range []struct {
		asap           bool
		copies, widest int
	}{{true, 6, 8}, {false, 5, 7}} {
		l, err := Compile(context.Background(), c, Options{ASAP: tt.asap})
		if err != nil {
			t.Fatal(err)
		}
		exhaustive(t, c, l)
		if s := l.Stats(); s.Depth != 3 || s.Copies != tt.copies || s.Width != tt.widest {
			t.Errorf("asap=%v: depth %d copies %d width %d, want 3 %d %d", tt.asap, s.Depth, s.Copies, s.Width, tt.copies, tt.widest)
		}
	}
}

// TestSolver checks the switching-function solver on the shapes the rules
// produce: the number of switch points and F(S) = Φ(y) on the whole box.
func TestSolver(t *testing.T) {
	chi := shape{xorRoot: true, n: 2}
	chi.kind[0], chi.lo[0], chi.hi[0] = ckPar, 0, 1
	chi.kind[1], chi.lo[1], chi.hi[1], chi.p[1] = ckThr, -1, 1, 1
	par11 := shape{xorRoot: true, n: 1}
	par11.kind[0], par11.lo[0], par11.hi[0] = ckPar, 0, 11
	andOr := shape{rootP: 2, n: 2}
	andOr.kind[0], andOr.w[0], andOr.lo[0], andOr.hi[0] = ckDirect, 1, 0, 1
	andOr.kind[1], andOr.w[1], andOr.lo[1], andOr.hi[1], andOr.p[1] = ckThr, 1, 0, 2, 1
	absorb := shape{xorRoot: true, n: 2}
	absorb.kind[0], absorb.lo[0], absorb.hi[0] = ckPar, 0, 2
	absorb.kind[1], absorb.lo[1], absorb.hi[1], absorb.p[1] = ckThr, -1, 1, 1
	for _, tt := range []struct {
		name string
		sh   shape
		want int
	}{
		{"chi", chi, 2}, {"parity11", par11, 11}, {"and-of-or", andOr, 1}, {"absorb", absorb, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sol := newSolver(Options{}).solve(tt.sh)
			if sol == nil {
				t.Fatal("no solution")
			}
			if len(sol.at) != tt.want {
				t.Errorf("%d switch points %v, want %d", len(sol.at), sol.at, tt.want)
			}
			// F(S) must equal Φ(y) everywhere on the box.
			var y [maxComps]int64
			var rec func(j int8)
			rec = func(j int8) {
				if j == tt.sh.n {
					var s int64
					for k := int8(0); k < tt.sh.n; k++ {
						s += sol.mult[k] * y[k]
					}
					f := int64(sol.base)
					for i, at := range sol.at {
						if s >= at {
							f += int64(sol.sign[i])
						}
					}
					if want := tt.sh.phi(&y); f != int64(want) {
						t.Fatalf("y=%v: F(S=%d) = %d, Φ = %d", y[:tt.sh.n], s, f, want)
					}
					return
				}
				for v := tt.sh.lo[j]; v <= tt.sh.hi[j]; v++ {
					y[j] = v
					rec(j + 1)
				}
			}
			rec(0)
		})
	}
}
