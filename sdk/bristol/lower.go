package bristol

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"

	"github.com/tcforge/tcforge/sdk/circuit"
)

// FromCircuit lowers a logic circuit to a Bristol Fashion netlist that
// computes the same function: input bit i is wire i, output bit j the j-th
// of the last wires, and the circuit's named input and output ranges become
// the input and output groups when they tile the bits in order (one group
// of all the bits otherwise; the names themselves are lost, the format has
// none). The ops are lowered as follows (n operands):
//
//   - INPUT: its wire. CONST: one EQ gate per value used.
//   - NOT: INV (a negation of a negation is the wire itself; each wire is
//     negated at most once, shared by every use).
//   - XOR, AND: a balanced tree of n − 1 binary gates (depth ⌈log₂ n⌉);
//     with one operand, the operand's wire.
//   - OR: De Morgan, ¬(¬x₁ ∧ … ∧ ¬xₙ): INVs and an AND tree.
//   - ANDNOT: INV of the first operand and an AND tree.
//   - THRESHOLD [Σ wₖxₖ ≥ θ]: negative weights become negated operands
//     (w·x = w + |w|·¬x); zero weights are dropped. A gate that is constant
//     (θ ≤ 0, θ > Σ|w|) is an EQ; one any operand fires (θ ≤ min w) is an
//     OR, one that needs every operand (θ > Σw − min w) an AND. Any other
//     is a counter network: each operand enters the binary columns of its
//     weight, full adders (4 XOR, 1 AND) and half adders (1 XOR, 1 AND)
//     compress the columns into the m = ⌊log₂ Σw⌋ + 1 bits of the sum S,
//     and S ≥ θ is the carry out of S + (2^m − θ), a chain of one AND (or
//     OR: 2 XOR, 1 AND) per bit.
//   - SUMBIT k (bit k of Σ 2^eᵢ·xᵢ, a modular addition's bit): the same
//     column compression over columns 0…k, operands above k dropped; the
//     bits of one addition share the columns below them (see sumBit), so
//     an addition of m n-bit words is a ripple of about (m − 1)·n full
//     adders.
//
// Only logic that an output depends on is written; the circuit's dead
// nodes and the unused halves of adders are dropped. Output bits that are
// inputs, or repeat an earlier output, get an EQW copy of their own wire.
// FromCircuit fails on an invalid circuit, on an op it cannot lower
// (naming the node and its provenance) and on a circuit with no outputs.
func FromCircuit(c *circuit.Circuit) (*Netlist, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("bristol: %w", err)
	}
	if len(c.Outputs) == 0 {
		return nil, fmt.Errorf("bristol: the circuit has no outputs; a Bristol Fashion netlist needs at least one")
	}
	nIn, nOut := len(c.Inputs), len(c.Outputs)
	l := &lowerer{
		nl:      &Netlist{Start: []int32{0}},
		next:    int32(nIn),
		consts:  [2]int32{-1, -1},
		inv:     map[int32]int32{},
		invOf:   map[int32]int32{},
		columns: map[string]column{},
	}

	// Lower the nodes the outputs depend on, in order.
	live := make([]bool, c.NumNodes())
	for _, o := range c.Outputs {
		live[o] = true
	}
	for i := c.NumNodes() - 1; i >= 0; i-- {
		if live[i] {
			args, _ := c.Operands(circuit.Node(i))
			for _, a := range args {
				live[a] = true
			}
		}
	}
	wire := make([]int32, c.NumNodes())
	for i, op := range c.Ops {
		if !live[i] {
			continue
		}
		args, weights := c.Operands(circuit.Node(i))
		ws := make([]int32, len(args))
		for k, a := range args {
			ws[k] = wire[a]
		}
		switch op {
		case circuit.OpInput:
			wire[i] = c.Param[i]
		case circuit.OpConst:
			wire[i] = l.constant(int(c.Param[i]))
		case circuit.OpNot:
			wire[i] = l.not(ws[0])
		case circuit.OpAnd:
			wire[i] = l.tree(AND, ws)
		case circuit.OpXor:
			wire[i] = l.tree(XOR, ws)
		case circuit.OpOr:
			wire[i] = l.or(ws)
		case circuit.OpAndNot:
			ws[0] = l.not(ws[0])
			wire[i] = l.tree(AND, ws)
		case circuit.OpThreshold:
			wire[i] = l.threshold(ws, weights, int64(c.Param[i]))
		case circuit.OpSumBit:
			wire[i] = l.sumBit(ws, weights, c.Param[i])
		default:
			return nil, fmt.Errorf("bristol: node %d (%s, %q): the op %s has no Bristol Fashion lowering", i, op, c.Tags[c.Tag[i]], op)
		}
	}

	// Each output bit gets a wire of its own: the gate computing it, or an
	// EQW copy where that wire is an input or an earlier output's.
	outWire := make([]int32, nOut)
	claimed := map[int32]bool{}
	for j, o := range c.Outputs {
		w := wire[o]
		if w < int32(nIn) || claimed[w] {
			w = l.gate(EQW, w)
		}
		claimed[w] = true
		outWire[j] = w
	}
	nl := l.finish(nIn, outWire)
	nl.Inputs = groupSizes(c.InputRanges, nIn)
	nl.Outputs = groupSizes(c.OutputRanges, nOut)
	return nl, nil
}

