package model

import (
	"fmt"
	"math"
	"sort"
)

// Builder collects the entries of a sparse matrix in any order; Tensor
// sorts them into CSR form, summing duplicates and dropping zeros.
type Builder struct {
	name       string
	rows, cols int
	r, c       []int32
	v          []float64
}

// NewBuilder starts a rows×cols matrix named name.
func NewBuilder(name string, rows, cols int) *Builder {
	return &Builder{name: name, rows: rows, cols: cols}
}

// Grow reserves room for n more entries.
func (b *Builder) Grow(n int) {
	if cap(b.r)-len(b.r) < n {
		b.r = append(make([]int32, 0, len(b.r)+n), b.r...)
		b.c = append(make([]int32, 0, len(b.c)+n), b.c...)
		b.v = append(make([]float64, 0, len(b.v)+n), b.v...)
	}
}

// Add adds v to entry (r, c).
func (b *Builder) Add(r, c int, v float64) {
	b.r = append(b.r, int32(r))
	b.c = append(b.c, int32(c))
	b.v = append(b.v, v)
}

// Tensor returns the matrix in CSR form. It fails on an entry outside the
// shape, a non-finite value or more entries than int32 indexes.
func (b *Builder) Tensor() (Tensor, error) {
	if len(b.v) > math.MaxInt32 {
		return Tensor{}, fmt.Errorf("tensor %q: %d entries exceed the int32 CSR layout", b.name, len(b.v))
	}
	if b.rows < 0 || b.cols < 0 || b.rows >= math.MaxInt32 || b.cols >= math.MaxInt32 {
		return Tensor{}, fmt.Errorf("tensor %q: bad shape %d×%d", b.name, b.rows, b.cols)
	}
	// Counting sort by row, then sort each row by column.
	count := make([]int32, b.rows+1)
	for k, r := range b.r {
		if r < 0 || int(r) >= b.rows || b.c[k] < 0 || int(b.c[k]) >= b.cols {
			return Tensor{}, fmt.Errorf("tensor %q: entry (%d, %d) outside %d×%d", b.name, r, b.c[k], b.rows, b.cols)
		}
		if math.IsNaN(b.v[k]) || math.IsInf(b.v[k], 0) {
			return Tensor{}, fmt.Errorf("tensor %q: entry (%d, %d) is %v", b.name, r, b.c[k], b.v[k])
		}
		count[r+1]++
	}
	for r := 0; r < b.rows; r++ {
		count[r+1] += count[r]
	}
	next := append([]int32(nil), count[:b.rows]...)
	col := make([]int32, len(b.r))
	val := make([]float64, len(b.r))
	for k, r := range b.r {
		p := next[r]
		next[r]++
		col[p], val[p] = b.c[k], b.v[k]
	}
	t := Tensor{Name: b.name, Rows: b.rows, Cols: b.cols, RowPtr: make([]int32, b.rows+1)}
	t.Col = make([]int32, 0, len(col))
	t.Val = make([]float32, 0, len(col))
	for r := 0; r < b.rows; r++ {
		lo, hi := count[r], count[r+1]
		rc, rv := col[lo:hi], val[lo:hi]
		if !sort.SliceIsSorted(rc, func(i, j int) bool { return rc[i] < rc[j] }) {
			sort.Sort(byCol{rc, rv})
		}
		for k := 0; k < len(rc); {
			c, s := rc[k], rv[k]
			k++
			for k < len(rc) && rc[k] == c {
				s += rv[k]
				k++
			}
			if f := float32(s); f != 0 {
				t.Col = append(t.Col, c)
				t.Val = append(t.Val, f)
			}
		}
		t.RowPtr[r+1] = int32(len(t.Col))
	}
	b.r, b.c, b.v = nil, nil, nil
	return t, nil
}

type byCol struct {
	c []int32
	v []float64
}

func (s byCol) Len() int           { return len(s.c) }
func (s byCol) Less(i, j int) bool { return s.c[i] < s.c[j] }
func (s byCol) Swap(i, j int) {
	s.c[i], s.c[j] = s.c[j], s.c[i]
	s.v[i], s.v[j] = s.v[j], s.v[i]
}

// Zero returns an all-zero rows×cols tensor (no entries).
func Zero(name string, rows, cols int) Tensor {
	return Tensor{Name: name, Rows: rows, Cols: cols, RowPtr: make([]int32, rows+1)}
}

// Ones returns a 1×n tensor of ones (an RMSNorm weight that does nothing).
func Ones(name string, n int) Tensor {
	t := Tensor{Name: name, Rows: 1, Cols: n, RowPtr: []int32{0, int32(n)}, Col: make([]int32, n), Val: make([]float32, n)}
	for i := range t.Col {
		t.Col[i] = int32(i)
		t.Val[i] = 1
	}
	return t
}

// Transpose returns t's transpose in CSR form (t's CSC form).
func (t *Tensor) Transpose() *Tensor {
	out := &Tensor{Name: t.Name + "ᵀ", Rows: t.Cols, Cols: t.Rows, RowPtr: make([]int32, t.Cols+1)}
	for _, c := range t.Col {
		out.RowPtr[c+1]++
	}
	for c := 0; c < t.Cols; c++ {
		out.RowPtr[c+1] += out.RowPtr[c]
	}
	next := append([]int32(nil), out.RowPtr[:t.Cols]...)
	out.Col = make([]int32, len(t.Col))
	out.Val = make([]float32, len(t.Val))
	for r := 0; r < t.Rows; r++ {
		a, b := t.RowPtr[r], t.RowPtr[r+1]
		for k := a; k < b; k++ {
			c := t.Col[k]
			p := next[c]
			next[c]++
			out.Col[p], out.Val[p] = int32(r), t.Val[k]
		}
	}
	return out
}
