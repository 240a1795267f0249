package bristol_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tcforge/tcforge/sdk/bristol"
	"github.com/tcforge/tcforge/sdk/circuit"
)

func TestParseAndEvalHandWritten(t *testing.T) {
	nl, err := bristol.Parse(strings.NewReader(adder2), "adder2.txt")
	if err != nil {
		t.Fatal(err)
	}
	if nl.NumWires != 15 || nl.NumInputs() != 4 || nl.NumOutputs() != 3 || len(nl.Ops) != 10 {
		t.Fatalf("parsed %d wires, %d inputs, %d outputs, %d gates", nl.NumWires, nl.NumInputs(), nl.NumOutputs(), len(nl.Ops))
	}
	// Every x, y in 0..3 as one batch of 16 lanes.
	in := make([]uint64, 4)
	for s := range 16 {
		for i := range 4 {
			in[i] |= uint64(s>>i&1) << s
		}
	}
	out, err := nl.Eval(in)
	if err != nil {
		t.Fatal(err)
	}
	for s := range 16 {
		x, y := s&3, s>>2
		got := 0
		for j := range 3 {
			got |= int(out[j]>>s&1) << j
		}
		if got != x+y {
			t.Errorf("%d + %d = %d, want %d", x, y, got, x+y)
		}
	}
	st := nl.Stats()
	want := bristol.Stats{Gates: 10, Wires: 15, ANDs: 3, Depth: 6, ANDDepth: 2}
	want.ByOp = st.ByOp
	if st != want || st.Count(bristol.MAND) != 1 || st.Count(bristol.XOR) != 5 || st.Count(bristol.EQ) != 1 || st.Count(bristol.INV) != 1 || st.Count(bristol.EQW) != 1 {
		t.Errorf("stats %+v, want %+v with 5 XOR, 1 AND, 1 MAND, 1 INV, 1 EQ, 1 EQW", st, want)
	}
	// Write and read back: the same netlist.
	var buf bytes.Buffer
	if err := nl.Write(&buf); err != nil {
		t.Fatal(err)
	}
	nl2, err := bristol.Parse(&buf, "rewritten")
	if err != nil {
		t.Fatal(err)
	}
	if !equalNetlists(nl, nl2) {
		t.Errorf("rewritten netlist differs:\n%+v\n%+v", nl, nl2)
	}
}

// adder2 is a 2-bit adder written by hand, using every gate type:
// inputs x (wires 0, 1) and y (wires 2, 3), least significant bit first;
// output x + y in 3 bits (wires 12, 13, 14).
//
//	s0 = x0 ⊕ y0 (12), c0 = x0 ∧ y0 (4)
//	t = x1 ⊕ y1 (5), s1 = t ⊕ c0 (13)
//	(x1 ∧ y1, t ∧ c0) = (6, 7) by one MAND; c1 = 6 ⊕ 7 (8)
//	c1 again as ¬c1 ⊕ 1 (9, 10, 11), copied to wire 14 by EQW
const adder2 = `10 15
2 2 2
1 3

2 1 0 2 12 XOR
2 1 0 2 4 AND
2 1 1 3 5 XOR
2 1 5 4 13 XOR
4 2 1 5 3 4 6 7 MAND
2 1 6 7 8 XOR
1 1 8 9 INV
1 1 1 10 EQ
2 1 9 10 11 XOR
1 1 11 14 EQW
`

func equalNetlists(a, b *bristol.Netlist) bool {
	return a.NumWires == b.NumWires && slices.Equal(a.Inputs, b.Inputs) && slices.Equal(a.Outputs, b.Outputs) &&
		slices.Equal(a.Ops, b.Ops) && slices.Equal(a.Start, b.Start) && slices.Equal(a.Wire, b.Wire)
}

