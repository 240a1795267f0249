package circuit_test

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/tcforge/tcforge/sdk/circuit"
)

// lanePatterns returns n input words enumerating every assignment of n
// inputs (n ≤ 6) across the 64 lanes: lane l holds assignment l mod 2ⁿ,
// input i being bit i of the assignment.
func lanePatterns(n int) []uint64 {
	in := make([]uint64, n)
	for i := range in {
		for l := 0; l < 64; l++ {
			in[i] |= uint64(l>>i&1) << l
		}
	}
	return in
}

// refOp is the specification of each op on one assignment, written apart
// from Eval and bitslice.
func refOp(op circuit.Op, param int32, weights []int32, xs []uint) uint {
	switch op {
	case circuit.OpConst:
		return uint(param)
	case circuit.OpNot:
		return 1 - xs[0]
	case circuit.OpAnd:
		r := uint(1)
		for _, x := range xs {
			r &= x
		}
		return r
	case circuit.OpOr:
		r := uint(0)
		for _, x := range xs {
			r |= x
		}
		return r
	case circuit.OpXor:
		r := uint(0)
		for _, x := range xs {
			r ^= x
		}
		return r
	case circuit.OpAndNot:
		r := 1 - xs[0]
		for _, x := range xs[1:] {
			r &= x
		}
		return r
	case circuit.OpThreshold:
		var sum int64
		for k, x := range xs {
			sum += int64(weights[k]) * int64(x)
		}
		if sum >= int64(param) {
			return 1
		}
		return 0
	case circuit.OpSumBit:
		var sum uint64 // modulo 2^64: bits 0…63 are exact
		for k, x := range xs {
			sum += uint64(x) << uint(weights[k])
		}
		return uint(sum>>uint(param)) & 1
	}
	panic("refOp: " + op.String())
}

// opCase is one op over arity inputs.
type opCase struct {
	name    string
	op      circuit.Op
	arity   int
	param   int32
	weights []int32 // OpThreshold and OpSumBit only
}

// build returns a circuit with arity inputs "x" and the op as its only output "y".
func (tc opCase) build() *circuit.Circuit {
	b := circuit.NewBuilder()
	xs := b.Input("x", tc.arity)
	var y circuit.Node
	switch tc.op {
	case circuit.OpConst:
		y = b.Const(int(tc.param))
	case circuit.OpNot:
		y = b.Not(xs[0])
	case circuit.OpAnd:
		y = b.And(xs...)
	case circuit.OpOr:
		y = b.Or(xs...)
	case circuit.OpXor:
		y = b.Xor(xs...)
	case circuit.OpAndNot:
		y = b.AndNot(xs[0], xs[1:]...)
	case circuit.OpThreshold:
		y = b.Threshold(tc.param, xs, tc.weights)
	case circuit.OpSumBit:
		y = b.SumBit(int(tc.param), xs, tc.weights)
	}
	b.Output("y", []circuit.Node{y})
	return b.Circuit()
}

