// Package circuit holds the logic-circuit IR that construction plugins build
// and layerer plugins consume: a DAG of typed boolean ops stored as flat
// arrays (struct of arrays, operands in CSR form), with named input and output
// ranges and per-node provenance tags.
//
// Nodes are numbered in topological order: every operand of node i has an
// index smaller than i. The Builder guarantees this; Validate checks it.
package circuit

import (
	"fmt"
)

// Op is the operation a node computes.
type Op uint8

// The ops of the logic circuit. Operands are the node's Args; Weights and
// Param matter only where stated.
const (
	// OpInput is a primary input bit; Param is its position in Inputs.
	OpInput Op = iota
	// OpConst is a constant bit; Param is 0 or 1.
	OpConst
	// OpNot is the negation of its single operand.
	OpNot
	// OpAnd is the conjunction of its operands (one operand: identity).
	OpAnd
	// OpOr is the disjunction of its operands (one operand: identity).
	OpOr
	// OpXor is the parity of its operands (n-ary).
	OpXor
	// OpAndNot is Reifier's inhib: ¬a₀ ∧ a₁ ∧ … ∧ aₙ (first operand negated).
	OpAndNot
	// OpThreshold fires iff Σ Weights[k]·arg_k ≥ Param.
	OpThreshold
	// OpSumBit is bit Param (0…63) of the integer Σ 2^Weights[k]·arg_k:
	// the weights are exponents (0…63), so an operand of exponent e adds
	// 2^e, and operands above Param do not matter. It is the arithmetic op
	// of modular addition: bit k of a sum of words is the SUMBIT of every
	// word's bits 0…k. XOR is its special case (bit 0, every exponent 0).
	OpSumBit
	numOps
)

var opNames = [...]string{"INPUT", "CONST", "NOT", "AND", "OR", "XOR", "ANDNOT", "THRESHOLD", "SUMBIT"}

// String returns the op's upper-case name.
func (o Op) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return fmt.Sprintf("Op(%d)", uint8(o))
}

// Node identifies a node of a circuit (its index).
type Node = int32

// Range names a contiguous run of bits of the circuit's inputs or outputs.
type Range struct {
	Name  string
	Start int
	Len   int
}

// Circuit is a logic circuit. All per-node slices have one entry per node;
// node i's operands are Args[ArgStart[i]:ArgStart[i+1]] with the matching
// Weights (1 for every op but OpThreshold and OpSumBit).
type Circuit struct {
	Ops      []Op
	Param    []int32 // OpConst: value; OpThreshold: θ; OpSumBit: bit index; OpInput: input position
	Tag      []int32 // index into Tags
	ArgStart []int32 // len(Ops)+1
	Args     []Node
	Weights  []int32

	Tags []string // provenance tags, e.g. "block 1/round 3/theta"

	Inputs       []Node  // input bit i is node Inputs[i]
	InputRanges  []Range // named runs of Inputs
	Outputs      []Node  // output bit j is the value of node Outputs[j]
	OutputRanges []Range // named runs of Outputs

	// Attrs are named integer facts about the construction (resolved
	// parameters such as rate, w, rounds), in scope of a pipeline's expect
	// expressions as construction.<name>.
	Attrs map[string]int64

	// Pos holds optional position hints: nil (no hints), or one entry per
	// node saying which position of the construction the node's value
	// belongs to (Keccak: the slice z of a state bit; an adder: the bit
	// index), NoPos where a node has none. Layerers carry the hints onto
	// the gates and forms they make (layered.Circuit.Pos), and a mapper may
	// use them to place values; nothing depends on them for correctness.
	// Builder.At and Builder.SetPos set them.
	Pos []int32
}

// NoPos is the position hint of a node that has none.
const NoPos = -1

// HasPos reports whether the circuit carries position hints.
func (c *Circuit) HasPos() bool { return c.Pos != nil }

// PosOf returns node i's position hint, NoPos if it has none or the
// circuit carries no hints.
func (c *Circuit) PosOf(i Node) int32 {
	if c.Pos == nil {
		return NoPos
	}
	return c.Pos[i]
}

// NumNodes returns the number of nodes.
func (c *Circuit) NumNodes() int { return len(c.Ops) }

// Operands returns node i's operands and weights (views into the arrays).
func (c *Circuit) Operands(i Node) ([]Node, []int32) {
	a, b := c.ArgStart[i], c.ArgStart[i+1]
	return c.Args[a:b], c.Weights[a:b]
}

// Stats are size figures of a logic circuit.
type Stats struct {
	Nodes, Inputs, Outputs, Edges int
	ByOp                          [numOps]int
	Depth                         int // longest path in ops from an input (inputs and constants at 0)
}

// Stats computes the circuit's size figures.
func (c *Circuit) Stats() Stats {
	s := Stats{Nodes: len(c.Ops), Inputs: len(c.Inputs), Outputs: len(c.Outputs), Edges: len(c.Args)}
	depth := make([]int32, len(c.Ops))
	for i, op := range c.Ops {
		if int(op) < len(s.ByOp) {
			s.ByOp[op]++
		}
		var d int32
		if op != OpInput && op != OpConst {
			args, _ := c.Operands(Node(i))
			for _, a := range args {
				if depth[a] > d {
					d = depth[a]
				}
			}
			d++
		}
		depth[i] = d
		if int(d) > s.Depth {
			s.Depth = int(d)
		}
	}
	return s
}

