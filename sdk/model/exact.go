package model

import "math"

// MaxAbsWeight returns the largest magnitude of any stored tensor entry
// (0 for a model without tensors).
func (m *Model) MaxAbsWeight() float64 {
	var most float64
	for i := range m.Tensors {
		for _, v := range m.Tensors[i].Val {
			most = math.Max(most, math.Abs(float64(v)))
		}
	}
	return most
}
