package circuit

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
)

// DefaultMaxSum is the default bound of SplitSums, 2^22: the gates that
// realise a chunk's bits compare sums up to the bound with thresholds up
// to it, so their pre-activations stay below 2^24, the integers float32
// represents exactly.
const DefaultMaxSum = 1 << 22

// SplitSums returns c with every OpSumBit node whose sum could exceed
// maxSum rewritten into additions of chunks of b bits with carries
// between them, so that no SUMBIT of the result sums to more than
// maxSum (weights at most 2^(b−1)). Layerers call it so that the
// threshold gates realising an addition keep exact, bounded weights and
// sums. It returns c itself if no node needs splitting.
//
// For a SUMBIT of bit k over operands with at most m at any one
// exponent, b is the largest power of two with (m+1)·2^b ≤ maxSum (at
// least 1: a bound below 2(m+1) cannot be met and gives chunks of one
// bit; a power of two cuts 8-, 16-, 32- and 64-bit words into equal
// chunks), and
// the sum is cut at multiples of b: bit k is bit k − lo of the operands
// at exponents lo…k (shifted down by lo = ⌊k/b⌋·b) plus the carry into
// lo; the carry into lo is ⌊U/2^b⌋ for U the operands at lo−b…lo−1 plus
// the carry into lo−b, written in binary as SUMBITs of bits b, b+1, … of
// U. Carries are shared: bits of one addition in the same chunk read the
// same carry nodes. The carry chain makes an addition of n-bit words
// ⌈n/b⌉ SUMBIT levels deep instead of one (a ripple over chunks).
//
// The nodes that replace a SUMBIT keep its tag and position hint (a
// shared carry: those of the first SUMBIT that needs it).
func SplitSums(c *Circuit, maxSum int64) (*Circuit, error) {
	if maxSum < 2 {
		return nil, fmt.Errorf("circuit: SplitSums bound %d, want at least 2", maxSum)
	}
	need := false
	for i, op := range c.Ops {
		if op == OpSumBit {
			if _, split := sumChunk(c, Node(i), maxSum); split {
				need = true
				break
			}
		}
	}
	if !need {
		return c, nil
	}
	s := &splitter{
		src:   c,
		max:   maxSum,
		carry: map[string][]Node{},
	}
	d := &s.dst
	d.ArgStart = []int32{0}
	d.Tags = c.Tags
	d.Attrs = c.Attrs
	d.InputRanges, d.OutputRanges = c.InputRanges, c.OutputRanges
	d.Inputs = make([]Node, len(c.Inputs))
	if c.Pos != nil {
		d.Pos = make([]int32, 0, len(c.Pos))
	}
	newOf := make([]Node, len(c.Ops))
	for i, op := range c.Ops {
		args, ws := c.Operands(Node(i))
		mapped := make([]Node, len(args))
		for k, a := range args {
			mapped[k] = newOf[a]
		}
		s.tag, s.pos = c.Tag[i], c.PosOf(Node(i))
		if op == OpSumBit {
			if b, split := sumChunk(c, Node(i), maxSum); split {
				newOf[i] = s.bit(int(c.Param[i]), b, mapped, ws)
				continue
			}
		}
		newOf[i] = s.add(op, c.Param[i], mapped, ws)
		if op == OpInput {
			d.Inputs[c.Param[i]] = newOf[i]
		}
	}
	d.Outputs = make([]Node, len(c.Outputs))
	for j, o := range c.Outputs {
		d.Outputs[j] = newOf[o]
	}
	return d, nil
}

// sumChunk returns the chunk width b of SUMBIT node i under maxSum and
// whether the node needs splitting (k ≥ b).
func sumChunk(c *Circuit, i Node, maxSum int64) (int, bool) {
	k := c.Param[i]
	_, exps := c.Operands(i)
	var count [MaxSumBit + 1]int64
	m := int64(1)
	for _, e := range exps {
		if e <= k {
			count[e]++
			m = max(m, count[e])
		}
	}
	b := bits.Len64(uint64(maxSum/(m+1))) - 1 // (m+1)·2^b ≤ maxSum: room for the carry
	b = max(b, 1)
	b = 1 << (bits.Len(uint(b)) - 1) // a power of two: equal chunks of 8-, 16-, 32- and 64-bit words
	return b, int(k) >= b
}

type splitter struct {
	src   *Circuit
	dst   Circuit
	max   int64
	carry map[string][]Node
	// tag and pos are those of the source node being rewritten, which
	// every node add makes gets.
	tag, pos int32
}

func (s *splitter) add(op Op, param int32, args []Node, ws []int32) Node {
	d := &s.dst
	id := Node(len(d.Ops))
	d.Ops = append(d.Ops, op)
	d.Param = append(d.Param, param)
	d.Tag = append(d.Tag, s.tag)
	if d.Pos != nil {
		d.Pos = append(d.Pos, s.pos)
	}
	d.Args = append(d.Args, args...)
	d.Weights = append(d.Weights, ws...)
	d.ArgStart = append(d.ArgStart, int32(len(d.Args)))
	return id
}

// term is an operand of a sum: node x with weight 2^e.
type term struct {
	x Node
	e int32
}

// bit returns bit k of Σ 2^ws[i]·args[i] built from chunks of b bits.
func (s *splitter) bit(k, b int, args []Node, ws []int32) Node {
	lo := k / b * b
	var low []term
	var xs []Node
	var es []int32
	for i, a := range args {
		switch e := int(ws[i]); {
		case e > k:
		case e < lo:
			low = append(low, term{a, ws[i]})
		default:
			xs = append(xs, a)
			es = append(es, int32(e-lo))
		}
	}
	for t, cb := range s.carryInto(lo, b, low) {
		xs = append(xs, cb)
		es = append(es, int32(t))
	}
	if len(xs) == 0 {
		return s.add(OpConst, 0, nil, nil)
	}
	return s.add(OpSumBit, int32(k-lo), xs, es)
}

// carryInto returns the bits of ⌊Σ 2^e·x / 2^lo⌋ over terms (all below
// lo), least significant first.
func (s *splitter) carryInto(lo, b int, terms []term) []Node {
	if lo == 0 || len(terms) == 0 {
		return nil
	}
	slices.SortFunc(terms, func(p, q term) int {
		if p.e != q.e {
			return int(p.e - q.e)
		}
		return int(p.x - q.x)
	})
	key := make([]byte, 0, 8+8*len(terms))
	key = binary.LittleEndian.AppendUint32(key, uint32(lo))
	key = binary.LittleEndian.AppendUint32(key, uint32(b))
	for _, t := range terms {
		key = binary.LittleEndian.AppendUint32(key, uint32(t.x))
		key = binary.LittleEndian.AppendUint32(key, uint32(t.e))
	}
	if c, ok := s.carry[string(key)]; ok {
		return c
	}
	prev := lo - b
	var below []term
	var xs []Node
	var es []int32
	var maxU uint64
	for _, t := range terms {
		if int(t.e) < prev {
			below = append(below, t)
			continue
		}
		xs = append(xs, t.x)
		es = append(es, t.e-int32(prev))
		maxU += 1 << uint(int(t.e)-prev)
	}
	for t, cb := range s.carryInto(prev, b, below) {
		xs = append(xs, cb)
		es = append(es, int32(t))
		maxU += 1 << uint(t)
	}
	var out []Node
	for t := 0; t < bits.Len64(maxU>>uint(b)); t++ {
		out = append(out, s.add(OpSumBit, int32(b+t), xs, es))
	}
	s.carry[string(key)] = out
	return out
}
