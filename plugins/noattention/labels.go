package noattention

import (
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/model"
)

// formLabel labels form i of level L held in dimension dim after L blocks.
func formLabel(c *layered.Circuit, L, i int, dim int32) model.ValueLabel {
	v := model.ValueLabel{Dim: dim, From: int32(L), Until: int32(L), Kind: model.Form, Level: int32(L), Index: int32(i), Name: c.FormName(L, i)}
	if !c.HasForms() || L >= c.Depth() {
		v.Kind = model.Gate
	}
	return v
}

// labelMLP labels an MLP model: dimension 0 is the constant 1, dimension
// 1+i holds form i of level L after L blocks; units are named by what they
// write.
func labelMLP(m *model.Model, c *layered.Circuit) (*model.Model, error) {
	l := c.LabelTable()
	D := c.Depth()
	l.Values = append(l.Values, model.ValueLabel{Dim: 0, Until: int32(D), Name: "one (the units' bias)"})
	for L := 0; L <= D; L++ {
		for i := range c.NumForms(L) {
			l.Values = append(l.Values, formLabel(c, L, i, int32(1+i)))
		}
	}
	m.Labels = l
	m.LabelUnits()
	return m, nil
}

// labelResidual labels a residual model: form i of level L sits in
// slots[L][i] after L blocks, the last dimension is the anchor.
func labelResidual(m *model.Model, c *layered.Circuit, slots [][]int32) (*model.Model, error) {
	l := c.LabelTable()
	D := c.Depth()
	l.Values = append(l.Values, model.ValueLabel{Dim: int32(m.DModel - 1), Until: int32(D), Name: "anchor (RMSNorm's scale)"})
	for L, s := range slots {
		for i, dim := range s {
			l.Values = append(l.Values, formLabel(c, L, i, dim))
		}
	}
	m.Labels = l
	m.LabelUnits()
	return m, nil
}
