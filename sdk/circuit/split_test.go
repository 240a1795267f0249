package circuit_test

import (
	"math/rand/v2"
	"testing"

	"github.com/tcforge/tcforge/sdk/circuit"
)

// TestSplitSums splits additions of m words of n bits under several
// bounds and checks that the result computes the same outputs on random
// inputs, that every SUMBIT of it sums to at most the bound, and that the
// depth in SUMBIT levels is the number of chunks.
func TestSplitSums(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, tc := range []struct {
		n, m   int
		maxSum int64
		chunks int // SUMBIT levels of the split addition
	}{
		{32, 7, 1 << 24, 2}, // m = 8 (with the constant), b = 20 → 16
		{32, 7, 1 << 30, 2}, // b = 26 → 16
		{32, 2, 1 << 34, 1}, // no split
		{32, 7, 1 << 12, 4}, // b = 8
		{64, 5, 1 << 24, 4}, // b = 21 → 16
		{16, 3, 64, 8},      // m = 4 (with the constant), b = 3 → 2
		{8, 4, 2, 8},        // b = 1 (bound too small: one-bit chunks)
	} {
		b := circuit.NewBuilder()
		var ws [][]circuit.Node
		for range tc.m {
			ws = append(ws, b.Input("w", tc.n))
		}
		sum := b.Add(append(ws, b.ConstWord(0x9e3779b97f4a7c15, tc.n))...)
		b.Output("sum", sum)
		c := b.Circuit()
		d, err := circuit.SplitSums(c, tc.maxSum)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Validate(); err != nil {
			t.Fatalf("n=%d m=%d bound %d: %v", tc.n, tc.m, tc.maxSum, err)
		}
		if tc.chunks == 1 && d != c {
			t.Errorf("n=%d m=%d bound %d: split although no sum exceeds the bound", tc.n, tc.m, tc.maxSum)
		}
		if got := d.Stats().Depth; got != tc.chunks {
			t.Errorf("n=%d m=%d bound %d: depth %d, want %d", tc.n, tc.m, tc.maxSum, got, tc.chunks)
		}
		for i, op := range d.Ops {
			if op != circuit.OpSumBit {
				continue
			}
			_, es := d.Operands(circuit.Node(i))
			var s int64
			for _, e := range es {
				if e <= d.Param[i] {
					s += 1 << uint(e)
				}
			}
			if s > tc.maxSum && tc.maxSum >= 2*int64(tc.m+2) {
				t.Errorf("n=%d m=%d bound %d: node %d sums to %d", tc.n, tc.m, tc.maxSum, i, s)
			}
		}
		for range 4 {
			in := make([]uint64, len(c.Inputs))
			for i := range in {
				in[i] = rng.Uint64()
			}
			want, _ := c.Eval(in)
			got, err := d.Eval(in)
			if err != nil {
				t.Fatal(err)
			}
			for j := range want {
				if got[j] != want[j] {
					t.Fatalf("n=%d m=%d bound %d: output %d differs", tc.n, tc.m, tc.maxSum, j)
				}
			}
		}
	}
}

// TestSplitSumsPos checks that SplitSums carries position hints: an
// addition hinted with bit indices keeps them on its inputs and outputs,
// every node that replaces a SUMBIT has a bit index, and a carry is
// hinted with the lowest bit of the chunk that first needs it, so a
// SUMBIT reads SUMBITs of its own or lower bits only. A circuit without
// hints stays without.
func TestSplitSumsPos(t *testing.T) {
	const n = 32
	for _, hinted := range []bool{true, false} {
		b := circuit.NewBuilder()
		x, y, z := b.Input("x", n), b.Input("y", n), b.Input("z", n)
		sum := b.Add(x, y, z)
		if hinted {
			for i := range n {
				for _, v := range []circuit.Node{x[i], y[i], z[i], sum[i]} {
					b.SetPos(v, i)
				}
			}
		}
		b.Output("sum", sum)
		c := b.Circuit()
		if !hinted {
			c.Pos = nil // Add hints its sum bits; this circuit carries none
		}
		d, err := circuit.SplitSums(c, 64) // chunks of 4 bits
		if err != nil {
			t.Fatal(err)
		}
		if d == c || d.Stats().Depth != n/4 {
			t.Fatalf("hinted %v: not split into %d chunks", hinted, n/4)
		}
		if err := d.Validate(); err != nil {
			t.Fatal(err)
		}
		if !hinted {
			if d.Pos != nil {
				t.Errorf("split of a circuit without hints has hints")
			}
			continue
		}
		for i := range n {
			if p := d.PosOf(d.Inputs[i]); p != int32(i) {
				t.Errorf("input x%d hinted %d", i, p)
			}
			if p := d.PosOf(d.Outputs[i]); p != int32(i) {
				t.Errorf("output bit %d hinted %d", i, p)
			}
		}
		carries := 0
		for v, op := range d.Ops {
			if op != circuit.OpSumBit {
				continue
			}
			p := d.Pos[v]
			if p < 0 || p >= n {
				t.Fatalf("SUMBIT %d hinted %d", v, p)
			}
			args, _ := d.Operands(circuit.Node(v))
			for _, a := range args {
				if d.Ops[a] == circuit.OpSumBit {
					if d.Pos[a] > p || d.Pos[a]%4 != 0 {
						t.Errorf("SUMBIT %d at bit %d reads carry %d hinted %d", v, p, a, d.Pos[a])
					}
					carries++
				}
			}
		}
		if carries == 0 {
			t.Errorf("no carries read")
		}
	}
}