// TestParseErrors checks that each kind of malformed netlist is refused
// with its line and the reason.
func TestParseErrors(t *testing.T) {
	// head is a valid header: 2 input bits (wires 0, 1), 1 output bit.
	head := func(gates, wires int) string {
		return fmt.Sprintf("%d %d\n1 2\n1 1\n\n", gates, wires)
	}
	tests := []struct {
		name, src string
		line      int
		msg       string
	}{
		{"empty", "", 1, "empty file"},
		{"blank", "\n\n", 1, "empty file"},
		{"header fields", "3\n1 2\n1 1\n", 1, `bad header: want "#gates #wires", got 1 fields`},
		{"header numbers", "x 4\n1 2\n1 1\n", 1, "bad header"},
		{"header zero wires", "0 0\n1 2\n1 1\n", 1, "bad header"},
		{"header negative", "1 -4\n1 2\n1 1\n", 1, "bad header"},
		{"input sizes", "1 4\n2 1\n1 1\n", 2, "2 input groups need 2 sizes after the count, got 1"},
		{"input size zero", "1 4\n2 1 0\n1 1\n", 2, "input group 2 has size \"0\""},
		{"input count", "1 4\nfour 1\n1 1\n", 2, "is not a count of groups"},
		{"no outputs", "1 4\n1 2\n0\n", 3, "no output groups"},
		{"header ends", "1 4\n1 2\n", 3, "file ends in the header"},
		{"too few wires", "1 3\n1 2\n1 2\n", 3, "need at least 4 wires, but line 1 declares 3"},
		{"unknown gate", head(2, 4) + "2 1 0 1 2 AND\n2 1 0 2 3 NAND\n", 6, `unknown gate "NAND"`},
		{"arity", head(1, 3) + "2 2 0 1 2 2 XOR\n", 5, "wrong arity for XOR: 2 inputs and 2 outputs, want 2 1"},
		{"arity INV", head(1, 3) + "2 1 0 1 2 INV\n", 5, "wrong arity for INV"},
		{"arity MAND", head(1, 3) + "3 1 0 1 0 2 MAND\n", 5, "wrong arity for MAND"},
		{"field count", head(1, 3) + "2 1 0 2 XOR\n", 5, "XOR gate with 2 inputs and 1 outputs needs 3 wires, got 2"},
		{"too short", head(1, 3) + "XOR\n", 5, "bad gate"},
		{"arity numbers", head(1, 3) + "two 1 0 1 2 XOR\n", 5, "are not the counts nin nout"},
		{"wire range", head(1, 3) + "2 1 0 7 2 XOR\n", 5, `wire "7" out of range: line 1 declares 3 wires (0…2)`},
		{"wire negative", head(1, 3) + "2 1 0 -1 2 XOR\n", 5, `wire "-1" out of range`},
		{"EQ literal", head(1, 3) + "1 1 2 2 EQ\n", 5, "EQ's operand is the constant 0 or 1"},
		{"never set", head(1, 4) + "2 1 0 2 3 XOR\n", 5, "wire 2 is used but never set"},
		{"used before set", head(2, 4) + "2 1 0 2 3 XOR\n2 1 0 1 2 AND\n", 5, "wire 2 is used before it is set (on line 6)"},
		{"cycle", head(3, 5) + "2 1 0 3 2 XOR\n2 1 2 1 3 AND\n2 1 2 3 4 XOR\n", 5, "cycle: this gate reads wire 3, which is computed from this gate's result (wires 2 → 3)"},
		{"self loop", head(1, 3) + "2 1 0 2 2 AND\n", 5, "cycle: this gate reads wire 2, which is computed from this gate's result (wires 2 → 2)"},
		{"set twice", head(3, 4) + "2 1 0 1 2 AND\n2 1 0 1 2 XOR\n1 1 2 3 INV\n", 6, "wire 2 is set twice (first on line 5)"},
		{"MAND twice", head(1, 5) + "4 2 0 1 0 1 3 3 MAND\n", 5, "wire 3 is set twice (first on line 5)"},
		{"input set", head(1, 3) + "1 1 0 1 INV\n", 5, "gate sets wire 1, an input wire"},
		{"output never set", head(1, 4) + "2 1 0 1 2 AND\n", 3, "output wire 3 is never set"},
		{"ends early", head(3, 4) + "2 1 0 1 2 AND\n1 1 2 3 INV\n", 7, "file ends after 2 gates; line 1 declares 3"},
		{"trailing", head(1, 3) + "2 1 0 1 2 AND\n\n1 1 2 2 INV\n", 7, `trailing content "1 1 2 2 INV" after the 1 gates line 1 declares`},
		{"wires never set", "1 5000000\n1 2\n1 1\n\n2 1 0 1 4999999 AND\n", 1, "line 1 declares 5000000 wires, but the gates set only 1 (at most 4194304 wires may be inputs or left unset)"},
		// A 30-byte header once made the parser allocate 4 GiB.
		{"huge input", "0 1073741824\n1 1073741000\n1 1\n", 2, "bad input line: 1073741000 input bits; at most 4194304 are supported"},
		{"huge input groups", "0 1073741824\n2 4194304 1\n1 1\n", 2, "4194305 input bits"},
		{"trailing word", head(1, 3) + "2 1 0 1 2 AND\nend\n", 6, "trailing content"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := bristol.Parse(strings.NewReader(tt.src), "bad.txt")
			var e *bristol.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v, want a *bristol.Error", err)
			}
			if e.File != "bad.txt" || e.Line != tt.line || !strings.Contains(e.Msg, tt.msg) {
				t.Errorf("error %q, want bad.txt:%d: …%s…", err, tt.line, tt.msg)
			}
			if !strings.HasPrefix(err.Error(), fmt.Sprintf("bad.txt:%d: ", tt.line)) {
				t.Errorf("error %q does not start with its location", err)
			}
		})
	}
}