// groupSizes returns the sizes of the ranges if they tile [0, n) in order
// (empty ranges skipped), else one group of n bits (none if n is 0).
func groupSizes(rs []circuit.Range, n int) []int {
	var out []int
	at := 0
	for _, r := range rs {
		if r.Len == 0 {
			continue
		}
		if r.Start != at {
			break
		}
		out = append(out, r.Len)
		at += r.Len
	}
	if at == n {
		return out
	}
	if n == 0 {
		return nil
	}
	return []int{n}
}

// lowerer emits gates on virtual wires: inputs keep their numbers, every
// gate result is a fresh wire numbered from the input count up; finish
// drops dead gates and renumbers so that the outputs are the last wires.
type lowerer struct {
	nl     *Netlist
	next   int32
	consts [2]int32 // wire of each constant, −1 until used
	inv    map[int32]int32
	invOf  map[int32]int32 // wire → the wire it negates
	// columns: the compressed columns of SUMBITs, by the operand wires of
	// columns 0…b (see sumBit).
	columns map[string]column
}

// column is column b of a SUMBIT's compression: its sum bit (−1: 0) and
// the carries it passes to column b+1.
type column struct {
	sum     int32
	carries []int32
}

func (l *lowerer) gate(op Op, in ...int32) int32 {
	out := l.next
	l.next++
	l.nl.Ops = append(l.nl.Ops, op)
	l.nl.Wire = append(l.nl.Wire, in...)
	l.nl.Wire = append(l.nl.Wire, out)
	l.nl.Start = append(l.nl.Start, int32(len(l.nl.Wire)))
	return out
}

func (l *lowerer) constant(v int) int32 {
	if l.consts[v] < 0 {
		l.consts[v] = l.gate(EQ, int32(v))
	}
	return l.consts[v]
}

func (l *lowerer) not(w int32) int32 {
	if u, ok := l.invOf[w]; ok {
		return u
	}
	if u, ok := l.inv[w]; ok {
		return u
	}
	u := l.gate(INV, w)
	l.inv[w] = u
	l.invOf[u] = w
	return u
}

// tree reduces ws with op (XOR or AND) as a balanced binary tree.
func (l *lowerer) tree(op Op, ws []int32) int32 {
	ws = append([]int32(nil), ws...)
	for len(ws) > 1 {
		next := ws[:0:0]
		for k := 0; k+1 < len(ws); k += 2 {
			next = append(next, l.gate(op, ws[k], ws[k+1]))
		}
		if len(ws)%2 == 1 {
			next = append(next, ws[len(ws)-1])
		}
		ws = next
	}
	return ws[0]
}

func (l *lowerer) or(ws []int32) int32 {
	if len(ws) == 1 {
		return ws[0]
	}
	neg := make([]int32, len(ws))
	for k, w := range ws {
		neg[k] = l.not(w)
	}
	return l.not(l.tree(AND, neg))
}

// or2 is a ∨ b as a ⊕ b ⊕ (a ∧ b): one AND.
func (l *lowerer) or2(a, b int32) int32 {
	return l.gate(XOR, l.gate(XOR, a, b), l.gate(AND, a, b))
}

// threshold lowers [Σ weights[k]·ws[k] ≥ theta] (see FromCircuit).
func (l *lowerer) threshold(ws []int32, weights []int32, theta int64) int32 {
	var lits []int32
	var ks []int64
	var total int64
	for k, w := range ws {
		wt := int64(weights[k])
		switch {
		case wt == 0:
			continue
		case wt < 0:
			w = l.not(w)
			theta -= wt
			wt = -wt
		}
		lits = append(lits, w)
		ks = append(ks, wt)
		total += wt
	}
	switch {
	case theta <= 0:
		return l.constant(1)
	case theta > total:
		return l.constant(0)
	}
	minK := ks[0]
	for _, k := range ks {
		minK = min(minK, k)
	}
	switch {
	case theta <= minK:
		return l.or(lits)
	case theta > total-minK:
		return l.tree(AND, lits)
	}

	// Counter network: the binary columns of S = Σ kᵢ·litᵢ.
	m := bits.Len64(uint64(total))
	cols := make([][]int32, m)
	for i, w := range lits {
		for b := range m {
			if ks[i]>>b&1 == 1 {
				cols[b] = append(cols[b], w)
			}
		}
	}
	sumBits := make([]int32, m) // −1: the bit is 0
	for b := range m {
		q := cols[b]
		top := b+1 == m // S < 2^m: no carry leaves the top column
		for len(q) >= 3 {
			x, y, z := q[0], q[1], q[2]
			q = q[3:]
			if top {
				q = append(q, l.gate(XOR, l.gate(XOR, x, y), z))
				continue
			}
			t1 := l.gate(XOR, x, z)
			t2 := l.gate(XOR, y, z)
			cols[b+1] = append(cols[b+1], l.gate(XOR, z, l.gate(AND, t1, t2)))
			q = append(q, l.gate(XOR, x, t2))
		}
		if len(q) == 2 {
			x, y := q[0], q[1]
			if !top {
				cols[b+1] = append(cols[b+1], l.gate(AND, x, y))
			}
			q = []int32{l.gate(XOR, x, y)}
		}
		sumBits[b] = -1
		if len(q) == 1 {
			sumBits[b] = q[0]
		}
	}
	// S ≥ θ ⇔ S + (2^m − θ) carries out of bit m−1.
	k := uint64(1)<<m - uint64(theta)
	carry := int32(-1) // −1: the carry is 0
	for b := range m {
		s := sumBits[b]
		kb := k>>b&1 == 1
		switch {
		case s < 0 && !kb, carry < 0 && !kb:
			carry = -1
		case s < 0:
			// carry = carry ∨ 0
		case carry < 0:
			carry = s // kb: s ∨ 0
		case kb:
			carry = l.or2(s, carry)
		default:
			carry = l.gate(AND, s, carry)
		}
	}
	if carry < 0 {
		return l.constant(0)
	}
	return carry
}

