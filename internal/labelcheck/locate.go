package labelcheck

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/tcforge/tcforge/internal/forward"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/model"
)

// Departure is where a forward pass first leaves the circuit's values its
// model's labels name: the first block boundary at which a labelled value
// is off by more than Tol, the first such label there, and the units of
// the block before it that write its dimension.
type Departure struct {
	// Boundary is the block boundary (0: the embedding; b: after block
	// b−1, 0-based); Block returns the block.
	Boundary int
	// Label indexes the model's Labels.Values; Value is that label.
	Label int
	Value model.ValueLabel
	// Token is the token read (the label's; token 0 for a label of
	// every token).
	Token int32
	// Got is the pass's value, Want the circuit's.
	Got  float64
	Want int64
	// Wrong of Compared labelled values at the boundary are off.
	Wrong, Compared int
	// Units are the heads and FFN units of the block that write the
	// dimension, in the order the block runs them, named by the labels
	// (Name "" where they name none).
	Units []model.UnitLabel
}

// Block returns the 0-based block whose output departs (−1: the
// embedding).
func (d *Departure) Block() int { return d.Boundary - 1 }

// String describes the departure in one line: the block and the units
// writing the dimension (at most three, with their labels), the value and
// its label: "block 0, ffn 3 or ffn 4 (writes dim 2: L1 gate 1 "hand"):
// token 0, dim 2 is 1, the circuit's value is 0 (value label 4: L1 gate 1
// "hand"); 1 of 2 labelled values wrong after block 0".
func (d *Departure) String() string {
	var b strings.Builder
	if d.Boundary == 0 {
		b.WriteString("the embedding")
	} else {
		fmt.Fprintf(&b, "block %d", d.Block())
		shown := d.Units[:min(len(d.Units), 3)]
		same := len(shown) > 0
		for _, u := range shown {
			same = same && u.Name == shown[0].Name
		}
		for i, u := range shown {
			sep := ", "
			if i > 0 {
				sep = " or "
			}
			fmt.Fprintf(&b, "%s%s %d", sep, u.Kind, u.Index)
			if u.Name != "" && !same {
				fmt.Fprintf(&b, " (%s)", u.Name)
			}
		}
		if n := len(d.Units) - len(shown); n > 0 {
			fmt.Fprintf(&b, " (+%d more)", n)
		}
		if same && shown[0].Name != "" {
			fmt.Fprintf(&b, " (%s)", shown[0].Name)
		}
		if len(d.Units) == 0 {
			b.WriteString(" (no head or unit of it writes the dimension)")
		}
	}
	fmt.Fprintf(&b, ": token %d, dim %d is %.4g, the circuit's value is %d (value label %d: %s); %d of %d labelled values wrong ",
		d.Token, d.Value.Dim, d.Got, d.Want, d.Label, d.Value.Describe(), d.Wrong, d.Compared)
	if d.Boundary == 0 {
		b.WriteString("after the embedding")
	} else {
		fmt.Fprintf(&b, "after block %d", d.Block())
	}
	return b.String()
}

// Locate runs prog's model on input in (float64 with fp64, else float32)
// with a forward.Watch of its labels and returns where the pass first
// departs from the values of circuit c that the labels name (see
// Departure), or nil if every labelled value is within Tol at every
// boundary. The model must carry labels for c.
func Locate(ctx context.Context, prog *forward.Program, c *layered.Circuit, in bitvec.Vec, fp64 bool) (*Departure, error) {
	m := prog.Model()
	if err := checkLevels(m, c); err != nil {
		return nil, err
	}
	wt, idx := watch(m)
	res, err := prog.RunContext(ctx, []bitvec.Vec{in}, forward.Options{Float64: fp64, Watch: wt})
	if err != nil {
		return nil, fmt.Errorf("labelcheck: %w", err)
	}
	vals := m.Labels.Values
	gates, forms := circuitValues(c, in)
	for b := range idx {
		var d *Departure
		for k, i := range idx[b] {
			want := Expected(&vals[i], gates, forms)
			got := res.Watched[0][b][k]
			if math.Abs(got-float64(want)) <= Tol {
				continue
			}
			if d == nil {
				d = &Departure{Boundary: b, Label: i, Value: vals[i], Token: wt.Token[b][k], Got: got, Want: want, Compared: len(idx[b])}
			}
			d.Wrong++
		}
		if d != nil {
			if b > 0 {
				d.Units = Writers(m, b-1, d.Value.Dim)
			}
			return d, nil
		}
	}
	return nil, nil
}

// Writers returns the heads and FFN units of block b of m whose output
// writes residual dimension dim (a nonzero entry in its row of O,
// W_out, out_proj or linear2), heads first, named by m's unit labels.
func Writers(m *model.Model, b int, dim int32) []model.UnitLabel {
	names := map[[2]int32]string{}
	if m.Labels != nil {
		for _, u := range m.Labels.Units {
			if int(u.Block) == b {
				names[[2]int32{int32(u.Kind), u.Index}] = u.Name
			}
		}
	}
	var out []model.UnitLabel
	add := func(k model.UnitKind, i int32) {
		if n := len(out); n > 0 && out[n-1].Kind == k && out[n-1].Index == i {
			return
		}
		out = append(out, model.UnitLabel{Block: int32(b), Kind: k, Index: i, Name: names[[2]int32{int32(k), i}]})
	}
	// row returns the columns of t's row dim (none if t lacks it).
	row := func(name string) []int32 {
		t := m.Tensor(name)
		if t == nil || int(dim) >= t.Rows {
			return nil
		}
		cols, vals := t.Row(int(dim))
		var nz []int32
		for k, c := range cols {
			if vals[k] != 0 {
				nz = append(nz, c)
			}
		}
		return nz
	}
	blk := m.Blocks[b]
	if a := blk.Attn; a != nil {
		for h, hd := range a.Heads {
			if len(row(hd.O)) > 0 {
				add(model.HeadUnit, int32(h))
			}
		}
	}
	if f := blk.FFN; f != nil {
		for _, u := range row(f.Out) {
			add(model.FFNUnit, u)
		}
	}
	if l := blk.Layer; l != nil {
		if o := m.Tensor(l.OutProjW); o != nil && l.Heads > 0 {
			for _, c := range row(l.OutProjW) {
				add(model.HeadUnit, c/int32(o.Cols/l.Heads))
			}
		}
		for _, u := range row(l.Linear2W) {
			add(model.FFNUnit, u)
		}
	}
	return out
}