func opCases() []opCase {
	var cases []opCase
	for _, v := range []int32{0, 1} {
		cases = append(cases, opCase{name: fmt.Sprintf("CONST %d", v), op: circuit.OpConst, arity: 1, param: v})
	}
	cases = append(cases, opCase{name: "NOT", op: circuit.OpNot, arity: 1})
	for n := 1; n <= 6; n++ {
		for _, op := range []circuit.Op{circuit.OpAnd, circuit.OpOr, circuit.OpXor} {
			cases = append(cases, opCase{name: fmt.Sprintf("%s/%d", op, n), op: op, arity: n})
		}
		if n >= 2 {
			cases = append(cases, opCase{name: fmt.Sprintf("ANDNOT/%d", n), op: circuit.OpAndNot, arity: n})
		}
	}
	thresholds := []struct {
		theta int32
		w     []int32
	}{
		{1, []int32{1}},               // identity
		{0, []int32{1}},               // constant 1
		{2, []int32{1}},               // constant 0
		{1, []int32{1, 1, 1}},         // OR
		{3, []int32{1, 1, 1}},         // AND
		{2, []int32{1, 1, 1}},         // majority
		{0, []int32{-1}},              // NOT
		{1, []int32{-1, 1}},           // ¬a ∧ b
		{0, []int32{-1, -1}},          // NOR
		{-1, []int32{-1, -1}},         // NAND
		{-2, []int32{-1, -1}},         // constant 1 via negative weights
		{1, []int32{2, -1, -1}},       // a ∧ ¬(b ∧ c)
		{2, []int32{4, -3, 2, 1}},     // mixed
		{-3, []int32{-2, -2, 1, -1}},  // negative θ
		{0, []int32{0, 0, 0}},         // zero weights, fires
		{1, []int32{0, 0, 0}},         // zero weights, never
		{5, []int32{1, 2, 4, 8, 16}},  // binary number ≥ 5
		{1, []int32{1, -2, 3, -4, 5}}, // alternating
		{math.MinInt32, []int32{math.MinInt32, math.MinInt32}},
		{math.MaxInt32, []int32{math.MaxInt32, math.MaxInt32, -1}},
		{3, []int32{1, 1, 1, 1, 1, 1}},       // at least 3 of 6
		{1, []int32{1, -1, 1, -1, 1, -1}},    // more odd than even
		{-5, []int32{-1, -1, -1, -1, -1, 1}}, // at most 5 of the first 5, i.e. true
	}
	for _, th := range thresholds {
		cases = append(cases, opCase{
			name:    fmt.Sprintf("THRESHOLD θ=%d w=%v", th.theta, th.w),
			op:      circuit.OpThreshold,
			arity:   len(th.w),
			param:   th.theta,
			weights: th.w,
		})
	}
	sums := []struct {
		k int32
		e []int32
	}{
		{0, []int32{0, 0, 0, 0, 0}},     // XOR of 5
		{1, []int32{0, 0, 0}},           // carry of a full adder
		{1, []int32{0, 1, 0, 1}},        // bit 1 of two 2-bit words
		{2, []int32{0, 1, 2, 0, 1, 2}},  // bit 2 of two 3-bit words
		{3, []int32{0, 0, 0, 0, 0, 0}},  // bit 3 of a count of 6: never
		{2, []int32{0, 3, 1, 5}},        // exponents above k do not matter
		{63, []int32{63, 62, 62, 0, 1}}, // the top bit
		{5, []int32{4, 4, 4, 4, 4, 4}},  // 6·16 = 96 = 0b1100000
	}
	for _, sb := range sums {
		cases = append(cases, opCase{
			name:    fmt.Sprintf("SUMBIT k=%d e=%v", sb.k, sb.e),
			op:      circuit.OpSumBit,
			arity:   len(sb.e),
			param:   sb.k,
			weights: sb.e,
		})
	}
	return cases
}

// TestOpTruthTables checks every op exhaustively over all assignments of
// its operands (64 lanes enumerate up to 6 inputs).
func TestOpTruthTables(t *testing.T) {
	for _, tc := range opCases() {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.build()
			if err := c.Validate(); err != nil {
				t.Fatal(err)
			}
			out, err := c.Eval(lanePatterns(tc.arity))
			if err != nil {
				t.Fatal(err)
			}
			for l := 0; l < 64; l++ {
				xs := make([]uint, tc.arity)
				for i := range xs {
					xs[i] = uint(l>>i) & 1
				}
				want := refOp(tc.op, tc.param, tc.weights, xs)
				if got := uint(out[0]>>l) & 1; got != want {
					t.Fatalf("inputs %v: got %d, want %d", xs, got, want)
				}
			}
		})
	}
}

// TestThresholdRandom checks wide threshold gates with random weights and
// thresholds against the definition on random lanes.
func TestThresholdRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 300; iter++ {
		n := 1 + rng.IntN(40)
		w := make([]int32, n)
		var pos, neg int32
		for k := range w {
			switch rng.IntN(4) {
			case 0:
				w[k] = int32(rng.IntN(2001) - 1000)
			default:
				w[k] = int32(rng.IntN(11) - 5)
			}
			if w[k] > 0 {
				pos += w[k]
			} else {
				neg += w[k]
			}
		}
		theta := neg + int32(rng.IntN(int(pos-neg)+3)) - 1
		tc := opCase{op: circuit.OpThreshold, arity: n, param: theta, weights: w}
		c := tc.build()
		in := make([]uint64, n)
		for i := range in {
			in[i] = rng.Uint64()
		}
		out, err := c.Eval(in)
		if err != nil {
			t.Fatal(err)
		}
		for l := 0; l < 64; l++ {
			xs := make([]uint, n)
			for i := range xs {
				xs[i] = uint(in[i]>>l) & 1
			}
			if got, want := uint(out[0]>>l)&1, refOp(circuit.OpThreshold, theta, w, xs); got != want {
				t.Fatalf("θ=%d w=%v x=%v: got %d, want %d", theta, w, xs, got, want)
			}
		}
	}
}