// sumBit lowers bit k of Σ 2^eᵢ·wsᵢ (a SUMBIT; operands above bit k do not
// reach it): each operand enters column eᵢ, and full adders (4 XOR, 1 AND)
// and half adders (1 XOR, 1 AND) compress columns 0…k, carries moving up,
// until one wire is left in column k. Columns are compressed in order and
// the compression of column b depends only on columns 0…b, so every SUMBIT
// of one addition (bit k reads the words' bits 0…k) reuses the columns the
// bits below it built: an n-bit addition of m words costs about (m − 1)·n
// full adders, not one adder network a bit. The carries out of column k
// that no higher bit reads are dropped with the other dead gates.
func (l *lowerer) sumBit(ws, exps []int32, k int32) int32 {
	cols := make([][]int32, k+1)
	for i, w := range ws {
		if e := exps[i]; e <= k {
			cols[e] = append(cols[e], w)
		}
	}
	var key []byte
	var carries []int32 // into the current column
	sum := int32(-1)    // −1: the bit is 0
	for b := range k + 1 {
		col := slices.Clone(cols[b])
		slices.Sort(col)
		key = binary.LittleEndian.AppendUint32(key, uint32(len(col)))
		for _, w := range col {
			key = binary.LittleEndian.AppendUint32(key, uint32(w))
		}
		if s, ok := l.columns[string(key)]; ok {
			sum, carries = s.sum, s.carries
			continue
		}
		q := append(col, carries...)
		var out []int32
		for len(q) >= 3 {
			x, y, z := q[0], q[1], q[2]
			q = q[3:]
			t1 := l.gate(XOR, x, z)
			t2 := l.gate(XOR, y, z)
			out = append(out, l.gate(XOR, z, l.gate(AND, t1, t2)))
			q = append(q, l.gate(XOR, x, t2))
		}
		if len(q) == 2 {
			out = append(out, l.gate(AND, q[0], q[1]))
			q = []int32{l.gate(XOR, q[0], q[1])}
		}
		sum = -1
		if len(q) == 1 {
			sum = q[0]
		}
		carries = out
		l.columns[string(key)] = column{sum, out}
	}
	if sum < 0 {
		return l.constant(0)
	}
	return sum
}

// finish drops the gates no output needs and renumbers the wires: inputs
// first, then the other gate results in order, then the outputs.
func (l *lowerer) finish(nIn int, outWire []int32) *Netlist {
	src := l.nl
	nOut := len(outWire)
	live := make([]bool, l.next)
	for _, w := range outWire {
		live[w] = true
	}
	keep := make([]bool, len(src.Ops))
	for g := len(src.Ops) - 1; g >= 0; g-- {
		op, in, out := src.Gate(g)
		if !live[out[0]] {
			continue
		}
		keep[g] = true
		if op != EQ {
			for _, w := range in {
				live[w] = true
			}
		}
	}
	// Every kept gate has one result, and the outputs are distinct gate
	// results: nIn + kept wires in all.
	kept := 0
	for _, k := range keep {
		if k {
			kept++
		}
	}
	total := nIn + kept
	num := make([]int32, l.next)
	for w := range num {
		num[w] = int32(w) // the inputs; gate results are renumbered below
	}
	isOut := make([]bool, l.next)
	for j, w := range outWire {
		num[w] = int32(total - nOut + j)
		isOut[w] = true
	}
	next := int32(nIn)
	for g := range src.Ops {
		if _, _, out := src.Gate(g); keep[g] && !isOut[out[0]] {
			num[out[0]] = next
			next++
		}
	}
	nl := &Netlist{NumWires: total, Start: []int32{0}}
	for g := range src.Ops {
		if !keep[g] {
			continue
		}
		op, in, out := src.Gate(g)
		if op == EQ {
			nl.add(op, in[0], num[out[0]])
			continue
		}
		ws := make([]int32, 0, len(in)+1)
		for _, w := range in {
			ws = append(ws, num[w])
		}
		nl.add(op, append(ws, num[out[0]])...)
	}
	return nl
}
