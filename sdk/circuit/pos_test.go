package circuit_test

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"strings"
	"testing"

	"github.com/tcforge/tcforge/sdk/circuit"
)

// TestAt checks the position hints the builder gives: the innermost At
// wins, closing one restores the enclosing hint (also after a panic),
// inputs made inside At get its hint, SetPos overrides, and nodes made
// outside any At have none.
func TestAt(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func(b *circuit.Builder) []circuit.Node // nodes whose hints are checked
		want  []int32                                 // their hints; nil: the circuit has none
	}{
		{"no At: no hints", func(b *circuit.Builder) []circuit.Node {
			x := b.Input("x", 2)
			return []circuit.Node{x[0], b.Xor(x...)}
		}, nil},
		{"At with no node inside still hints the circuit", func(b *circuit.Builder) []circuit.Node {
			x := b.Input("x", 1)[0]
			b.At(5, func() {})
			return []circuit.Node{x, b.Not(x)}
		}, []int32{-1, -1}},
		{"nodes before, inside and after", func(b *circuit.Builder) []circuit.Node {
			x := b.Input("x", 2)
			var y circuit.Node
			b.At(7, func() { y = b.And(x...) })
			return []circuit.Node{x[0], y, b.Or(x...)}
		}, []int32{-1, 7, -1}},
		{"inputs and constants made inside At", func(b *circuit.Builder) []circuit.Node {
			var x []circuit.Node
			var k circuit.Node
			b.At(2, func() { x = b.Input("x", 2); k = b.Const(1) })
			return []circuit.Node{x[0], x[1], k}
		}, []int32{2, 2, 2}},
		{"nesting: innermost wins, outer restored", func(b *circuit.Builder) []circuit.Node {
			x := b.Input("x", 1)[0]
			var n []circuit.Node
			b.At(1, func() {
				n = append(n, b.Not(x))
				b.At(2, func() {
					n = append(n, b.Not(x))
					b.At(circuit.NoPos, func() { n = append(n, b.Not(x)) })
					n = append(n, b.Not(x))
				})
				n = append(n, b.Not(x))
			})
			return append(n, b.Not(x))
		}, []int32{1, 2, -1, 2, 1, -1}},
		{"At inside Scope and Scope inside At are independent", func(b *circuit.Builder) []circuit.Node {
			x := b.Input("x", 1)[0]
			var n []circuit.Node
			b.Scope("s", func() {
				b.At(4, func() {
					b.Scope("t", func() { n = append(n, b.Not(x)) })
					n = append(n, b.Not(x))
				})
				n = append(n, b.Not(x))
			})
			return n
		}, []int32{4, 4, -1}},
		{"SetPos of an input made outside At", func(b *circuit.Builder) []circuit.Node {
			x := b.Input("x", 3)
			for i, n := range x {
				b.SetPos(n, 10*i)
			}
			return x
		}, []int32{0, 10, 20}},
		{"SetPos overrides At and later SetPos wins", func(b *circuit.Builder) []circuit.Node {
			var x circuit.Node
			b.At(3, func() { x = b.Input("x", 1)[0] })
			b.SetPos(x, 8)
			b.SetPos(x, 9)
			return []circuit.Node{x}
		}, []int32{9}},
		{"hint restored after a panic inside At", func(b *circuit.Builder) []circuit.Node {
			x := b.Input("x", 1)[0]
			var in circuit.Node
			b.At(6, func() {
				func() {
					defer func() { _ = recover() }()
					b.At(99, func() { panic("boom") })
				}()
				in = b.Not(x)
			})
			return []circuit.Node{in, b.Not(x)}
		}, []int32{6, -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := circuit.NewBuilder()
			nodes := tc.build(b)
			c := b.Circuit()
			if err := c.Validate(); err != nil {
				t.Fatal(err)
			}
			if tc.want == nil {
				if c.Pos != nil || c.HasPos() {
					t.Fatalf("Pos = %v, want nil", c.Pos)
				}
				for _, n := range nodes {
					if p := c.PosOf(n); p != circuit.NoPos {
						t.Errorf("PosOf(%d) = %d without hints", n, p)
					}
				}
				return
			}
			if len(c.Pos) != c.NumNodes() {
				t.Fatalf("%d hints for %d nodes", len(c.Pos), c.NumNodes())
			}
			got := make([]int32, len(nodes))
			for i, n := range nodes {
				got[i] = c.PosOf(n)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("hints %v, want %v", got, tc.want)
			}
		})
	}
}