// TestBuilderHelpers checks the builder's derived helpers: Copy, XorConst,
// Zeros, and that operands may repeat.
func TestBuilderHelpers(t *testing.T) {
	b := circuit.NewBuilder()
	x := b.Input("x", 2)
	cp := b.Copy(x[0])
	if got := b.XorConst(x[1], 0); got != x[1] {
		t.Errorf("XorConst(x, 0) = node %d, want x itself (%d)", got, x[1])
	}
	flip := b.XorConst(x[1], 3) // only the low bit counts
	zs := b.Zeros(2)
	twice := b.Xor(x[0], x[0], x[1]) // x0 ⊕ x0 ⊕ x1 = x1
	b.Output("y", []circuit.Node{cp, flip, zs[0], zs[1], twice})
	c := b.Circuit()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.Ops[cp] != circuit.OpOr || len(c.Args[c.ArgStart[cp]:c.ArgStart[cp+1]]) != 1 {
		t.Errorf("Copy is %s with %d operands, want a one-operand OR", c.Ops[cp], c.ArgStart[cp+1]-c.ArgStart[cp])
	}
	if c.Ops[flip] != circuit.OpNot {
		t.Errorf("XorConst(x, 1) is %s, want NOT", c.Ops[flip])
	}
	if zs[0] == zs[1] {
		t.Errorf("Zeros returned the same node twice")
	}
	out, err := c.Eval(lanePatterns(2))
	if err != nil {
		t.Fatal(err)
	}
	in := lanePatterns(2)
	want := []uint64{in[0], ^in[1], 0, 0, in[1]}
	if !reflect.DeepEqual(out, want) {
		t.Errorf("outputs %x, want %x", out, want)
	}
}

// TestBuilderPanics checks that the builder refuses operands that are not
// existing nodes and thresholds with mismatched weights.
func TestBuilderPanics(t *testing.T) {
	for name, fn := range map[string]func(b *circuit.Builder){
		"forward operand":  func(b *circuit.Builder) { b.Not(5) },
		"self operand":     func(b *circuit.Builder) { b.And(1) },
		"negative operand": func(b *circuit.Builder) { b.Or(-1) },
		"weights mismatch": func(b *circuit.Builder) { b.Threshold(1, []circuit.Node{0}, []int32{1, 1}) },
	} {
		t.Run(name, func(t *testing.T) {
			b := circuit.NewBuilder()
			b.Input("x", 1)
			defer func() {
				if recover() == nil {
					t.Errorf("no panic")
				}
			}()
			fn(b)
		})
	}
}

// TestBuilderScopes checks that nodes carry the tag of the innermost open
// scope, joined with "/", that tags are interned once, and that closing a
// scope restores the enclosing tag.
func TestBuilderScopes(t *testing.T) {
	b := circuit.NewBuilder()
	x := b.Input("x", 1)[0]
	tagged := map[string]circuit.Node{}
	b.Scope("block 1", func() {
		tagged["block 1"] = b.Not(x)
		b.Scope("round 1", func() {
			b.Scope("theta", func() { tagged["block 1/round 1/theta"] = b.Xor(x, x) })
			tagged["block 1/round 1"] = b.Copy(x)
			b.Scope("chi", func() { tagged["block 1/round 1/chi"] = b.AndNot(x, x) })
		})
		b.Scope("round 2", func() {
			b.Scope("theta", func() { tagged["block 1/round 2/theta"] = b.Xor(x) })
		})
		tagged["block 1 again"] = b.Const(1)
	})
	b.Scope("block 1", func() {
		b.Scope("round 1", func() {
			b.Scope("theta", func() { tagged["block 1/round 1/theta again"] = b.Xor(x) })
		})
	})
	tagged["top"] = b.Const(0)
	c := b.Circuit()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"block 1":                     "block 1",
		"block 1/round 1/theta":       "block 1/round 1/theta",
		"block 1/round 1":             "block 1/round 1",
		"block 1/round 1/chi":         "block 1/round 1/chi",
		"block 1/round 2/theta":       "block 1/round 2/theta",
		"block 1 again":               "block 1",
		"block 1/round 1/theta again": "block 1/round 1/theta",
		"top":                         "",
	}
	for k, n := range tagged {
		if got := c.Tags[c.Tag[n]]; got != want[k] {
			t.Errorf("%s: node %d tagged %q, want %q", k, n, got, want[k])
		}
	}
	if got := c.Tags[c.Tag[x]]; got != "" {
		t.Errorf("input tagged %q, want the root tag \"\"", got)
	}
	seen := map[string]bool{}
	for _, tag := range c.Tags {
		if seen[tag] {
			t.Errorf("tag %q interned twice: %q", tag, c.Tags)
		}
		seen[tag] = true
	}
	// Every scope opened, including the intermediate ones, is a tag.
	wantTags := []string{"", "block 1", "block 1/round 1", "block 1/round 1/theta", "block 1/round 1/chi", "block 1/round 2", "block 1/round 2/theta"}
	if !reflect.DeepEqual(c.Tags, wantTags) {
		t.Errorf("Tags = %q, want %q", c.Tags, wantTags)
	}
}

