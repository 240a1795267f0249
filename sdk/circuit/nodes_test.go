package circuit_test

import (
	"testing"

	"github.com/tcforge/tcforge/sdk/circuit"
)

// TestSplit checks Split's block cutting.
func TestSplit(t *testing.T) {
	nodes := []circuit.Node{0, 1, 2, 3, 4, 5, 6}
	got := circuit.Split(nodes, 3)
	if len(got) != 3 || len(got[0]) != 3 || len(got[2]) != 1 || got[2][0] != 6 {
		t.Errorf("Split(7 nodes, 3) = %v", got)
	}
	if got := circuit.Split(nil, 3); len(got) != 0 {
		t.Errorf("Split(nil) = %v", got)
	}
}

// TestConstValue: the builder knows its constant nodes and their values.
func TestConstValue(t *testing.T) {
	b := circuit.NewBuilder()
	x := b.Input("x", 1)[0]
	one, zero := b.Const(1), b.Zeros(1)[0]
	not := b.Not(one)
	for _, tc := range []struct {
		n      circuit.Node
		v      int
		isCons bool
	}{{x, 0, false}, {one, 1, true}, {zero, 0, true}, {not, 0, false}, {99, 0, false}} {
		if v, ok := b.ConstValue(tc.n); v != tc.v || ok != tc.isCons {
			t.Errorf("ConstValue(%d) = %d, %v; want %d, %v", tc.n, v, ok, tc.v, tc.isCons)
		}
	}
}
