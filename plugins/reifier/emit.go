package reifier

import (
	"context"

	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
)

// levelEntries returns the entries of level L (see schedule).
func (s *schedule) levelEntries(L int32) []int32 {
	return s.entries[s.startAt[L]:s.startAt[L+1]]
}

// levelConsts returns the constants placed again at level L.
func (s *schedule) levelConsts(L int32) []int32 {
	return s.constOf[s.constAt[L-1]:s.constAt[L]]
}

// levelCopies returns the values carried into level L by copy gates.
func (s *schedule) levelCopies(L int32) []int32 {
	return s.copyOf[s.copyAt[L-1]:s.copyAt[L]]
}

// args returns op i's operands.
func (s *schedule) args(i int32) []circuit.Node {
	return s.c.Args[s.c.ArgStart[i]:s.c.ArgStart[i+1]]
}

// emit writes the layered circuit laid out by s. The sources and the other
// gate arrays do not depend on each other, so two goroutines write them at
// once.
func (s *schedule) emit(ctx context.Context) (*layered.Circuit, error) {
	l := &layered.Circuit{
		NumInputs:    len(s.c.Inputs),
		LevelStart:   s.levelStart,
		Tags:         s.tags,
		InputRanges:  append([]circuit.Range(nil), s.c.InputRanges...),
		OutputRanges: append([]circuit.Range(nil), s.c.OutputRanges...),
	}
	if s.c.HasPos() {
		l.InputPos = make([]int32, len(s.c.Inputs))
		for p, v := range s.c.Inputs {
			l.InputPos[p] = s.c.Pos[v]
		}
		l.Pos = make([]int32, s.gates)
	}
	var srcErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		l.Src, srcErr = s.sources(ctx)
	}()
	err := s.rows(ctx, l)
	<-done
	if err != nil {
		return nil, err
	}
	if srcErr != nil {
		return nil, srcErr
	}
	return l, nil
}

// sources returns the layered circuit's Src: each edge's source as an index
// within the previous level.
func (s *schedule) sources(ctx context.Context) ([]int32, error) {
	c := s.c
	src := make([]int32, s.edges)
	// pos[v]: the index of v's latest instance (gate or copy) within its
	// level; for an XOR whose counters are placed but not yet its parity
	// gate, the index of its first counter. An instance placed in level L
	// is read only from level L+1, so it is recorded as soon as it is
	// placed.
	pos := make([]int32, len(c.Ops))
	for p, v := range c.Inputs {
		pos[v] = int32(p)
	}
	e := 0
	for L := int32(1); L < s.outLevel; L++ {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		idx := int32(0) // index of the next gate within the level
		for _, entry := range s.levelEntries(L) {
			i := entry >> 1
			args := s.args(i)
			n := len(args)
			switch {
			case entry&1 == 1: // counters: nc gates with the same sources
				nc := int(s.numCounters(i))
				if nc > 0 {
					row := src[e : e+n]
					for k, a := range args {
						row[k] = pos[a]
					}
					e += n
					for k := 1; k < nc; k++ {
						e += copy(src[e:e+n], row)
					}
				}
				pos[i] = idx
				idx += int32(nc)
				continue
			case hasCounters(c.Ops[i]): // parity over its counters
				n = int(s.numCounters(i))
				row := src[e : e+n]
				for k := range row {
					row[k] = pos[i] + int32(k)
				}
				e += n
			default:
				row := src[e : e+n]
				for k, a := range args {
					row[k] = pos[a]
				}
				e += n
			}
			pos[i] = idx
			idx++
		}
		// Placed after the entries: a gate of this level reading one of
		// these constants reads the instance of the level below.
		for _, v := range s.levelConsts(L) {
			pos[v] = idx
			idx++
		}
		for _, v := range s.levelCopies(L) {
			src[e] = pos[v]
			e++
			pos[v] = idx
			idx++
		}
	}
	for _, o := range c.Outputs {
		src[e] = pos[o]
		e++
	}
	return src, nil
}