// TestScopeRestoredAfterPanic checks that a panic inside a scope does not
// leave the scope open.
func TestScopeRestoredAfterPanic(t *testing.T) {
	b := circuit.NewBuilder()
	x := b.Input("x", 1)[0]
	func() {
		defer func() { _ = recover() }()
		b.Scope("doomed", func() { panic("boom") })
	}()
	n := b.Not(x)
	c := b.Circuit()
	if got := c.Tags[c.Tag[n]]; got != "" {
		t.Errorf("node after a panicking scope tagged %q, want \"\"", got)
	}
}

// TestInputsOutputsRanges checks the input and output tables and their
// named ranges.
func TestInputsOutputsRanges(t *testing.T) {
	b := circuit.NewBuilder()
	msg := b.Input("msg", 3)
	key := b.Input("key", 2)
	b.Output("digest", []circuit.Node{b.Xor(msg...), b.And(key...)})
	b.Output("echo", msg[:1])
	b.Output("none", nil)
	c := b.Circuit()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	wantIn := []circuit.Range{{Name: "msg", Start: 0, Len: 3}, {Name: "key", Start: 3, Len: 2}}
	wantOut := []circuit.Range{{Name: "digest", Start: 0, Len: 2}, {Name: "echo", Start: 2, Len: 1}, {Name: "none", Start: 3, Len: 0}}
	if !reflect.DeepEqual(c.InputRanges, wantIn) {
		t.Errorf("InputRanges = %+v, want %+v", c.InputRanges, wantIn)
	}
	if !reflect.DeepEqual(c.OutputRanges, wantOut) {
		t.Errorf("OutputRanges = %+v, want %+v", c.OutputRanges, wantOut)
	}
	for i, n := range append(msg, key...) {
		if c.Inputs[i] != n || c.Ops[n] != circuit.OpInput || c.Param[n] != int32(i) {
			t.Errorf("input %d: node %d (%s, param %d)", i, c.Inputs[i], c.Ops[n], c.Param[n])
		}
	}
	if len(c.Outputs) != 3 || c.Outputs[2] != msg[0] {
		t.Errorf("Outputs = %v", c.Outputs)
	}
}

func TestOpString(t *testing.T) {
	want := []string{"INPUT", "CONST", "NOT", "AND", "OR", "XOR", "ANDNOT", "THRESHOLD", "SUMBIT"}
	for i, w := range want {
		if got := circuit.Op(i).String(); got != w {
			t.Errorf("Op(%d) = %q, want %q", i, got, w)
		}
	}
	if got := circuit.Op(200).String(); got != "Op(200)" {
		t.Errorf("Op(200) = %q", got)
	}
}

func TestEvalInputCount(t *testing.T) {
	b := circuit.NewBuilder()
	b.Output("y", []circuit.Node{b.Xor(b.Input("x", 3)...)})
	c := b.Circuit()
	for _, n := range []int{0, 2, 4} {
		if _, err := c.Eval(make([]uint64, n)); err == nil || !strings.Contains(err.Error(), "input words") {
			t.Errorf("%d words for 3 inputs: err = %v", n, err)
		}
	}
}

// TestEmptyCircuit checks the smallest circuit: no nodes at all.
func TestEmptyCircuit(t *testing.T) {
	c := circuit.NewBuilder().Circuit()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	out, err := c.Eval(nil)
	if err != nil || len(out) != 0 {
		t.Fatalf("Eval = %v, %v", out, err)
	}
	data, err := c.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var d circuit.Circuit
	if err := d.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	if d.NumNodes() != 0 {
		t.Errorf("decoded %d nodes", d.NumNodes())
	}
}

// TestStats checks Stats on a hand-built circuit:
//
//	x0 x1 x2         inputs           depth 0
//	k = CONST 1                       depth 0
//	n = NOT x0                        depth 1
//	a = AND(n, x1)                    depth 2
//	o = XOR(a, x2, k)                 depth 3
//	t = THRESHOLD(2; o, n, x1)        depth 4
//	i = ANDNOT(x0, x1)                depth 1
func TestStats(t *testing.T) {
	b := circuit.NewBuilder()
	x := b.Input("x", 3)
	k := b.Const(1)
	n := b.Not(x[0])
	a := b.And(n, x[1])
	o := b.Xor(a, x[2], k)
	th := b.Threshold(2, []circuit.Node{o, n, x[1]}, []int32{2, -1, 1})
	i := b.AndNot(x[0], x[1])
	b.Output("y", []circuit.Node{th, i, th})
	c := b.Circuit()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	s := c.Stats()
	want := circuit.Stats{Nodes: 9, Inputs: 3, Outputs: 3, Edges: 1 + 2 + 3 + 3 + 2, Depth: 4}
	want.ByOp[circuit.OpInput] = 3
	want.ByOp[circuit.OpConst] = 1
	want.ByOp[circuit.OpNot] = 1
	want.ByOp[circuit.OpAnd] = 1
	want.ByOp[circuit.OpXor] = 1
	want.ByOp[circuit.OpThreshold] = 1
	want.ByOp[circuit.OpAndNot] = 1
	if s != want {
		t.Errorf("Stats = %+v\nwant    %+v", s, want)
	}
	if c.NumNodes() != 9 {
		t.Errorf("NumNodes = %d", c.NumNodes())
	}
	args, ws := c.Operands(th)
	if !reflect.DeepEqual(args, []circuit.Node{o, n, x[1]}) || !reflect.DeepEqual(ws, []int32{2, -1, 1}) {
		t.Errorf("Operands(threshold) = %v, %v", args, ws)
	}
}