// Validate checks the circuit's structure: array lengths, operand indices
// (each smaller than its node's, hence acyclic), arities, input and output
// tables, ranges, tags and position hints. It returns the first problem
// found.
func (c *Circuit) Validate() error {
	n := len(c.Ops)
	if len(c.Param) != n || len(c.Tag) != n {
		return fmt.Errorf("circuit: %d ops but %d params and %d tags", n, len(c.Param), len(c.Tag))
	}
	if len(c.ArgStart) != n+1 {
		return fmt.Errorf("circuit: ArgStart has %d entries, want %d", len(c.ArgStart), n+1)
	}
	if len(c.Args) != len(c.Weights) {
		return fmt.Errorf("circuit: %d args but %d weights", len(c.Args), len(c.Weights))
	}
	if c.ArgStart[0] != 0 || int(c.ArgStart[n]) != len(c.Args) {
		return fmt.Errorf("circuit: ArgStart does not span Args")
	}
	if err := CheckPos("circuit: position hints", c.Pos, n); err != nil {
		return err
	}
	inputSeen := make([]bool, len(c.Inputs))
	for i := 0; i < n; i++ {
		a, b := c.ArgStart[i], c.ArgStart[i+1]
		if a > b {
			return fmt.Errorf("circuit: node %d: operand offsets decrease", i)
		}
		if int(b) > len(c.Args) {
			return fmt.Errorf("circuit: node %d: operand offsets run past the %d operands", i, len(c.Args))
		}
		if t := c.Tag[i]; t < 0 || int(t) >= len(c.Tags) {
			return fmt.Errorf("circuit: node %d: tag %d out of range [0,%d)", i, t, len(c.Tags))
		}
		arity := int(b - a)
		for k := a; k < b; k++ {
			if arg := c.Args[k]; arg < 0 || int(arg) >= i {
				return fmt.Errorf("circuit: node %d (%s): operand %d is not an earlier node", i, c.Ops[i], arg)
			}
		}
		switch op := c.Ops[i]; op {
		case OpInput:
			p := c.Param[i]
			if arity != 0 || p < 0 || int(p) >= len(c.Inputs) || c.Inputs[p] != Node(i) {
				return fmt.Errorf("circuit: node %d: INPUT %d does not match the input table", i, p)
			}
			inputSeen[p] = true
		case OpConst:
			if arity != 0 || (c.Param[i] != 0 && c.Param[i] != 1) {
				return fmt.Errorf("circuit: node %d: CONST must have no operands and value 0 or 1", i)
			}
		case OpNot:
			if arity != 1 {
				return fmt.Errorf("circuit: node %d: NOT has %d operands, want 1", i, arity)
			}
		case OpAnd, OpOr, OpXor, OpThreshold:
			if arity < 1 {
				return fmt.Errorf("circuit: node %d: %s has no operands", i, op)
			}
		case OpSumBit:
			if arity < 1 || c.Param[i] < 0 || c.Param[i] > MaxSumBit {
				return fmt.Errorf("circuit: node %d: SUMBIT of bit %d with %d operands, want bit 0…%d and at least one operand", i, c.Param[i], arity, MaxSumBit)
			}
			for k := a; k < b; k++ {
				if e := c.Weights[k]; e < 0 || e > MaxSumBit {
					return fmt.Errorf("circuit: node %d: SUMBIT exponent %d out of range 0…%d", i, e, MaxSumBit)
				}
			}
		case OpAndNot:
			if arity < 2 {
				return fmt.Errorf("circuit: node %d: ANDNOT has %d operands, want at least 2", i, arity)
			}
		default:
			return fmt.Errorf("circuit: node %d: unknown op %d", i, op)
		}
	}
	for p, seen := range inputSeen {
		if !seen {
			return fmt.Errorf("circuit: input %d has no INPUT node", p)
		}
	}
	for j, o := range c.Outputs {
		if o < 0 || int(o) >= n {
			return fmt.Errorf("circuit: output %d refers to node %d, out of range", j, o)
		}
	}
	if err := checkRanges("input", c.InputRanges, len(c.Inputs)); err != nil {
		return err
	}
	return checkRanges("output", c.OutputRanges, len(c.Outputs))
}

func checkRanges(what string, rs []Range, n int) error {
	for _, r := range rs {
		if r.Start < 0 || r.Len < 0 || r.Start > n-r.Len {
			return fmt.Errorf("circuit: %s range %q [%d,+%d) exceeds %d bits", what, r.Name, r.Start, r.Len, n)
		}
	}
	return nil
}

// CheckPos checks an array of position hints for n values: nil, or n
// entries each NoPos or a position ≥ 0. what names the array in the error.
func CheckPos(what string, pos []int32, n int) error {
	if pos == nil {
		return nil
	}
	if len(pos) != n {
		return fmt.Errorf("%s: %d entries for %d values", what, len(pos), n)
	}
	for i, p := range pos {
		if p < NoPos {
			return fmt.Errorf("%s: value %d has hint %d, want %d (none) or a position ≥ 0", what, i, p, NoPos)
		}
	}
	return nil
}
