package fusion

import (
	"context"
	"fmt"

	"github.com/tcforge/tcforge/sdk/circuit"
)

// nkind is what a logic node becomes after normalisation.
type nkind uint8

const (
	nkConst nkind = iota // a constant: val is 0 or 1
	nkAlias              // another node or its negation: ref, val = 1 if negated
	nkInput              // a primary input
	nkXor                // parity of its operands xor val
	nkThr                // [Σ w·operand ≥ val]
	nkSum                // bit bit[v] of val + Σ w·operand (SUMBIT; see sumbit.go)
)

// normal is the logic circuit after constant folding and alias resolution
// (rules 1 and 2): every node is a constant, an alias (x or ¬x) of a real
// node, or a real node (input, parity, threshold) whose operands are real
// nodes. Struct of arrays, operands in CSR form.
type normal struct {
	kind    []nkind
	ref     []int32 // nkAlias: the real node
	val     []int64 // nkConst: value; nkAlias: 1 if negated; nkXor: constant parity; nkThr: θ
	opStart []int32 // len = nodes+1
	opNode  []int32 // real operands (distinct within a node)
	opW     []int64 // nkThr: weights (non-zero); nkXor: 1
	uses    []int32 // number of reads of each real node (operands and outputs)
	bit     []int8  // nkSum: the bit index k
}

// ops returns node v's operands and weights.
func (n *normal) ops(v int32) ([]int32, []int64) {
	a, b := n.opStart[v], n.opStart[v+1]
	return n.opNode[a:b], n.opW[a:b]
}

// lit resolves node v to a constant (isConst, value) or a literal (real
// node, negated).
func (n *normal) lit(v int32) (isConst bool, val int64, base int32, neg int64) {
	switch n.kind[v] {
	case nkConst:
		return true, n.val[v], 0, 0
	case nkAlias:
		return false, 0, n.ref[v], n.val[v]
	}
	return false, 0, v, 0
}

// normalize folds constants and resolves NOT, copies and XOR with
// constants into aliases; AND, OR and ANDNOT become threshold nodes.
func normalize(ctx context.Context, c *circuit.Circuit) (*normal, error) {
	nn := len(c.Ops)
	n := &normal{
		kind:    make([]nkind, nn),
		ref:     make([]int32, nn),
		val:     make([]int64, nn),
		opStart: make([]int32, nn+1),
		opNode:  make([]int32, 0, len(c.Args)),
		opW:     make([]int64, 0, len(c.Args)),
		uses:    make([]int32, nn),
		bit:     make([]int8, nn),
	}
	acc := make([]int64, nn)  // threshold weight per real node
	mark := make([]int32, nn) // stamp: node seen in the current op
	stamp := int32(0)
	var order []int32
	for i := 0; i < nn; i++ {
		if i%65536 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		v := int32(i)
		args, weights := c.Operands(v)
		stamp++
		order = order[:0]
		switch op := c.Ops[i]; op {
		case circuit.OpInput:
			n.kind[i] = nkInput
		case circuit.OpConst:
			n.kind[i], n.val[i] = nkConst, int64(c.Param[i]&1)
		case circuit.OpNot:
			isC, val, base, neg := n.lit(args[0])
			if isC {
				n.kind[i], n.val[i] = nkConst, 1-val
			} else {
				n.kind[i], n.ref[i], n.val[i] = nkAlias, base, 1-neg
			}
		case circuit.OpXor:
			par := int64(0)
			for _, a := range args {
				isC, val, base, neg := n.lit(a)
				if isC {
					par ^= val
					continue
				}
				par ^= neg
				if mark[base] != stamp {
					mark[base] = stamp
					acc[base] = 0
					order = append(order, base)
				}
				acc[base] ^= 1
			}
			k := 0
			for _, b := range order {
				if acc[b] == 1 {
					order[k] = b
					k++
				}
			}
			order = order[:k]
			switch len(order) {
			case 0:
				n.kind[i], n.val[i] = nkConst, par
			case 1:
				n.kind[i], n.ref[i], n.val[i] = nkAlias, order[0], par
			default:
				n.kind[i], n.val[i] = nkXor, par
				for _, b := range order {
					n.opNode = append(n.opNode, b)
					n.opW = append(n.opW, 1)
				}
			}
		case circuit.OpAnd, circuit.OpOr, circuit.OpAndNot, circuit.OpThreshold:
			var theta int64
			switch op {
			case circuit.OpAnd:
				theta = int64(len(args))
			case circuit.OpOr:
				theta = 1
			case circuit.OpAndNot:
				theta = int64(len(args)) - 1
			case circuit.OpThreshold:
				theta = int64(c.Param[i])
			}
			for k, a := range args {
				w := int64(1)
				switch {
				case op == circuit.OpThreshold:
					w = int64(weights[k])
				case op == circuit.OpAndNot && k == 0:
					w = -1
				}
				isC, val, base, neg := n.lit(a)
				if isC {
					theta -= w * val
					continue
				}
				if neg == 1 { // w·(1−x) = w − w·x
					theta -= w
					w = -w
				}
				if mark[base] != stamp {
					mark[base] = stamp
					acc[base] = 0
					order = append(order, base)
				}
				acc[base] += w
			}
			var lo, hi int64
			k := 0
			for _, b := range order {
				if w := acc[b]; w != 0 {
					order[k] = b
					k++
					if w < 0 {
						lo += w
					} else {
						hi += w
					}
				}
			}
			order = order[:k]
			switch {
			case theta <= lo:
				n.kind[i], n.val[i] = nkConst, 1
			case theta > hi:
				n.kind[i], n.val[i] = nkConst, 0
			case len(order) == 1:
				// [w·x ≥ θ] with lo < θ ≤ hi is x (w > 0) or ¬x (w < 0).
				neg := int64(0)
				if acc[order[0]] < 0 {
					neg = 1
				}
				n.kind[i], n.ref[i], n.val[i] = nkAlias, order[0], neg
			default:
				n.kind[i], n.val[i] = nkThr, theta
				for _, b := range order {
					n.opNode = append(n.opNode, b)
					n.opW = append(n.opW, acc[b])
				}
			}
		case circuit.OpSumBit:
			if err := n.sumBit(c, v, acc, mark, stamp, &order); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("node %d: unsupported op %s", i, op)
		}
		n.opStart[i+1] = int32(len(n.opNode))
	}
	for _, u := range n.opNode {
		n.uses[u]++
	}
	for _, o := range c.Outputs {
		if isC, _, base, _ := n.lit(o); !isC {
			n.uses[base]++
		}
	}
	return n, nil
}

// outputs returns the real nodes the circuit's outputs read.
func (n *normal) outputs(c *circuit.Circuit) []int32 {
	var out []int32
	for _, o := range c.Outputs {
		if isC, _, base, _ := n.lit(o); !isC {
			out = append(out, base)
		}
	}
	return out
}