// rows fills in l's Kind, Threshold, Tag, RowStart and Weight, lowering
// each op as the package documentation describes, and l.Pos if the
// circuit has position hints: every gate lowering op i (its counters
// too) gets i's hint, a copy that of the value it carries.
func (s *schedule) rows(ctx context.Context, l *layered.Circuit) error {
	c := s.c
	l.Kind = make([]layered.Kind, s.gates) // KindGate is 0: only copies are marked
	l.Threshold = make([]int32, s.gates)
	l.Tag = make([]int32, s.gates)
	l.RowStart = make([]int32, s.gates+1)
	l.Weight = make([]int32, s.edges)
	gi, e, ci := 0, 0, 0
	var pos int32 // hint of the op or value being lowered
	// gate ends gate gi with threshold theta and tag tag after its weights
	// have been written up to e.
	gate := func(theta, tag int32) {
		l.Threshold[gi] = theta
		l.Tag[gi] = tag
		if l.Pos != nil {
			l.Pos[gi] = pos
		}
		gi++
		l.RowStart[gi] = int32(e)
	}
	ones := func(n int) {
		w := l.Weight[e : e+n]
		for k := range w {
			w[k] = 1
		}
		e += n
	}
	copyGate := func(v int32) {
		pos = c.PosOf(v)
		l.Kind[gi] = layered.KindCopy
		l.Weight[e] = 1
		e++
		gate(1, s.copyTag[ci])
		ci++
	}
	for L := int32(1); L < s.outLevel; L++ {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		for _, entry := range s.levelEntries(L) {
			i := entry >> 1
			a, b := c.ArgStart[i], c.ArgStart[i+1]
			n := int(b - a)
			tag := s.tag[c.Tag[i]]
			pos = c.PosOf(i)
			switch op := c.Ops[i]; {
			case entry&1 == 1 && op == circuit.OpSumBit: // counters [Σ 2^e·x ≥ j·2^k]
				ct := s.counterTag[c.Tag[i]]
				k := c.Param[i]
				for j := int32(1); j <= s.numCounters(i); j++ {
					for q, x := range c.Weights[a:b] {
						l.Weight[e+q] = 0 // 2^x ≡ 0 mod 2^(k+1) above k
						if x <= k {
							l.Weight[e+q] = 1 << x
						}
					}
					e += n
					gate(j<<k, ct)
				}
			case entry&1 == 1: // counters [Σ args ≥ k], k = 1..n
				ct := s.counterTag[c.Tag[i]]
				for k := 1; k <= n; k++ {
					ones(n)
					gate(int32(k), ct)
				}
			case hasCounters(op): // [c₁ − c₂ + c₃ − … ≥ 1]
				n = int(s.numCounters(i))
				w := l.Weight[e : e+n]
				for k := range w {
					w[k] = 1 - 2*int32(k%2)
				}
				e += n
				gate(1, tag)
			case op == circuit.OpConst: // [∅ ≥ 1 − value]
				gate(1-c.Param[i], tag)
			case op == circuit.OpNot: // [−x ≥ 0]
				l.Weight[e] = -1
				e++
				gate(0, tag)
			case op == circuit.OpAnd: // [Σx ≥ n]
				ones(n)
				gate(int32(n), tag)
			case op == circuit.OpOr: // [Σx ≥ 1]
				ones(n)
				gate(1, tag)
			case op == circuit.OpAndNot: // [−x₀ + Σx₁.. ≥ n]
				ones(n)
				l.Weight[e-n] = -1
				gate(int32(n-1), tag)
			case op == circuit.OpThreshold:
				e += copy(l.Weight[e:], c.Weights[a:b])
				gate(c.Param[i], tag)
			}
		}
		for _, v := range s.levelConsts(L) {
			pos = c.PosOf(v)
			gate(1-c.Param[v], s.tag[c.Tag[v]])
		}
		for _, v := range s.levelCopies(L) {
			copyGate(v)
		}
	}
	for _, o := range c.Outputs {
		copyGate(o)
	}
	return nil
}

// hasCounters reports whether op lowers to a level of counters and a
// parity gate over them (XOR, SUMBIT).
func hasCounters(op circuit.Op) bool { return op == circuit.OpXor || op == circuit.OpSumBit }

// numCounters returns the number of counters of op i: its arity for an
// XOR; for a SUMBIT of bit k, ⌊Σ 2^e / 2^k⌋ over its exponents e ≤ k (the
// multiples of 2^k the sum can reach).
func (s *schedule) numCounters(i int32) int32 {
	c := s.c
	a, b := c.ArgStart[i], c.ArgStart[i+1]
	if c.Ops[i] != circuit.OpSumBit {
		return b - a
	}
	k := c.Param[i]
	var sum int64
	for _, e := range c.Weights[a:b] {
		if e <= k {
			sum += 1 << uint(e)
		}
	}
	return int32(sum >> uint(k))
}
