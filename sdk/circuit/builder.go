package circuit

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Builder appends nodes to a circuit in topological order. Every node gets
// the provenance tag of the innermost Scope open when it is created, and
// the position hint of the innermost At (NoPos outside any).
//
// The zero Builder is not usable; call NewBuilder.
type Builder struct {
	c      Circuit
	tagIdx map[string]int32
	scope  []string
	cur    int32
	pos    int32 // hint of the innermost open At
}

// NewBuilder returns an empty builder.
func NewBuilder() *Builder {
	b := &Builder{tagIdx: map[string]int32{}, pos: NoPos}
	b.c.ArgStart = []int32{0}
	b.cur = b.intern("")
	return b
}

func (b *Builder) intern(tag string) int32 {
	if i, ok := b.tagIdx[tag]; ok {
		return i
	}
	i := int32(len(b.c.Tags))
	b.c.Tags = append(b.c.Tags, tag)
	b.tagIdx[tag] = i
	return i
}

// Grow reserves room for about nodes more nodes with args more operands, so
// that building a large circuit does not copy its arrays as they grow.
func (b *Builder) Grow(nodes, args int) {
	b.c.Ops = slices.Grow(b.c.Ops, nodes)
	b.c.Param = slices.Grow(b.c.Param, nodes)
	b.c.Tag = slices.Grow(b.c.Tag, nodes)
	b.c.ArgStart = slices.Grow(b.c.ArgStart, nodes)
	b.c.Args = slices.Grow(b.c.Args, args)
	b.c.Weights = slices.Grow(b.c.Weights, args)
	if b.c.Pos != nil {
		b.c.Pos = slices.Grow(b.c.Pos, nodes)
	}
}

// Scope runs fn with name appended to the provenance path ("round 3/theta").
func (b *Builder) Scope(name string, fn func()) {
	b.scope = append(b.scope, name)
	prev := b.cur
	b.cur = b.intern(strings.Join(b.scope, "/"))
	defer func() {
		b.scope = b.scope[:len(b.scope)-1]
		b.cur = prev
	}()
	fn()
}

// At runs fn with pos as the position hint of every node created inside
// it, inputs included (see Circuit.Pos): the slice z of a Keccak state
// bit, the bit index of an adder's sum. Calls nest; the innermost wins,
// and closing one restores the enclosing hint. pos NoPos (−1) marks nodes
// as having none; a position below −1 panics. A circuit none of whose
// nodes was built inside At or named by SetPos carries no hints (Pos nil).
func (b *Builder) At(pos int, fn func()) {
	b.checkPos(pos)
	b.hint()
	prev := b.pos
	b.pos = int32(pos)
	defer func() { b.pos = prev }()
	fn()
}

// SetPos sets the position hint of an existing node n, for one created
// outside the At it belongs to (e.g. an input word made in one call and
// spread over positions afterwards). A later SetPos of the same node wins.
func (b *Builder) SetPos(n Node, pos int) {
	if n < 0 || int(n) >= len(b.c.Ops) {
		panic(fmt.Sprintf("circuit.Builder: SetPos of node %d, not an existing node", n))
	}
	b.checkPos(pos)
	b.hint()
	b.c.Pos[n] = int32(pos)
}

// PosOf returns the position hint node n has so far (NoPos: none).
func (b *Builder) PosOf(n Node) int32 {
	if n < 0 || int(n) >= len(b.c.Ops) {
		panic(fmt.Sprintf("circuit.Builder: PosOf node %d, not an existing node", n))
	}
	return b.c.PosOf(n)
}

func (b *Builder) checkPos(pos int) {
	if pos < NoPos || pos > math.MaxInt32 {
		panic(fmt.Sprintf("circuit.Builder: position hint %d, want %d (none) or a position 0…%d", pos, NoPos, math.MaxInt32))
	}
}

// hint makes the circuit carry hints: every node so far gets NoPos.
func (b *Builder) hint() {
	if b.c.Pos != nil {
		return
	}
	b.c.Pos = make([]int32, len(b.c.Ops), cap(b.c.Ops))
	for i := range b.c.Pos {
		b.c.Pos[i] = NoPos
	}
}

