package layered

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"
)

// simpleEval is the reference the evaluator is checked against: the
// definition, one lane at a time, with plain integers: gate g of each
// level fires iff Σ w·x ≥ θ over its row. No bit slicing, no plan.
func simpleEval(c *Circuit, in []uint64) []uint64 {
	out := make([]uint64, c.NumOutputs())
	for lane := range 64 {
		prev := make([]int64, c.NumInputs)
		for i := range prev {
			prev[i] = int64(in[i] >> lane & 1)
		}
		for L := 1; L <= c.Depth(); L++ {
			cur := make([]int64, 0, c.LevelWidth(L))
			for g := c.LevelStart[L-1]; g < c.LevelStart[L]; g++ {
				var sum int64
				for e := c.RowStart[g]; e < c.RowStart[g+1]; e++ {
					sum += int64(c.Weight[e]) * prev[c.Src[e]]
				}
				v := int64(0)
				if sum >= int64(c.Threshold[g]) {
					v = 1
				}
				cur = append(cur, v)
			}
			prev = cur
		}
		for j, v := range prev {
			out[j] |= uint64(v) << lane
		}
	}
	return out
}

// xorKind is a crafted XOR lowering, exact or slightly wrong, that
// randomCircuit places as counters in one level and a parity in the next.
type xorKind int

const (
	xorExact         xorKind = iota // counters [S ≥ 1..n], parity +1, −1, … θ = 1
	xorWrongWeight                  // one parity weight is off
	xorMissing                      // the parity skips one counter
	xorTheta2                       // the parity's θ is 2
	xorSwapped                      // the parity reads two counters swapped
	xorTwoRows                      // the parity reads counters of two rows
	xorCounterTheta                 // one counter's θ is off
	xorCounterWeight                // the counters' row has a weight that is not 1
	xorExtraEdge                    // the counters' row has n+1 edges
	xorGap                          // another gate sits between two counters
	xorReadAlso                     // another gate also reads the first counter
	xorKinds
)

// circuitGen builds random layered circuits for the evaluator tests.
type circuitGen struct {
	rng *rand.Rand
	b   *Builder
	tag int32
}

// weight returns a random weight in [−5, 5], ±1 more often than others.
func (cg *circuitGen) weight(zeroFree bool) int32 {
	for {
		var w int32
		switch cg.rng.IntN(4) {
		case 0:
			w = 1
		case 1:
			w = -1
		default:
			w = int32(cg.rng.IntN(11) - 5)
		}
		if w != 0 || !zeroFree {
			return w
		}
	}
}

// row returns a random row over a level of width prev: fan-in 0..40,
// weights all 1, all ±1, or in [−5, 5] (zero-free or not).
func (cg *circuitGen) row(prev int) ([]int32, []int32) {
	r := cg.rng
	n := r.IntN(41)
	if r.IntN(2) == 0 {
		n = r.IntN(6)
	}
	src, w := make([]int32, n), make([]int32, n)
	style := r.IntN(4)
	for i := range src {
		src[i] = int32(r.IntN(prev))
		switch style {
		case 0:
			w[i] = 1
		case 1:
			w[i] = 1 - 2*int32(r.IntN(2))
		default:
			w[i] = cg.weight(style == 2)
		}
	}
	return src, w
}

// theta returns a threshold for a row: mostly in [−neg, pos+1], sometimes
// far outside.
func (cg *circuitGen) theta(w []int32) int32 {
	var pos, neg int32
	for _, x := range w {
		if x > 0 {
			pos += x
		} else {
			neg -= x
		}
	}
	switch cg.rng.IntN(8) {
	case 0:
		return -neg - 1 - int32(cg.rng.IntN(3))
	case 1:
		return pos + 1 + int32(cg.rng.IntN(3))
	}
	return -neg + int32(cg.rng.IntN(int(pos+neg)+2))
}

