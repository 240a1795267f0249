package adder_test

import (
	"context"
	"testing"

	"github.com/tcforge/tcforge/plugins/adder"
	"github.com/tcforge/tcforge/plugins/reifier"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// TestAdder checks the circuit against the reference (x + y computed
// without the circuit) and the Reifier-style layering of it, for widths
// around the word size, with and without the carry out.
func TestAdder(t *testing.T) {
	for _, n := range []int{1, 2, 7, 63, 64, 65} {
		for _, carry := range []bool{true, false} {
			values := map[string]any{"n": n, "carry_out": carry}
			c := sdktest.CheckReference(t, adder.Plugin, values, 200)
			wantOut := n
			if carry {
				wantOut++
			}
			if len(c.Inputs) != 2*n || len(c.Outputs) != wantOut {
				t.Fatalf("%v: %d inputs, %d outputs; want %d, %d", values, len(c.Inputs), len(c.Outputs), 2*n, wantOut)
			}
			// Position hints: input bits i of x and y, sum bit i and
			// the carry out of bit i are all at i.
			for i := range n {
				for _, v := range []int32{c.Inputs[i], c.Inputs[n+i], c.Outputs[i]} {
					if c.Pos[v] != int32(i) {
						t.Fatalf("%v: bit %d: node %d hinted %d", values, i, v, c.Pos[v])
					}
				}
			}
			if carry && c.Pos[c.Outputs[n]] != int32(n-1) {
				t.Errorf("%v: carry out hinted %d, want %d", values, c.Pos[c.Outputs[n]], n-1)
			}
			for v, p := range c.Pos {
				if p < 0 || int(p) >= n {
					t.Fatalf("%v: node %d hinted %d", values, v, p)
				}
			}
			l, err := reifier.Compile(context.Background(), c)
			if err != nil {
				t.Fatalf("%v: %v", values, err)
			}
			sdktest.CheckLayered(t, c, l, 200)
			// The layered circuit keeps the hints: sum bit i at i.
			for i := range n {
				if p := l.PosAt(l.Depth(), i); p != int32(i) {
					t.Errorf("%v: layered sum bit %d hinted %d", values, i, p)
				}
			}
		}
	}
}