func (b *Builder) node(op Op, param int32, args []Node, weights []int32) Node {
	id := Node(len(b.c.Ops))
	for _, a := range args {
		if a < 0 || a >= id {
			panic(fmt.Sprintf("circuit.Builder: %s operand %d is not an existing node", op, a))
		}
	}
	b.c.Ops = append(b.c.Ops, op)
	b.c.Param = append(b.c.Param, param)
	b.c.Tag = append(b.c.Tag, b.cur)
	if b.c.Pos != nil {
		b.c.Pos = append(b.c.Pos, b.pos)
	}
	b.c.Args = append(b.c.Args, args...)
	if weights == nil {
		for range args {
			b.c.Weights = append(b.c.Weights, 1)
		}
	} else {
		b.c.Weights = append(b.c.Weights, weights...)
	}
	b.c.ArgStart = append(b.c.ArgStart, int32(len(b.c.Args)))
	return id
}

// Input adds n input bits under the given range name and returns their nodes.
func (b *Builder) Input(name string, n int) []Node {
	b.c.InputRanges = append(b.c.InputRanges, Range{Name: name, Start: len(b.c.Inputs), Len: n})
	out := make([]Node, n)
	for i := range out {
		out[i] = b.node(OpInput, int32(len(b.c.Inputs)), nil, nil)
		b.c.Inputs = append(b.c.Inputs, out[i])
	}
	return out
}

// Output appends nodes to the circuit's outputs under the given range name.
func (b *Builder) Output(name string, nodes []Node) {
	b.c.OutputRanges = append(b.c.OutputRanges, Range{Name: name, Start: len(b.c.Outputs), Len: len(nodes)})
	b.c.Outputs = append(b.c.Outputs, nodes...)
}

// Const returns a constant node of the given value (0 or 1). Each call makes
// a fresh node, so that each constant keeps the provenance of its use.
func (b *Builder) Const(v int) Node {
	return b.node(OpConst, int32(v&1), nil, nil)
}

// Zeros returns n fresh constant-0 nodes.
func (b *Builder) Zeros(n int) []Node {
	out := make([]Node, n)
	for i := range out {
		out[i] = b.Const(0)
	}
	return out
}

// Not returns ¬x.
func (b *Builder) Not(x Node) Node { return b.node(OpNot, 0, []Node{x}, nil) }

// And returns the conjunction of xs.
func (b *Builder) And(xs ...Node) Node { return b.node(OpAnd, 0, xs, nil) }

// Or returns the disjunction of xs.
func (b *Builder) Or(xs ...Node) Node { return b.node(OpOr, 0, xs, nil) }

// Copy returns an explicit register holding x: a one-operand OR. Constructions
// use it where a value is materialised in a level of its own (the paper's
// "state-building" level); optimising backends fold it away.
func (b *Builder) Copy(x Node) Node { return b.node(OpOr, 0, []Node{x}, nil) }

// Xor returns the parity of xs.
func (b *Builder) Xor(xs ...Node) Node { return b.node(OpXor, 0, xs, nil) }

// AndNot returns ¬x0 ∧ xs[0] ∧ xs[1] ∧ … (Reifier's inhib).
func (b *Builder) AndNot(x0 Node, xs ...Node) Node {
	args := append([]Node{x0}, xs...)
	return b.node(OpAndNot, 0, args, nil)
}

// XorConst returns x ⊕ bit: a NOT when bit is 1, x itself when bit is 0.
func (b *Builder) XorConst(x Node, bit uint) Node {
	if bit&1 == 1 {
		return b.Not(x)
	}
	return x
}

// Threshold returns the gate [Σ weights[k]·xs[k] ≥ theta].
func (b *Builder) Threshold(theta int32, xs []Node, weights []int32) Node {
	if len(xs) != len(weights) {
		panic(fmt.Sprintf("circuit.Builder: threshold with %d operands and %d weights", len(xs), len(weights)))
	}
	return b.node(OpThreshold, theta, xs, weights)
}

// SetAttr records a named integer fact about the construction (see Circuit.Attrs).
func (b *Builder) SetAttr(name string, v int64) {
	if b.c.Attrs == nil {
		b.c.Attrs = map[string]int64{}
	}
	b.c.Attrs[name] = v
}

// Circuit returns the built circuit. The builder must not be used afterwards.
func (b *Builder) Circuit() *Circuit {
	c := b.c
	b.c = Circuit{}
	return &c
}
