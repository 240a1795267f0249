package decoder

import (
	"math"
	"slices"
)

// The residual stream holds, for each level of a cone, its forms: a basis
// of what the later levels read of the level's nodes (a parity's counters
// are read by their alternating sum: one dimension, not one a counter). A
// node's units write its value times its coefficient into every form of
// its level; a reader reads the forms with its coordinates. A form holds
// its dimension from its level to the last level reading it, which clears
// it, so a later form may take it in the same layer.

// coneForms is a kind's use of the work dimensions.
type coneForms struct {
	// writeDim[i], writeW[i]: node i adds writeW·value to those dims.
	writeDim [][]int32
	writeW   [][]float64
	// readDim[i], readW[i]: node i's in-cone terms, as reads of dims
	// (weights already multiplied by the terms' coefficients).
	readDim [][]int32
	readW   [][]float64
	clears  []formClear
	dims    int
}

// formClear clears work dimension dim on layer (0-based) layer: its value
// lies in [lo, hi].
type formClear struct {
	dim, layer int32
	lo, hi     float64
}

// sparse is a float combination of cone nodes, sorted by node.
type sparse struct {
	idx []int32
	w   []float64
}

// buildForms chooses every level's forms for cone c and gives them dims.
func buildForms(c *cone) *coneForms {
	n := len(c.nodes)
	cf := &coneForms{writeDim: make([][]int32, n), writeW: make([][]float64, n),
		readDim: make([][]int32, n), readW: make([][]float64, n)}
	var freeAt []int32 // per dim: the level from which it is free
	alloc := func(from, until int32) int32 {
		best := -1
		for k, f := range freeAt {
			if f <= from && (best < 0 || freeAt[best] > f) {
				best = k
			}
		}
		if best < 0 {
			best = len(freeAt)
			freeAt = append(freeAt, 0)
		}
		freeAt[best] = until
		return int32(best)
	}
	for L := int32(1); L <= c.levels; L++ {
		// The readers' sums over this level's nodes.
		var readers []int32
		var sums []sparse
		for i, nd := range c.nodes {
			if nd.level <= L {
				continue
			}
			var x sparse
			for k, u := range nd.in {
				if c.nodes[u].level == L {
					x.idx = append(x.idx, u)
					x.w = append(x.w, nd.inW[k])
				}
			}
			if len(x.idx) > 0 {
				readers = append(readers, int32(i))
				sums = append(sums, x)
			}
		}
		if len(sums) == 0 {
			continue
		}
		fb := newFloatBasis()
		for _, x := range sums {
			fb.offer(x)
		}
		// Each form's last reader, and its dim.
		last := make([]int32, len(fb.vecs))
		coords := make([]map[int32]float64, len(sums))
		for r, x := range sums {
			coords[r] = fb.coords(x)
			for j := range coords[r] {
				last[j] = max(last[j], c.nodes[readers[r]].level)
			}
		}
		dims := make([]int32, len(fb.vecs))
		for j, v := range fb.vecs {
			dims[j] = alloc(L, last[j])
			var lo, hi float64
			for k, i := range v.idx {
				cf.writeDim[i] = append(cf.writeDim[i], dims[j])
				cf.writeW[i] = append(cf.writeW[i], v.w[k])
				lo += min(v.w[k], 0)
				hi += max(v.w[k], 0)
			}
			cf.clears = append(cf.clears, formClear{dim: dims[j], layer: last[j] - 1, lo: lo, hi: hi})
		}
		for r, i := range readers {
			keys := make([]int32, 0, len(coords[r]))
			for j := range coords[r] {
				keys = append(keys, j)
			}
			slices.Sort(keys)
			for _, j := range keys {
				cf.readDim[i] = append(cf.readDim[i], dims[j])
				cf.readW[i] = append(cf.readW[i], coords[r][j])
			}
		}
	}
	cf.dims = len(freeAt)
	return cf
}

// floatBasis is a greedy basis of sparse vectors: the vectors offered that
// are independent of the ones before, with elimination rows to express any
// vector of their span.
type floatBasis struct {
	vecs  []sparse
	rows  []map[int32]float64 // reduced rows, pivot = smallest index
	comb  []map[int32]float64 // row i = Σ comb[i][j]·vecs[j]
	pivot map[int32]int
}

func newFloatBasis() *floatBasis { return &floatBasis{pivot: map[int32]int{}} }

func (fb *floatBasis) reduce(x sparse) (map[int32]float64, map[int32]float64) {
	r := make(map[int32]float64, len(x.idx))
	for k, i := range x.idx {
		r[i] += x.w[k]
	}
	f := map[int32]float64{}
	for {
		best := int32(math.MaxInt32)
		for i, c := range r {
			if _, ok := fb.pivot[i]; ok && c != 0 && i < best {
				best = i
			}
		}
		if best == math.MaxInt32 {
			return r, f
		}
		ri := fb.pivot[best]
		row := fb.rows[ri]
		m := r[best] / row[best]
		for i, c := range row {
			nv := r[i] - m*c
			if math.Abs(nv) < 1e-9 {
				delete(r, i)
			} else {
				r[i] = nv
			}
		}
		for j, c := range fb.comb[ri] {
			f[j] += m * c
		}
	}
}

// offer adds x if it is independent of the basis.
func (fb *floatBasis) offer(x sparse) {
	r, f := fb.reduce(x)
	if len(r) == 0 {
		return
	}
	k := int32(len(fb.vecs))
	fb.vecs = append(fb.vecs, x)
	piv := int32(math.MaxInt32)
	for i := range r {
		piv = min(piv, i)
	}
	comb := map[int32]float64{k: 1}
	for j, c := range f {
		comb[j] -= c
	}
	fb.pivot[piv] = len(fb.rows)
	fb.rows = append(fb.rows, r)
	fb.comb = append(fb.comb, comb)
}

// coords returns x = Σ coords[j]·vecs[j] (x must be in the span).
func (fb *floatBasis) coords(x sparse) map[int32]float64 {
	r, f := fb.reduce(x)
	if len(r) != 0 {
		panic("decoder: a reader's sum is outside its level's forms")
	}
	for j, a := range f {
		if math.Abs(a) < 1e-12 {
			delete(f, j)
		}
	}
	return f
}