// validCircuit returns a small valid circuit using every op, ranges, tags
// and attributes.
func validCircuit() *circuit.Circuit {
	b := circuit.NewBuilder()
	x := b.Input("msg", 3)
	y := b.Input("key", 1)
	var out []circuit.Node
	b.Scope("round 1", func() {
		b.Scope("theta", func() {
			b.At(3, func() { out = append(out, b.Xor(x[0], x[1], x[2], y[0])) })
		})
		b.Scope("chi", func() {
			b.At(300, func() { out = append(out, b.AndNot(x[0], x[1], x[2])) })
		})
		out = append(out, b.Threshold(-1, []circuit.Node{x[0], x[2], y[0]}, []int32{70000, -2, -300}))
	})
	b.SetPos(x[1], 0)
	out = append(out, b.Not(out[0]))
	out = append(out, b.And(out[1], out[2]))
	out = append(out, b.Or(x[0], out[3]), b.Const(1), b.Const(0))
	b.Output("digest", out[:4])
	b.Output("extra", out[4:])
	b.SetAttr("rate", 40)
	b.SetAttr("w", 2)
	b.SetAttr("negative", -1<<40)
	return b.Circuit()
}

// cloneCircuit deep-copies c so that a test can corrupt the copy.
func cloneCircuit(c *circuit.Circuit) *circuit.Circuit {
	d := *c
	d.Ops = append([]circuit.Op(nil), c.Ops...)
	d.Param = append([]int32(nil), c.Param...)
	d.Tag = append([]int32(nil), c.Tag...)
	d.ArgStart = append([]int32(nil), c.ArgStart...)
	d.Args = append([]circuit.Node(nil), c.Args...)
	d.Weights = append([]int32(nil), c.Weights...)
	if c.Pos != nil {
		d.Pos = append([]int32{}, c.Pos...)
	}
	d.Tags = append([]string(nil), c.Tags...)
	d.Inputs = append([]circuit.Node(nil), c.Inputs...)
	d.InputRanges = append([]circuit.Range(nil), c.InputRanges...)
	d.Outputs = append([]circuit.Node(nil), c.Outputs...)
	d.OutputRanges = append([]circuit.Range(nil), c.OutputRanges...)
	if c.Attrs != nil {
		d.Attrs = map[string]int64{}
		for k, v := range c.Attrs {
			d.Attrs[k] = v
		}
	}
	return &d
}

// firstNode returns the first node computing op.
func firstNode(c *circuit.Circuit, op circuit.Op) int {
	for i, o := range c.Ops {
		if o == op {
			return i
		}
	}
	panic("no " + op.String())
}

// setOperands replaces node i's operands (and weights), shifting the rest.
func setOperands(c *circuit.Circuit, i int, args []circuit.Node) {
	a, b := c.ArgStart[i], c.ArgStart[i+1]
	w := make([]int32, len(args))
	for k := range w {
		w[k] = 1
	}
	c.Args = append(append(append([]circuit.Node(nil), c.Args[:a]...), args...), c.Args[b:]...)
	c.Weights = append(append(append([]int32(nil), c.Weights[:a]...), w...), c.Weights[b:]...)
	d := int32(len(args)) - (b - a)
	for k := i + 1; k < len(c.ArgStart); k++ {
		c.ArgStart[k] += d
	}
}