// TestAtPanics checks that the builder refuses impossible hints and
// SetPos of a node that does not exist.
func TestAtPanics(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    func(b *circuit.Builder)
		want string
	}{
		{"At -2", func(b *circuit.Builder) { b.At(-2, func() {}) }, "position hint -2"},
		{"At past int32", func(b *circuit.Builder) { b.At(1<<40, func() {}) }, "position hint"},
		{"SetPos -5", func(b *circuit.Builder) { b.SetPos(b.Const(0), -5) }, "position hint -5"},
		{"SetPos of a missing node", func(b *circuit.Builder) { b.SetPos(3, 0) }, "SetPos of node 3"},
		{"SetPos of a negative node", func(b *circuit.Builder) { b.SetPos(-1, 0) }, "SetPos of node -1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if r == nil || !strings.Contains(r.(string), tc.want) {
					t.Errorf("panic %v, want one mentioning %q", r, tc.want)
				}
			}()
			tc.f(circuit.NewBuilder())
		})
	}
}

// TestPosRoundTrip checks that hints survive encoding, that a circuit
// without hints decodes without them (nil, not empty), and that a
// circuit of no nodes with hints keeps its (empty) hints.
func TestPosRoundTrip(t *testing.T) {
	empty := circuit.NewBuilder()
	empty.At(0, func() {})
	for _, tc := range []struct {
		name string
		c    *circuit.Circuit
	}{
		{"hints", validCircuit()},
		{"no hints", func() *circuit.Circuit { c := cloneCircuit(validCircuit()); c.Pos = nil; return c }()},
		{"no nodes, hints", empty.Circuit()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := tc.c.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			var d circuit.Circuit
			if err := d.UnmarshalBinary(data); err != nil {
				t.Fatal(err)
			}
			if (d.Pos == nil) != (tc.c.Pos == nil) || !slicesEqual(d.Pos, tc.c.Pos) {
				t.Errorf("hints %v after the round trip, want %v", d.Pos, tc.c.Pos)
			}
		})
	}
}

func slicesEqual(a, b []int32) bool {
	return len(a) == len(b) && (len(a) == 0 || reflect.DeepEqual(a, b))
}

// TestUnmarshalVersion2 checks that a blob of the previous encoding
// (version 2: no hints flag) still decodes, to the circuit without hints,
// and that a bad hints flag is rejected.
func TestUnmarshalVersion2(t *testing.T) {
	c := cloneCircuit(validCircuit())
	c.Pos = nil
	data, err := c.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if got := binary.LittleEndian.Uint32(data[4:]); got != 3 {
		t.Fatalf("encoding version %d, want 3", got)
	}
	if !bytes.HasSuffix(data, []byte{0, 0, 0, 0}) {
		t.Fatalf("encoding of a circuit without hints does not end with the zero flag")
	}
	old := append([]byte(nil), data[:len(data)-4]...)
	binary.LittleEndian.PutUint32(old[4:], 2)
	var d circuit.Circuit
	if err := d.UnmarshalBinary(old); err != nil {
		t.Fatalf("version 2: %v", err)
	}
	if !reflect.DeepEqual(&d, c) {
		t.Errorf("version 2 decodes to a different circuit")
	}
	bad := append([]byte(nil), data...)
	bad[len(bad)-4] = 2
	if err := d.UnmarshalBinary(bad); err == nil || !strings.Contains(err.Error(), "position hints flag 2") {
		t.Errorf("hints flag 2: err = %v", err)
	}
}