// checkLowering exports c, writes and re-reads the netlist, and compares
// its outputs with the circuit's on the given 64-lane input words.
func checkLowering(t *testing.T, c *circuit.Circuit, in []uint64) *bristol.Netlist {
	t.Helper()
	nl, err := bristol.FromCircuit(c)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := nl.Write(&buf); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	back, err := bristol.Parse(&buf, "exported")
	if err != nil {
		t.Fatalf("the exported netlist does not parse: %v\n%s", err, text)
	}
	if !equalNetlists(nl, back) {
		t.Fatalf("the exported netlist reads back differently")
	}
	want, err := c.Eval(in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := back.Eval(in)
	if err != nil {
		t.Fatal(err)
	}
	for j := range want {
		if got[j] != want[j] {
			t.Fatalf("output %d: netlist %064b, circuit %064b\n%s", j, got[j], want[j], text)
		}
	}
	return back
}

// TestLowerThreshold exports single threshold gates over every weight
// vector in [−3, 3]^k (k ≤ 3) and threshold in [−7, 8], and larger ones
// with random weights, and checks them on every input.
func TestLowerThreshold(t *testing.T) {
	check := func(weights []int32, theta int32) {
		t.Helper()
		b := circuit.NewBuilder()
		x := b.Input("x", len(weights))
		b.Output("y", []circuit.Node{b.Threshold(theta, x, weights)})
		in := make([]uint64, len(weights))
		for s := range 64 {
			for i := range in {
				in[i] |= uint64(s>>i&1) << s
			}
		}
		checkLowering(t, b.Circuit(), in)
	}
	var rec func(ws []int32)
	rec = func(ws []int32) {
		if len(ws) > 0 {
			for theta := int32(-7); theta <= 8; theta++ {
				check(ws, theta)
			}
		}
		if len(ws) == 3 {
			return
		}
		for w := int32(-3); w <= 3; w++ {
			rec(append(slices.Clone(ws), w))
		}
	}
	rec(nil)
	rng := rand.New(rand.NewPCG(3, 4))
	for range 300 {
		ws := make([]int32, 1+rng.IntN(6))
		total := int32(0)
		for i := range ws {
			ws[i] = int32(rng.IntN(2001)) - 1000
			total += max(ws[i], -ws[i])
		}
		check(ws, int32(rng.IntN(int(2*total+3)))-total-1)
	}
}

// TestLowerRandom exports random circuits over every op, with repeated
// operands, constant and input outputs and repeated outputs, and checks
// them on random inputs.
func TestLowerRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		c := randomCircuit(rng, 1+rng.IntN(10), 1+rng.IntN(80), 1+rng.IntN(10))
		in := make([]uint64, len(c.Inputs))
		for i := range in {
			in[i] = rng.Uint64()
		}
		checkLowering(t, c, in)
	}
}