// validateCases are corruptions of validCircuit, each with a fragment of
// the error message that must name the problem.
func validateCases() []struct {
	name    string
	corrupt func(c *circuit.Circuit)
	want    string
} {
	return []struct {
		name    string
		corrupt func(c *circuit.Circuit)
		want    string
	}{
		{"params length", func(c *circuit.Circuit) { c.Param = c.Param[1:] }, "params"},
		{"tags length", func(c *circuit.Circuit) { c.Tag = append(c.Tag, 0) }, "tags"},
		{"ArgStart length", func(c *circuit.Circuit) { c.ArgStart = c.ArgStart[:len(c.ArgStart)-1] }, "ArgStart has"},
		{"weights length", func(c *circuit.Circuit) { c.Weights = c.Weights[1:] }, "weights"},
		{"ArgStart[0] not 0", func(c *circuit.Circuit) { c.ArgStart[0] = 1 }, "does not span"},
		{"ArgStart short of Args", func(c *circuit.Circuit) {
			c.Args = append(c.Args, 0)
			c.Weights = append(c.Weights, 1)
		}, "does not span"},
		{"ArgStart past Args", func(c *circuit.Circuit) { c.ArgStart[len(c.ArgStart)-1]++ }, "does not span"},
		{"ArgStart decreasing", func(c *circuit.Circuit) {
			i := firstNode(c, circuit.OpXor)
			c.ArgStart[i+1] = c.ArgStart[i] - 1
		}, "decrease"},
		// The last node with operands (OR) reads past the end of Args
		// unless Validate bounds the offsets before using them.
		{"ArgStart beyond Args mid-way", func(c *circuit.Circuit) {
			i := firstNode(c, circuit.OpOr)
			c.ArgStart[i+1] = int32(len(c.Args)) + 100
		}, "operand offsets"},
		{"ArgStart huge mid-way", func(c *circuit.Circuit) {
			i := firstNode(c, circuit.OpOr)
			c.ArgStart[i+1] = math.MaxInt32
		}, "operand offsets"},
		{"self reference", func(c *circuit.Circuit) {
			i := firstNode(c, circuit.OpXor)
			c.Args[c.ArgStart[i]] = circuit.Node(i)
		}, "not an earlier node"},
		{"forward reference (cycle)", func(c *circuit.Circuit) {
			i := firstNode(c, circuit.OpXor)
			c.Args[c.ArgStart[i]] = circuit.Node(i + 2)
		}, "not an earlier node"},
		{"operand out of range", func(c *circuit.Circuit) {
			i := firstNode(c, circuit.OpAndNot)
			c.Args[c.ArgStart[i]] = circuit.Node(len(c.Ops) + 7)
		}, "not an earlier node"},
		{"negative operand", func(c *circuit.Circuit) {
			i := firstNode(c, circuit.OpAnd)
			c.Args[c.ArgStart[i]] = -1
		}, "not an earlier node"},
		{"tag out of range", func(c *circuit.Circuit) { c.Tag[5] = int32(len(c.Tags)) }, "tag"},
		{"negative tag", func(c *circuit.Circuit) { c.Tag[0] = -1 }, "tag -1"},
		{"unknown op", func(c *circuit.Circuit) { c.Ops[firstNode(c, circuit.OpOr)] = 99 }, "unknown op 99"},
		{"NOT with two operands", func(c *circuit.Circuit) {
			setOperands(c, firstNode(c, circuit.OpNot), []circuit.Node{0, 1})
		}, "NOT has 2 operands, want 1"},
		{"NOT without operands", func(c *circuit.Circuit) {
			setOperands(c, firstNode(c, circuit.OpNot), nil)
		}, "NOT has 0 operands, want 1"},
		{"AND without operands", func(c *circuit.Circuit) {
			setOperands(c, firstNode(c, circuit.OpAnd), nil)
		}, "AND has no operands"},
		{"XOR without operands", func(c *circuit.Circuit) {
			setOperands(c, firstNode(c, circuit.OpXor), nil)
		}, "XOR has no operands"},
		{"THRESHOLD without operands", func(c *circuit.Circuit) {
			setOperands(c, firstNode(c, circuit.OpThreshold), nil)
		}, "THRESHOLD has no operands"},
		{"ANDNOT with one operand", func(c *circuit.Circuit) {
			setOperands(c, firstNode(c, circuit.OpAndNot), []circuit.Node{0})
		}, "ANDNOT has 1 operands"},
		{"CONST with value 2", func(c *circuit.Circuit) { c.Param[firstNode(c, circuit.OpConst)] = 2 }, "CONST"},
		{"CONST with an operand", func(c *circuit.Circuit) {
			setOperands(c, firstNode(c, circuit.OpConst), []circuit.Node{0})
		}, "CONST"},
		{"INPUT with an operand", func(c *circuit.Circuit) { setOperands(c, 1, []circuit.Node{0}) }, "INPUT"},
		{"INPUT position wrong", func(c *circuit.Circuit) { c.Param[1] = 0 }, "INPUT 0 does not match"},
		{"INPUT position out of range", func(c *circuit.Circuit) { c.Param[1] = 4 }, "INPUT 4"},
		{"INPUT position negative", func(c *circuit.Circuit) { c.Param[1] = -1 }, "INPUT -1"},
		{"input table names a non-input", func(c *circuit.Circuit) { c.Inputs[2] = 5 }, "INPUT 2 does not match"},
		{"input without INPUT node", func(c *circuit.Circuit) { c.Inputs = append(c.Inputs, 5) }, "input 4 has no INPUT node"},
		{"output out of range", func(c *circuit.Circuit) { c.Outputs[1] = circuit.Node(len(c.Ops)) }, "output 1 refers to node"},
		{"negative output", func(c *circuit.Circuit) { c.Outputs[0] = -3 }, "output 0 refers to node -3"},
		{"input range too long", func(c *circuit.Circuit) { c.InputRanges[1].Len = 2 }, `input range "key"`},
		{"input range negative start", func(c *circuit.Circuit) { c.InputRanges[0].Start = -1 }, `input range "msg"`},
		{"input range negative length", func(c *circuit.Circuit) { c.InputRanges[0].Len = -1 }, `input range "msg"`},
		{"output range too long", func(c *circuit.Circuit) { c.OutputRanges[1].Start = 5 }, `output range "extra"`},
		{"output range overflowing", func(c *circuit.Circuit) {
			c.OutputRanges[0].Start = 2
			c.OutputRanges[0].Len = math.MaxInt
		}, `output range "digest"`},
		{"hints short", func(c *circuit.Circuit) { c.Pos = c.Pos[1:] }, "position hints: 11 entries for 12 values"},
		{"hints long", func(c *circuit.Circuit) { c.Pos = append(c.Pos, 0) }, "position hints: 13 entries for 12 values"},
		{"hint below NoPos", func(c *circuit.Circuit) { c.Pos[4] = -2 }, "value 4 has hint -2"},
		{"hints empty", func(c *circuit.Circuit) { c.Pos = []int32{} }, "position hints: 0 entries"},
		{"input range overflowing", func(c *circuit.Circuit) {
			c.InputRanges[0].Start = math.MaxInt
			c.InputRanges[0].Len = math.MaxInt
		}, `input range "msg"`},
	}
}

