package model

import "testing"

func TestMaxRowSum(t *testing.T) {
	m := &Model{Tensors: []Tensor{
		{Name: "a", Rows: 2, Cols: 3, RowPtr: []int32{0, 2, 3}, Col: []int32{0, 2, 1}, Val: []float32{3, -4.5, 7}},
		{Name: "b", Rows: 1, Cols: 2, RowPtr: []int32{0, 2}, Col: []int32{0, 1}, Val: []float32{-2, 1}},
	}}
	if got := m.MaxRowSum(); got != 7.5 {
		t.Errorf("MaxRowSum = %g, want 7.5", got)
	}
}
