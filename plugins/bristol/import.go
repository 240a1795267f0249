package bristol

import (
	"strconv"

	bf "github.com/tcforge/tcforge/sdk/bristol"
	"github.com/tcforge/tcforge/sdk/circuit"
)

// toCircuit builds the logic circuit of a netlist. Input group k is the
// input range "ink", output group k the output range "outk"; each node is
// tagged with its gate's kind. Gates become nodes as follows:
//
//   - EQ is a CONST; EQW makes no node (its result is its operand's node);
//     a MAND of k is k ANDs.
//   - XOR and AND: a gate whose result is read by exactly one gate of the
//     same kind, and is not an output, is merged into that reader, up to
//     maxArity operands, so a tree of binary XORs becomes the n-ary XOR the
//     logic IR has (each backend then realises it its own way).
//   - INV is a NOT, except that an INV whose result only one AND reads (and
//     is not an output) becomes the negated operand of that AND: an ANDNOT,
//     the IR op that the export lowers to INV and AND. An AND that would get
//     two negated operands keeps the second as a NOT.
//
// maxArity 2 with no INV folded would be one node a gate; the merging only
// regroups associative operations and moves negations into the ANDNOT
// that means them, so the function is the netlist's.
func toCircuit(nl *bf.Netlist, maxArity int) *circuit.Circuit {
	im := newImporter(nl, maxArity)
	b := im.b
	at := 0
	for k, n := range nl.Inputs {
		at += copy(im.node[at:], b.Input("in"+strconv.Itoa(k+1), n))
	}
	// One scope a run of gates of the same kind.
	for g := 0; g < len(nl.Ops); {
		op, end := nl.Ops[g], g+1
		for end < len(nl.Ops) && nl.Ops[end] == op {
			end++
		}
		if op == bf.EQW {
			g = end
			continue
		}
		b.Scope(op.String(), func() {
			for ; g < end; g++ {
				_, in, out := nl.Gate(g)
				switch op {
				case bf.XOR, bf.AND:
					im.binary(op, in[0], in[1], out[0])
				case bf.INV:
					im.inv(in[0], out[0])
				case bf.EQ:
					im.node[out[0]] = b.Const(int(in[0]))
				case bf.MAND:
					k := len(out)
					for i := range k {
						im.binary(bf.AND, in[i], in[k+i], out[i])
					}
				}
			}
		})
	}
	at = nl.NumWires - nl.NumOutputs()
	for k, n := range nl.Outputs {
		outs := make([]circuit.Node, n)
		for i := range outs {
			outs[i] = im.node[im.src[at+i]]
		}
		b.Output("out"+strconv.Itoa(k+1), outs)
		at += n
	}
	s := nl.Stats()
	b.SetAttr("file_gates", int64(s.Gates))
	b.SetAttr("file_wires", int64(s.Wires))
	b.SetAttr("file_and_gates", int64(s.ANDs))
	b.SetAttr("file_depth", int64(s.Depth))
	b.SetAttr("file_and_depth", int64(s.ANDDepth))
	return b.Circuit()
}

// Special values of importer.reader.
const (
	unread = -1
	many   = -2
)

// importer holds the per-wire state of toCircuit.
type importer struct {
	b        *circuit.Builder
	maxArity int
	src      []int32        // the wire an EQW result copies (itself otherwise)
	reader   []int8         // the op of the only gate reading the wire (MAND as AND), or unread, many
	node     []circuit.Node // the wire's node, once built
	pending  []operands     // the operands of a gate merged into its reader, not built
	negated  []bool         // the wire is an INV folded into its AND reader: ¬node[wire]
}

// operands are a merged XOR or AND: args, and for an AND possibly one
// negated operand neg (an ANDNOT).
type operands struct {
	args   []circuit.Node
	neg    circuit.Node
	hasNeg bool
}

func newImporter(nl *bf.Netlist, maxArity int) *importer {
	s := nl.Stats()
	im := &importer{
		b:        circuit.NewBuilder(),
		maxArity: maxArity,
		src:      make([]int32, nl.NumWires),
		reader:   make([]int8, nl.NumWires),
		node:     make([]circuit.Node, nl.NumWires),
		pending:  make([]operands, nl.NumWires),
		negated:  make([]bool, nl.NumWires),
	}
	im.b.Grow(nl.NumInputs()+len(nl.Ops)+s.ANDs, 2*len(nl.Ops)+2*s.ANDs)
	for w := range im.src {
		im.src[w] = int32(w)
		im.reader[w] = unread
	}
	for g := range nl.Ops {
		if op, in, out := nl.Gate(g); op == bf.EQW {
			im.src[out[0]] = im.src[in[0]]
		}
	}
	for g := range nl.Ops {
		op, in, _ := nl.Gate(g)
		if op == bf.EQ || op == bf.EQW {
			continue
		}
		if op == bf.MAND {
			op = bf.AND
		}
		for _, w := range in {
			w = im.src[w]
			if im.reader[w] == unread {
				im.reader[w] = int8(op)
			} else {
				im.reader[w] = many
			}
		}
	}
	for w := nl.NumWires - nl.NumOutputs(); w < nl.NumWires; w++ {
		im.reader[im.src[w]] = many
	}
	return im
}

// operand returns wire w as operands of a gate of kind op reading it.
func (im *importer) operand(w int32) operands {
	w = im.src[w]
	switch {
	case im.pending[w].args != nil || im.pending[w].hasNeg:
		o := im.pending[w]
		im.pending[w] = operands{}
		return o
	case im.negated[w]:
		return operands{neg: im.node[w], hasNeg: true}
	}
	return operands{args: []circuit.Node{im.node[w]}}
}

// inv adds c = ¬a: folded into c's only reader if that is an AND.
func (im *importer) inv(a, c int32) {
	x := im.node[im.src[a]]
	if im.reader[c] == int8(bf.AND) {
		im.node[c], im.negated[c] = x, true
		return
	}
	im.node[c] = im.b.Not(x)
}

// binary adds c = a op b for op XOR or AND, merged into c's reader where it
// can be (see toCircuit).
func (im *importer) binary(op bf.Op, a, b, c int32) {
	x, y := im.operand(a), im.operand(b)
	o := operands{args: append(x.args, y.args...), neg: x.neg, hasNeg: x.hasNeg}
	switch {
	case y.hasNeg && x.hasNeg:
		o.args = append(o.args, im.b.Not(y.neg))
	case y.hasNeg:
		o.neg, o.hasNeg = y.neg, true
	}
	n := len(o.args)
	if o.hasNeg {
		n++
	}
	if im.reader[c] == int8(op) && n < im.maxArity {
		im.pending[c] = o
		return
	}
	if n > im.maxArity {
		h := len(o.args) / 2
		lo, hi := operands{args: o.args[:h]}, operands{args: o.args[h:]}
		o.args = []circuit.Node{im.build(op, lo), im.build(op, hi)}
	}
	im.node[c] = im.build(op, o)
}

// build makes the node of a merged XOR or AND.
func (im *importer) build(op bf.Op, o operands) circuit.Node {
	switch {
	case op == bf.XOR:
		return im.b.Xor(o.args...)
	case o.hasNeg:
		return im.b.AndNot(o.neg, o.args...)
	case len(o.args) == 1:
		return o.args[0]
	}
	return im.b.And(o.args...)
}