// TestValidate checks that Validate accepts validCircuit and rejects each
// corruption of it with a message naming the problem.
func TestValidate(t *testing.T) {
	if err := validCircuit().Validate(); err != nil {
		t.Fatalf("valid circuit rejected: %v", err)
	}
	for _, tc := range validateCases() {
		t.Run(tc.name, func(t *testing.T) {
			c := cloneCircuit(validCircuit())
			tc.corrupt(c)
			err := c.Validate()
			if err == nil {
				t.Fatalf("accepted")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
			if !strings.HasPrefix(err.Error(), "circuit: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
		})
	}
}

// TestValidateEmptyArgs checks that a circuit without nodes may not carry
// operands either.
func TestValidateEmptyArgs(t *testing.T) {
	c := &circuit.Circuit{ArgStart: []int32{0}, Args: []circuit.Node{0}, Weights: []int32{1}}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "does not span") {
		t.Errorf("stray operands of an empty circuit: err = %v", err)
	}
	c = &circuit.Circuit{ArgStart: []int32{3}}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "does not span") {
		t.Errorf("ArgStart = [3] for an empty circuit: err = %v", err)
	}
}

// TestMarshalRoundTrip checks that decoding an encoding gives back an
// equal circuit, and that the encoding is deterministic.
func TestMarshalRoundTrip(t *testing.T) {
	c := validCircuit()
	data, err := c.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var d circuit.Circuit
	if err := d.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c, &d) {
		t.Errorf("round trip differs:\n got %+v\nwant %+v", &d, c)
	}
	again, _ := d.MarshalBinary()
	if !bytes.Equal(data, again) {
		t.Errorf("re-encoding differs")
	}
	// Attribute order does not change the bytes (map iteration is random).
	for range 10 {
		again, _ := cloneCircuit(c).MarshalBinary()
		if !bytes.Equal(data, again) {
			t.Fatalf("encoding is not deterministic")
		}
	}
}

// TestMarshalRoundTripRandom round-trips random circuits with values of
// every packing width.
func TestMarshalRoundTripRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for iter := 0; iter < 50; iter++ {
		c := randomCircuit(rng, 20+rng.IntN(200))
		data, err := c.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var d circuit.Circuit
		if err := d.UnmarshalBinary(data); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(c, &d) {
			t.Fatalf("round trip of a %d-node circuit differs", c.NumNodes())
		}
	}
}

