package fusion

// Switching functions (rules 4 and 5).
//
// A node fused from pending operands is a function Φ(y₀, …, y_{n−1}) of a
// few integer sums yⱼ of level-L forms, each with a known range. A
// mixed-radix projection S = Σ Mⱼ·yⱼ (digits in some order, each possibly
// reversed) is injective on the box of ranges, so Φ = F(S) for a function F
// of one integer, and F(S) = F(S_min) + Σ_s (F(s) − F(s−1))·[S ≥ s] over
// its switch points: one threshold gate per switch point. The solver tries
// every digit order and direction and keeps the projection with the fewest
// switch points.

// Component kinds: how a sum yⱼ enters the node's function.
const (
	ckDirect uint8 = iota // yⱼ itself, weighted (threshold roots)
	ckPar                 // parity(yⱼ + p)
	ckThr                 // [yⱼ ≥ p] xor neg
	ckFun                 // fun(yⱼ): a switching function's table (modular.go)
)

// maxComps bounds the components of one fused node.
const maxComps = 4

// maxBox bounds the number of points of a fused node's box of ranges.
const maxBox = 4096

// shape describes a node's function of its components (the memo key).
type shape struct {
	xorRoot bool  // Φ = rootP xor ⊕ⱼ φⱼ(yⱼ); else Φ = [Σ wⱼ·φⱼ(yⱼ) ≥ rootP]
	rootP   int64 // constant parity or threshold
	n       int8
	kind    [maxComps]uint8
	lo, hi  [maxComps]int64     // range of yⱼ
	p       [maxComps]int64     // ckPar: added constant; ckThr: threshold
	neg     [maxComps]bool      // ckThr: negated
	w       [maxComps]int64     // threshold roots: weight of φⱼ
	fun     [maxComps]*funTable // ckFun: the function, interned (solver.table)
}

// solution is a node realised as F(S), S = Σ mult[j]·yⱼ.
type solution struct {
	mult [maxComps]int64
	base int8    // F(S_min)
	at   []int64 // switch points s: F changes between s−1 and s
	sign []int8  // +1: F goes 0→1 at s; −1: 1→0
}

// phi evaluates the node's function at y.
func (sh *shape) phi(y *[maxComps]int64) int8 {
	if sh.xorRoot {
		v := sh.rootP
		for j := int8(0); j < sh.n; j++ {
			v ^= sh.comp(j, y[j])
		}
		return int8(v & 1)
	}
	var sum int64
	for j := int8(0); j < sh.n; j++ {
		if sh.kind[j] == ckDirect {
			sum += sh.w[j] * y[j]
		} else {
			sum += sh.w[j] * sh.comp(j, y[j])
		}
	}
	if sum >= sh.rootP {
		return 1
	}
	return 0
}

// comp is φⱼ(y) for a parity or threshold component.
func (sh *shape) comp(j int8, y int64) int64 {
	switch sh.kind[j] {
	case ckPar:
		return (y + sh.p[j]) & 1
	case ckThr:
		b := int64(0)
		if y >= sh.p[j] {
			b = 1
		}
		if sh.neg[j] {
			b ^= 1
		}
		return b
	case ckFun:
		return int64(sh.fun[j].val[y-sh.fun[j].lo])
	}
	return y & 1
}

// box returns the number of points of the box of ranges, or -1 if it
// exceeds maxBox.
func (sh *shape) box(maxBox int64) int64 {
	b := int64(1)
	for j := int8(0); j < sh.n; j++ {
		b *= sh.hi[j] - sh.lo[j] + 1
		if b > maxBox {
			return -1
		}
	}
	return b
}

// solver memoises solutions by shape. Lookups try a few recently used
// shapes before the map: a circuit has a handful of shapes, mostly met
// several times in a row (SHA3-256: 24 shapes, and 60% of the lookups
// repeat the one before), and comparing shapes is much cheaper than
// hashing one.
type solver struct {
	maxBox int64 // bound of a box's points
	memo   map[shape]*solution
	recent [4]memoEntry
	next   int // the recent entry to replace next
	tables map[string]*funTable
}

// memoEntry is one memoised solution (nil: out of bounds).
type memoEntry struct {
	sh  shape
	sol *solution
	set bool
}