// randomCircuit builds a random circuit of nIn inputs and about nNodes
// nodes whose nOut outputs are random nodes (inputs and constants
// included, repeats allowed).
func randomCircuit(rng *rand.Rand, nIn, nNodes, nOut int) *circuit.Circuit {
	b := circuit.NewBuilder()
	nodes := b.Input("x", nIn)
	pick := func(k int) []circuit.Node {
		out := make([]circuit.Node, k)
		for i := range out {
			out[i] = nodes[rng.IntN(len(nodes))]
		}
		return out
	}
	for range nNodes {
		var x circuit.Node
		switch rng.IntN(9) {
		case 0:
			x = b.Const(rng.IntN(2))
		case 1:
			x = b.Not(pick(1)[0])
		case 2:
			x = b.And(pick(1 + rng.IntN(5))...)
		case 3:
			x = b.Or(pick(1 + rng.IntN(5))...)
		case 4:
			x = b.Xor(pick(1 + rng.IntN(9))...)
		case 5:
			args := pick(2 + rng.IntN(4))
			x = b.AndNot(args[0], args[1:]...)
		case 6:
			// A bit of a sum, with exponents above it (they do not reach
			// it) and repeated ones.
			k := rng.IntN(4)
			args := pick(1 + rng.IntN(8))
			exps := make([]int32, len(args))
			for i := range exps {
				exps[i] = int32(rng.IntN(k + 3))
			}
			x = b.SumBit(k, args, exps)
		default:
			k := 1 + rng.IntN(7)
			w := make([]int32, k)
			for i := range w {
				w[i] = int32(rng.IntN(9)) - 4
			}
			x = b.Threshold(int32(rng.IntN(13))-4, pick(k), w)
		}
		nodes = append(nodes, x)
	}
	b.Output("y", pick(nOut))
	b.Output("z", pick(1+rng.IntN(3)))
	return b.Circuit()
}

// TestLowerAdd exports additions of m random n-bit words (one SUMBIT a
// bit, circuit.Builder.Add) and checks them on random inputs. The bits of
// one addition share their columns, so the netlist is one ripple of full
// and half adders (one AND each) with at most (m − 1)·n ANDs (measured:
// 7 for m = 2, n = 8; 213 for m = 8, n = 32), not one adder network a bit.
func TestLowerAdd(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, tc := range []struct{ m, n int }{{2, 8}, {3, 8}, {7, 32}, {8, 32}, {4, 64}} {
		b := circuit.NewBuilder()
		words := make([][]circuit.Node, tc.m)
		for i := range words {
			words[i] = b.Input("w"+strconv.Itoa(i), tc.n)
		}
		b.Output("sum", b.Add(words...))
		in := make([]uint64, tc.m*tc.n)
		for i := range in {
			in[i] = rng.Uint64()
		}
		nl := checkLowering(t, b.Circuit(), in)
		ands := nl.Stats().ANDs
		if limit := (tc.m - 1) * tc.n; ands > limit {
			t.Errorf("m=%d n=%d: %d ANDs, want at most %d", tc.m, tc.n, ands, limit)
		}
		t.Logf("m=%d n=%d: %d ANDs, %d gates", tc.m, tc.n, ands, nl.Stats().Gates)
	}
}

// TestFromCircuitGroups checks the input and output groups: ranges that
// tile the bits become groups, others one group.
func TestFromCircuitGroups(t *testing.T) {
	b := circuit.NewBuilder()
	x := b.Input("x", 3)
	y := b.Input("y", 2)
	b.Output("s", []circuit.Node{b.Xor(x[0], y[0]), b.And(x[1], y[1])})
	b.Output("t", []circuit.Node{x[2]})
	nl, err := bristol.FromCircuit(b.Circuit())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(nl.Inputs, []int{3, 2}) || !slices.Equal(nl.Outputs, []int{2, 1}) {
		t.Errorf("groups %v, %v; want [3 2], [2 1]", nl.Inputs, nl.Outputs)
	}
	// 2 gates and an EQW for the input bit x2 that is an output.
	if st := nl.Stats(); st.Gates != 3 || st.Count(bristol.EQW) != 1 || nl.NumWires != 8 {
		t.Errorf("%d gates (%d EQW), %d wires; want 3 (1), 8", st.Gates, st.Count(bristol.EQW), nl.NumWires)
	}
	c := b2()
	c.OutputRanges = []circuit.Range{{Name: "a", Start: 1, Len: 1}, {Name: "b", Start: 0, Len: 1}}
	if nl, err := bristol.FromCircuit(c); err != nil || !slices.Equal(nl.Outputs, []int{2}) {
		t.Errorf("out-of-order ranges: %v, %v; want one group [2]", nl.Outputs, err)
	}
	c.Outputs, c.OutputRanges = nil, nil
	if _, err := bristol.FromCircuit(c); err == nil || !strings.Contains(err.Error(), "no outputs") {
		t.Errorf("a circuit with no outputs: %v", err)
	}
}

func b2() *circuit.Circuit {
	b := circuit.NewBuilder()
	x := b.Input("x", 2)
	b.Output("y", []circuit.Node{b.Xor(x...), b.And(x...)})
	return b.Circuit()
}
