package tokensasstates

import (
	"maps"
	"slices"

	"github.com/tcforge/tcforge/sdk/model"
)

// tensor collects a sparse matrix row by row.
type tensor struct {
	name       string
	rows, cols int
	ent        []map[int32]float64
	// frozen is the built matrix once freeze has dropped ent (a block's
	// tensors, written: maps of a wide FFN take several times the memory
	// of its CSR rows).
	frozen *model.Tensor
}

func newTensor(name string, rows, cols int) *tensor {
	t := &tensor{name: name, rows: rows, cols: cols, ent: make([]map[int32]float64, rows)}
	return t
}

func (t *tensor) add(r, c int, v float64) {
	if t.ent[r] == nil {
		t.ent[r] = map[int32]float64{}
	}
	t.ent[r][int32(c)] += v
}

// readLN makes row r a read of LayerNorm's output: the sink gets minus the
// sum of the row's other weights.
func (t *tensor) readLN(r int) {
	var s float64
	for _, c := range slices.Sorted(maps.Keys(t.ent[r])) { // in order: the same model every run
		if c != dimSink {
			s += t.ent[r][c]
		}
	}
	if s != 0 {
		t.add(r, dimSink, -s)
	}
}

// balanceRows makes every row sum to zero by adding minus its sum in
// column c (an embedding whose rows are written to the stream).
func (t *tensor) balanceRows(c int) {
	for r, e := range t.ent {
		var s float64
		for _, c := range slices.Sorted(maps.Keys(e)) {
			s += e[c]
		}
		if s != 0 {
			t.add(r, c, -s)
		}
	}
}

// balanceCols makes every column sum to zero by adding minus its sum in
// row r (a projection whose rows are the stream dimensions it writes).
func (t *tensor) balanceCols(r int) {
	sum := map[int32]float64{}
	for _, e := range t.ent {
		for _, c := range slices.Sorted(maps.Keys(e)) {
			sum[c] += e[c]
		}
	}
	for _, c := range slices.Sorted(maps.Keys(sum)) {
		if s := sum[c]; s != 0 {
			t.add(r, int(c), -s)
		}
	}
}

// freeze builds t and drops its maps; only its shape may change after
// (padFFN's rows and columns, which add no entries).
func (t *tensor) freeze() {
	m := t.build()
	t.frozen, t.ent = &m, nil
}

// resize sets t's shape to rows × cols (rows ≥ t.rows, cols ≥ t.cols): the
// new rows are empty.
func (t *tensor) resize(rows, cols int) {
	if m := t.frozen; m != nil {
		for range rows - t.rows {
			m.RowPtr = append(m.RowPtr, m.RowPtr[len(m.RowPtr)-1])
		}
		m.Rows, m.Cols = rows, cols
	} else {
		t.ent = append(t.ent, make([]map[int32]float64, rows-t.rows)...)
	}
	t.rows, t.cols = rows, cols
}

func (t *tensor) build() model.Tensor {
	if t.frozen != nil {
		return *t.frozen
	}
	m := model.Tensor{Name: t.name, Rows: t.rows, Cols: t.cols, RowPtr: make([]int32, t.rows+1)}
	for r, e := range t.ent {
		cols := make([]int32, 0, len(e))
		for c, v := range e {
			if v != 0 {
				cols = append(cols, c)
			}
		}
		slices.Sort(cols)
		for _, c := range cols {
			m.Col = append(m.Col, c)
			m.Val = append(m.Val, float32(e[c]))
		}
		m.RowPtr[r+1] = int32(len(m.Col))
	}
	return m
}

// fill sets every entry of a 1×n tensor to v.
func fill(t *tensor, v float64) *tensor {
	for c := range t.cols {
		t.add(0, c, v)
	}
	return t
}
