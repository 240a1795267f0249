package model

import "math"

// MaxRowSum returns the largest Σ|entry| over the rows of all tensors: a
// bound on every partial sum a row computes when its inputs are bits
// (0 or 1), as the residual-free mappings' are; a model whose inputs are
// not bits (normalised residual streams) can exceed it.
func (m *Model) MaxRowSum() float64 {
	var most float64
	for i := range m.Tensors {
		t := &m.Tensors[i]
		for r := 0; r < t.Rows; r++ {
			_, vals := t.Row(r)
			var s float64
			for _, v := range vals {
				s += math.Abs(float64(v))
			}
			most = math.Max(most, s)
		}
	}
	return most
}
