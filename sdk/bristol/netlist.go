// Package bristol reads, writes and evaluates Bristol Fashion netlists, the
// plain-text Boolean circuit format the MPC community publishes its
// circuits in (AES-128, SHA-256, SHA-512, Keccak-f, adders, …), and lowers
// tcforge logic circuits to it (FromCircuit).
//
// A Bristol Fashion file is
//
//	#gates #wires
//	niv  bits(input 1)  … bits(input niv)
//	nov  bits(output 1) … bits(output nov)
//
//	nin nout in_1 … in_nin out_1 … out_nout OP
//	…
//
// Input group 1 is wires 0 … bits(input 1) − 1, group 2 the next wires, and
// so on; the outputs are the last wires, group after group. Each gate line
// names its operand and result wires; the gates are XOR and AND (2 1), INV
// and EQW (1 1: negation and copy of a wire), EQ (1 1, the operand a
// literal 0 or 1: a constant) and MAND (2k k: k ANDs, a₁…a_k b₁…b_k then
// c₁…c_k). Gates are listed in evaluation order and every wire is set
// once.
//
// The evaluator here works on the netlist itself, wire by wire: it shares
// no code with tcforge's circuit builder, so it is an independent reference
// for circuits imported from or exported to the format.
package bristol

import (
	"fmt"
	"slices"
)

// Op is a Bristol Fashion gate type.
type Op uint8

// The gate types.
const (
	// XOR: 2 1 a b c XOR sets c = a ⊕ b.
	XOR Op = iota
	// AND: 2 1 a b c AND sets c = a ∧ b.
	AND
	// INV: 1 1 a c INV sets c = ¬a.
	INV
	// EQ: 1 1 v c EQ sets c to the constant v (0 or 1).
	EQ
	// EQW: 1 1 a c EQW sets c = a.
	EQW
	// MAND: 2k k a₁…a_k b₁…b_k c₁…c_k MAND sets c_i = a_i ∧ b_i.
	MAND
	numOps
)

var opNames = [numOps]string{"XOR", "AND", "INV", "EQ", "EQW", "MAND"}

// String returns the op's name as the format writes it.
func (o Op) String() string {
	if o < numOps {
		return opNames[o]
	}
	return fmt.Sprintf("Op(%d)", uint8(o))
}

// opOf returns the op named s.
func opOf(s string) (Op, bool) {
	for i, n := range opNames {
		if n == s {
			return Op(i), true
		}
	}
	return 0, false
}

// Netlist is a Bristol Fashion circuit, stored flat: gate g's wires are
// Wire[Start[g]:Start[g+1]], its operands followed by its results (for EQ
// the operand is the constant itself, not a wire).
type Netlist struct {
	NumWires int
	Inputs   []int // bits of each input group
	Outputs  []int // bits of each output group
	Ops      []Op
	Start    []int32 // len(Ops)+1
	Wire     []int32
}

// NumInputs returns the number of input bits (wires 0 … NumInputs()−1).
func (n *Netlist) NumInputs() int { return sum(n.Inputs) }

// NumOutputs returns the number of output bits (the last NumOutputs() wires).
func (n *Netlist) NumOutputs() int { return sum(n.Outputs) }

func sum(xs []int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	return s
}

// Gate returns gate g's op, operands and results (views into Wire).
func (n *Netlist) Gate(g int) (op Op, in, out []int32) {
	w := n.Wire[n.Start[g]:n.Start[g+1]]
	nin := 1
	switch op = n.Ops[g]; op {
	case XOR, AND:
		nin = 2
	case MAND:
		nin = len(w) / 3 * 2
	}
	return op, w[:nin], w[nin:]
}

// add appends a gate.
func (n *Netlist) add(op Op, wires ...int32) {
	if len(n.Start) == 0 {
		n.Start = append(n.Start, 0)
	}
	n.Ops = append(n.Ops, op)
	n.Wire = append(n.Wire, wires...)
	n.Start = append(n.Start, int32(len(n.Wire)))
}

// Eval evaluates the netlist on 64 input assignments at once: in[i] holds
// input bit i (wire i) of the 64 samples, one sample per bit of the word.
// It returns out[j], output bit j (wire NumWires − NumOutputs() + j).
func (n *Netlist) Eval(in []uint64) ([]uint64, error) {
	if len(in) != n.NumInputs() {
		return nil, fmt.Errorf("bristol: %d input words for %d input bits", len(in), n.NumInputs())
	}
	val := make([]uint64, n.NumWires)
	copy(val, in)
	for g := range n.Ops {
		op, a, c := n.Gate(g)
		switch op {
		case XOR:
			val[c[0]] = val[a[0]] ^ val[a[1]]
		case AND:
			val[c[0]] = val[a[0]] & val[a[1]]
		case INV:
			val[c[0]] = ^val[a[0]]
		case EQ:
			val[c[0]] = -uint64(a[0] & 1)
		case EQW:
			val[c[0]] = val[a[0]]
		case MAND:
			k := len(c)
			for i := range k {
				val[c[i]] = val[a[i]] & val[a[k+i]]
			}
		}
	}
	return slices.Clone(val[n.NumWires-n.NumOutputs():]), nil
}

// Stats are size figures of a netlist.
type Stats struct {
	Gates    int         // gate lines (a MAND counts once)
	Wires    int         // NumWires
	ByOp     [numOps]int // gate lines by op
	ANDs     int         // two-input ANDs, a MAND of k counting k
	Depth    int         // longest path in gates from an input (EQ and EQW count)
	ANDDepth int         // most ANDs on a path: the multiplicative depth MPC pays for
}

// Count returns the number of gate lines of op o.
func (s Stats) Count(o Op) int { return s.ByOp[o] }

// Stats computes the netlist's size figures.
func (n *Netlist) Stats() Stats {
	s := Stats{Gates: len(n.Ops), Wires: n.NumWires}
	depth := make([]int32, n.NumWires)
	andDepth := make([]int32, n.NumWires)
	for g := range n.Ops {
		op, a, c := n.Gate(g)
		s.ByOp[op]++
		switch op {
		case EQ:
			depth[c[0]], andDepth[c[0]] = 1, 0
		case MAND:
			k := len(c)
			s.ANDs += k
			for i := range k {
				depth[c[i]] = max(depth[a[i]], depth[a[k+i]]) + 1
				andDepth[c[i]] = max(andDepth[a[i]], andDepth[a[k+i]]) + 1
			}
		default:
			var d, ad int32
			for _, w := range a {
				d = max(d, depth[w])
				ad = max(ad, andDepth[w])
			}
			if op == AND {
				ad++
				s.ANDs++
			}
			depth[c[0]], andDepth[c[0]] = d+1, ad
		}
		for _, w := range c {
			s.Depth = max(s.Depth, int(depth[w]))
			s.ANDDepth = max(s.ANDDepth, int(andDepth[w]))
		}
	}
	return s
}