// randomCircuit returns a random circuit of inputs inputs: levels of
// random gates, copies, runs of gates sharing a row with different
// thresholds, and crafted XOR lowerings (counters in one level, their
// parity in the next, exact or near misses).
func randomCircuit(rng *rand.Rand, inputs, depth int) *Circuit {
	cg := &circuitGen{rng: rng, b: NewBuilder(inputs, nil)}
	cg.tag = cg.b.Tag("")
	prev := inputs
	var pending []func() // parity gates to place in the next level
	for L := 0; L < depth; L++ {
		// The parities of the XORs placed in the level before.
		for _, f := range pending {
			f()
		}
		pending = pending[:0]
		for range 1 + rng.IntN(25) {
			switch rng.IntN(6) {
			case 0: // a copy
				cg.b.Copy(int32(rng.IntN(prev)), cg.tag)
			case 1: // a run of gates sharing a row
				src, w := cg.row(prev)
				for range 1 + rng.IntN(6) {
					cg.b.Gate(KindGate, cg.theta(w), src, w, cg.tag)
				}
			case 2, 3: // an XOR lowering, exact or not
				if L < depth-1 {
					kind := xorKind(rng.IntN(int(xorKinds)))
					if rng.IntN(3) == 0 {
						kind = xorExact
					}
					pending = append(pending, cg.xor(prev, kind, 1+rng.IntN(12), true))
				}
			default:
				src, w := cg.row(prev)
				cg.b.Gate(KindGate, cg.theta(w), src, w, cg.tag)
			}
		}
		if cg.b.Width() == 0 {
			cg.b.Copy(int32(rng.IntN(prev)), cg.tag)
		}
		prev = cg.b.Width()
		cg.b.Level()
	}
	return cg.b.Circuit(nil)
}

// xor places in the open level the counters of an XOR of n random
// sources of a level of width prev, lowered as kind says (exactly or a
// near miss), and returns the placement of its parity gate in the next
// level; with extras, sometimes a second identical parity gate or gates
// reading the first counter as a counter come with it.
func (cg *circuitGen) xor(prev int, kind xorKind, n int, extras bool) func() {
	r := cg.rng
	src := make([]int32, n)
	w := make([]int32, n)
	for i := range src {
		src[i], w[i] = int32(r.IntN(prev)), 1
	}
	rowSrc, rowW := src, w
	if kind == xorCounterWeight {
		rowW = append([]int32(nil), w...)
		rowW[r.IntN(n)] = []int32{-1, 2, 0}[r.IntN(3)]
	}
	if kind == xorExtraEdge {
		rowSrc = append(append([]int32(nil), src...), int32(r.IntN(prev)))
		rowW = append(append([]int32(nil), w...), 1)
	}
	gap := -1
	if kind == xorGap && n >= 2 {
		gap = 1 + r.IntN(n-1)
	}
	counters := make([]int32, n)
	for k := range n {
		if k == gap {
			cg.b.Gate(KindGate, 1, src, w, cg.tag) // same row, θ 1 again
		}
		theta := int32(k + 1)
		if kind == xorCounterTheta && k == n/2 {
			theta += []int32{1, -1}[r.IntN(2)]
		}
		counters[k] = cg.b.Gate(KindGate, theta, rowSrc, rowW, cg.tag)
	}
	other := counters
	if kind == xorTwoRows {
		// A second XOR of the same size over other sources.
		src2 := make([]int32, n)
		for i := range src2 {
			src2[i] = int32(r.IntN(prev))
		}
		other = make([]int32, n)
		for k := range n {
			other[k] = cg.b.Gate(KindGate, int32(k+1), src2, w, cg.tag)
		}
	}
	return func() {
		ps := make([]int32, 0, n)
		pw := make([]int32, 0, n)
		for k := range n {
			c := counters[k]
			if kind == xorTwoRows && k >= n/2 {
				c = other[k]
			}
			if kind == xorMissing && k == n/2 && n > 1 {
				continue
			}
			ps = append(ps, c)
			pw = append(pw, 1-2*int32(k&1))
		}
		if kind == xorWrongWeight {
			i := r.IntN(len(pw))
			pw[i] = []int32{2, -pw[i], 0}[r.IntN(3)]
		}
		if kind == xorSwapped && len(ps) >= 2 {
			i := r.IntN(len(ps) - 1)
			ps[i], ps[i+1] = ps[i+1], ps[i]
		}
		theta := int32(1)
		if kind == xorTheta2 {
			theta = 2
		}
		cg.b.Gate(KindGate, theta, ps, pw, cg.tag)
		if kind == xorReadAlso {
			cg.b.Gate(KindGate, 1, []int32{ps[0], ps[len(ps)-1]}, []int32{2, -1}, cg.tag)
		}
		if !extras {
			return
		}
		switch r.IntN(4) {
		case 0: // a second parity of the same counters
			cg.b.Gate(KindGate, theta, ps, pw, cg.tag)
		case 1: // gates reading the first counter as a counter
			cg.b.Copy(ps[0], cg.tag)
			cg.b.Gate(KindGate, 1, []int32{ps[0], ps[len(ps)-1]}, []int32{1, 1}, cg.tag)
		}
	}
}