// randomCircuit builds a valid random circuit with about n nodes.
func randomCircuit(rng *rand.Rand, n int) *circuit.Circuit {
	b := circuit.NewBuilder()
	nodes := b.Input("x", 1+rng.IntN(8))
	scopes := []string{"a", "b", "round 7", "théta"}
	for len(nodes) < n {
		b.Scope(scopes[rng.IntN(len(scopes))], func() {
			pick := func(k int) []circuit.Node {
				out := make([]circuit.Node, k)
				for i := range out {
					out[i] = nodes[rng.IntN(len(nodes))]
				}
				return out
			}
			var x circuit.Node
			switch rng.IntN(8) {
			case 0:
				x = b.Const(rng.IntN(2))
			case 1:
				x = b.Not(pick(1)[0])
			case 2:
				x = b.And(pick(1 + rng.IntN(4))...)
			case 3:
				x = b.Or(pick(1 + rng.IntN(4))...)
			case 4:
				x = b.Xor(pick(1 + rng.IntN(11))...)
			case 5:
				args := pick(2 + rng.IntN(3))
				x = b.AndNot(args[0], args[1:]...)
			case 6:
				k := 1 + rng.IntN(6)
				w := make([]int32, k)
				for i := range w {
					w[i] = int32(rng.Uint32()) >> (rng.IntN(4) * 8)
				}
				x = b.Threshold(int32(rng.Uint32())>>(rng.IntN(4)*8), pick(k), w)
			case 7:
				k := 1 + rng.IntN(8)
				e := make([]int32, k)
				for i := range e {
					e[i] = int32(rng.IntN(circuit.MaxSumBit + 1))
				}
				x = b.SumBit(rng.IntN(circuit.MaxSumBit+1), pick(k), e)
			}
			nodes = append(nodes, x)
		})
	}
	k := rng.IntN(len(nodes))
	b.Output("y", nodes[k:])
	b.SetAttr("k", int64(k))
	// Position hints in half the circuits: −1…69 (one byte packed) and
	// now and then one that needs four bytes.
	if rng.IntN(2) == 0 {
		for _, x := range nodes {
			p := rng.IntN(71) - 1
			if rng.IntN(20) == 0 {
				p = 1 << 20
			}
			b.SetPos(x, p)
		}
	}
	return b.Circuit()
}

// TestUnmarshalTruncated checks that every proper prefix of an encoding,
// and the encoding with trailing bytes, is rejected.
func TestUnmarshalTruncated(t *testing.T) {
	data, _ := validCircuit().MarshalBinary()
	for n := 0; n < len(data); n++ {
		var d circuit.Circuit
		if err := d.UnmarshalBinary(data[:n]); err == nil {
			t.Fatalf("prefix of %d/%d bytes accepted", n, len(data))
		}
	}
	var d circuit.Circuit
	if err := d.UnmarshalBinary(append(append([]byte(nil), data...), 0)); err == nil || !strings.Contains(err.Error(), "trailing") {
		t.Errorf("trailing byte: err = %v", err)
	}
}

// TestUnmarshalGarbled flips bytes and bits of an encoding: decoding must
// never panic, and whatever it accepts must validate and evaluate.
func TestUnmarshalGarbled(t *testing.T) {
	data, _ := validCircuit().MarshalBinary()
	try := func(b []byte) {
		var d circuit.Circuit
		if err := d.UnmarshalBinary(b); err != nil {
			return
		}
		if err := d.Validate(); err != nil {
			t.Fatalf("decoded an invalid circuit: %v", err)
		}
		if _, err := d.Eval(make([]uint64, len(d.Inputs))); err != nil {
			t.Fatal(err)
		}
	}
	for i := range data {
		for _, v := range []byte{0, 1, 0x7f, 0x80, 0xff, data[i] ^ 1, data[i] + 1, data[i] - 1} {
			b := append([]byte(nil), data...)
			b[i] = v
			try(b)
		}
	}
}

// TestUnmarshalRejects checks specific bad blobs and that a failed decode
// leaves the receiver untouched.
func TestUnmarshalRejects(t *testing.T) {
	good, _ := validCircuit().MarshalBinary()
	bad := cloneCircuit(validCircuit())
	bad.Args[len(bad.Args)-1] = circuit.Node(len(bad.Ops)) // invalid operand
	invalid, _ := bad.MarshalBinary()
	wrongVersion := append([]byte(nil), good...)
	wrongVersion[4] = 1
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"nil", nil, "TCLC"},
		{"short", []byte("TCL"), "TCLC"},
		{"wrong magic", append([]byte("TCLT"), good[4:]...), "TCLC"},
		{"old version", wrongVersion, "version 1"},
		{"invalid circuit", invalid, "not an earlier node"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			keep := validCircuit()
			d := cloneCircuit(keep)
			err := d.UnmarshalBinary(tc.data)
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "decoding logic circuit") {
				t.Errorf("error %q, want it to mention %q", err, tc.want)
			}
			if !reflect.DeepEqual(d, keep) {
				t.Errorf("failed decode modified the receiver")
			}
		})
	}
}

// TestUnmarshalCorruptTable checks that a corrupted circuit, encoded
// faithfully, is rejected by decoding with the same problem Validate names.
func TestUnmarshalCorruptTable(t *testing.T) {
	for _, tc := range validateCases() {
		c := cloneCircuit(validCircuit())
		tc.corrupt(c)
		data, err := c.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var d circuit.Circuit
		if err := d.UnmarshalBinary(data); err == nil {
			t.Errorf("%s: decoded", tc.name)
		}
	}
}
