package layered

import (
	"strconv"

	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/model"
)

// LabelTable returns an empty label table shaped for c: its level widths
// and form counts (see model.Labels), for a mapper to fill.
func (c *Circuit) LabelTable() *model.Labels {
	D := c.Depth()
	l := &model.Labels{Levels: make([]int32, D+1), Forms: make([]int32, D+1)}
	for L := 0; L <= D; L++ {
		l.Levels[L] = int32(c.LevelWidth(L))
		l.Forms[L] = int32(c.NumForms(L))
	}
	return l
}

// ValueName returns the provenance of value i of level L (input i for
// L = 0, else gate i): the construction's scope tag (for an input, its
// input range and offset) and, where the circuit carries one, its
// position hint ("z=3").
func (c *Circuit) ValueName(L, i int) string {
	var s string
	if L == 0 {
		s = "input " + strconv.Itoa(i)
		for _, r := range c.InputRanges {
			if i >= r.Start && i < r.Start+r.Len {
				s = r.Name + "[" + strconv.Itoa(i-r.Start) + "]"
				break
			}
		}
	} else {
		g := int(c.LevelStart[L-1]) + i
		s = c.Tags[c.Tag[g]]
		if c.Kind[g] == KindCopy {
			s += " (copy)"
		}
	}
	return withPos(s, c.PosAt(L, i))
}

// FormName returns the provenance of form f of level L: the name of its
// first term's gate (ValueName), "const" for a form without terms, and
// the form's own position hint. Without forms it is ValueName.
func (c *Circuit) FormName(L, f int) string {
	if !c.HasForms() || L >= c.Depth() {
		return c.ValueName(L, f)
	}
	k, src, _ := c.Form(int(c.FormStart[L]) + f)
	if len(src) == 0 {
		return "const " + strconv.Itoa(int(k))
	}
	s := c.ValueName(L, int(src[0]))
	if len(src) > 1 {
		s = "Σ " + strconv.Itoa(len(src)) + " of " + s
	}
	if p := c.FormPosAt(L, f); p != circuit.NoPos && p != c.PosAt(L, int(src[0])) {
		s += " form z=" + strconv.Itoa(int(p))
	}
	return s
}

func withPos(s string, p int32) string {
	if p == circuit.NoPos {
		return s
	}
	return s + " z=" + strconv.Itoa(int(p))
}