// randomWords returns n random words.
func randomWords(rng *rand.Rand, n int) []uint64 {
	w := make([]uint64, n)
	for i := range w {
		w[i] = rng.Uint64()
	}
	return w
}

// checkEvaluator compares c's Evaluator with simpleEval on random words.
func checkEvaluator(t *testing.T, rng *rand.Rand, c *Circuit, what string) {
	t.Helper()
	if err := c.Validate(); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	ev := c.Evaluator()
	for range 2 {
		in := randomWords(rng, c.NumInputs)
		got, err := ev(in)
		if err != nil {
			t.Fatal(err)
		}
		want := simpleEval(c, in)
		for j := range want {
			if got[j] != want[j] {
				t.Fatalf("%s: output %d: got %064b\nwant %064b\ncircuit %+v", what, j, got[j], want[j], c)
			}
		}
	}
}

// TestEvaluatorMatchesSimple compares the Evaluator with the simple
// per-lane definition on many random circuits: random widths, fan-ins
// 0..40, weights in [−5, 5], thresholds in and out of range, copies,
// runs of gates sharing a row, and XOR lowerings exact or nearly so.
func TestEvaluatorMatchesSimple(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	iters := 3000
	if testing.Short() {
		iters = 300
	}
	for range iters {
		c := randomCircuit(rng, 1+rng.IntN(20), 1+rng.IntN(6))
		checkEvaluator(t, rng, c, "random circuit")
	}
}

// TestParityShortcutGuard builds each crafted XOR lowering alone (inputs,
// counters, parity) and checks both the values and whether the plan took
// the parity shortcut: only for the exact pattern.
func TestParityShortcutGuard(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for kind := range xorKinds {
		for _, n := range []int{1, 2, 3, 5, 11, 12} {
			for range 20 {
				cg := &circuitGen{rng: rng, b: NewBuilder(16, nil)}
				cg.tag = cg.b.Tag("")
				place := cg.xor(16, kind, n, false)
				cg.b.Level()
				place()
				cg.b.Level()
				c := cg.b.Circuit(nil)
				checkEvaluator(t, rng, c, "xor kind")
				xors := 0
				for _, in := range c.flatRows(math.MaxInt).evalPlan().ins {
					if in.op == opXor {
						xors++
					}
				}
				want := 0
				if kind == xorExact && n >= 2 {
					want = 1
				}
				if xors != want {
					t.Errorf("kind %d, n %d: %d XORs in the plan, want %d", kind, n, xors, want)
				}
			}
		}
	}
}

// TestEvaluatorConcurrent runs one Evaluator from several goroutines.
func TestEvaluatorConcurrent(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for range 20 {
		c := randomCircuit(rng, 1+rng.IntN(20), 2+rng.IntN(5))
		ev := c.Evaluator()
		ins := make([][]uint64, 8)
		for i := range ins {
			ins[i] = randomWords(rng, c.NumInputs)
		}
		var wg sync.WaitGroup
		for _, in := range ins {
			wg.Go(func() {
				for range 20 {
					got, err := ev(in)
					if err != nil {
						t.Error(err)
						return
					}
					for j, w := range simpleEval(c, in) {
						if got[j] != w {
							t.Errorf("output %d differs", j)
							return
						}
					}
				}
			})
		}
		wg.Wait()
	}
}