func newSolver(opts Options) *solver {
	s := &solver{memo: map[shape]*solution{}, maxBox: maxBox}
	if opts.Objective == Round {
		s.maxBox = maxBoxRound
	}
	return s
}

// solve returns the projection of sh with the fewest switch points, or nil
// if sh is out of bounds (box too large).
func (s *solver) solve(sh shape) *solution {
	for i := range s.recent {
		if e := &s.recent[i]; e.set && e.sh == sh {
			return e.sol
		}
	}
	sol, ok := s.memo[sh]
	if !ok {
		sol = s.search(&sh)
		s.memo[sh] = sol
	}
	s.recent[s.next] = memoEntry{sh: sh, sol: sol, set: true}
	s.next = (s.next + 1) % len(s.recent)
	return sol
}

var perms = [maxComps + 1][][]int8{
	{{}},
	{{0}},
	permsOf(2),
	permsOf(3),
	permsOf(4),
}

func permsOf(n int) [][]int8 {
	var out [][]int8
	var rec func(prefix []int8, used int)
	rec = func(prefix []int8, used int) {
		if len(prefix) == n {
			out = append(out, append([]int8(nil), prefix...))
			return
		}
		for i := 0; i < n; i++ {
			if used&(1<<i) == 0 {
				rec(append(prefix, int8(i)), used|1<<i)
			}
		}
	}
	rec(nil, 0)
	return out
}

func (s *solver) search(sh *shape) *solution {
	if sh.n == 1 && !sh.xorRoot && sh.kind[0] == ckDirect && sh.w[0] == 1 {
		// A plain threshold: one switch point (or a constant).
		switch {
		case sh.rootP <= sh.lo[0]:
			return &solution{mult: [maxComps]int64{1}, base: 1}
		case sh.rootP > sh.hi[0]:
			return &solution{mult: [maxComps]int64{1}}
		}
		return &solution{mult: [maxComps]int64{1}, at: []int64{sh.rootP}, sign: []int8{1}}
	}
	box := sh.box(s.maxBox)
	if box < 0 {
		return nil
	}
	n := int(sh.n)
	tries := box
	for k := 2; k <= n; k++ {
		tries *= int64(2 * k)
	}
	tries *= 2
	ords := perms[n]
	signMasks := 1 << n
	if tries > 1<<20 {
		// Too many: the identity order and its reverse, increasing digits.
		ords = [][]int8{ords[0], ords[len(ords)-1]}
		signMasks = 1
	}
	var best *solution
	bestN := int(^uint(0) >> 1)
	var at []int64
	var sign []int8
	var y [maxComps]int64
	for _, ord := range ords {
		for sm := 0; sm < signMasks; sm++ {
			var radix, zlo, span, sg [maxComps]int64
			r := int64(1)
			for _, j := range ord {
				span[j] = sh.hi[j] - sh.lo[j]
				sg[j] = 1
				zlo[j] = sh.lo[j]
				if sm&(1<<j) != 0 {
					sg[j] = -1
					zlo[j] = -sh.hi[j]
				}
				radix[j] = r
				r *= span[j] + 1
			}
			var origin int64
			for j := 0; j < n; j++ {
				origin += radix[j] * zlo[j]
			}
			var e [maxComps]int64
			for j := 0; j < n; j++ {
				y[j] = sg[j] * zlo[j]
			}
			at, sign = at[:0], sign[:0]
			first := sh.phi(&y)
			prev := first
			aborted := false
			for idx := int64(1); idx < box; idx++ {
				// odometer increment in digit order
				for _, j := range ord {
					if e[j] < span[j] {
						e[j]++
						y[j] = sg[j] * (e[j] + zlo[j])
						break
					}
					e[j] = 0
					y[j] = sg[j] * zlo[j]
				}
				v := sh.phi(&y)
				if v != prev {
					at = append(at, origin+idx)
					if v == 1 {
						sign = append(sign, 1)
					} else {
						sign = append(sign, -1)
					}
					prev = v
					if len(at) >= bestN {
						aborted = true
						break
					}
				}
			}
			if aborted {
				continue
			}
			bestN = len(at)
			best = &solution{base: first, at: append([]int64(nil), at...), sign: append([]int8(nil), sign...)}
			for j := 0; j < n; j++ {
				best.mult[j] = radix[j] * sg[j]
			}
		}
	}
	return best
}
