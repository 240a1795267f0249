package forward

import (
	"math"
	"testing"

	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/model"
)

// dense builds a CSR tensor from a dense row-major matrix.
func dense(name string, rows, cols int, v ...float32) model.Tensor {
	t := model.Tensor{Name: name, Rows: rows, Cols: cols, RowPtr: make([]int32, rows+1)}
	for r := range rows {
		for c := range cols {
			if x := v[r*cols+c]; x != 0 {
				t.Col = append(t.Col, int32(c))
				t.Val = append(t.Val, x)
			}
		}
		t.RowPtr[r+1] = int32(len(t.Col))
	}
	return t
}

// TestStockLayer checks one hand-built stock encoder layer on two tokens
// against values worked out by hand: LayerNorm of (a, −a, 0, 0) is
// (√2, −√2, 0, 0); attention copies, by one head whose scores prefer token
// 0, token 0's normalised dim 0 into dim 2, plus the out-projection bias;
// the FFN writes relu(LN2(x)₀ − ½) into dim 3.
func TestStockLayer(t *testing.T) {
	const d = 4
	z := make([]float32, 3*d*d)
	in := append([]float32(nil), z...)
	// Head 0 (dims 0, 1 of q, k, v): q = 0, k₀ = 50·LN(x)₀ + bias, so token 0
	// (LN₀ = √2 when its input bit is set) wins; v₀ = LN(x)₀.
	in[(d+0)*d+0] = 50
	in[(2*d+0)*d+0] = 1
	inB := make([]float32, 3*d)
	inB[0] = 1 // q₀ = 1: scores = k₀ / sqrt(2)
	out := make([]float32, d*d)
	out[2*d+0] = 1 // dim 2 += head 0's value 0
	outB := []float32{0, 0, 0.25, 0}
	l1 := []float32{1, 0, 0, 0} // 1×d: h = LN2(x)₀ − ½
	l2 := []float32{0, 0, 0, 1} // d×1: dim 3 += relu(h)
	ones, zeros := []float32{1, 1, 1, 1}, []float32{0, 0, 0, 0}
	m := &model.Model{Tokens: 2, DModel: d,
		Embed: model.Embedding{Base: "base", Input: "input", InputToken: []int32{0, 1}},
		Blocks: []model.Block{{Layer: &model.EncoderLayer{Heads: 2, Eps: 1e-5,
			Norm1W: "n1w", Norm1B: "n1b", InProjW: "inw", InProjB: "inb", OutProjW: "outw", OutProjB: "outb",
			Norm2W: "n2w", Norm2B: "n2b", Linear1W: "l1w", Linear1B: "l1b", Linear2W: "l2w", Linear2B: "l2b"}}},
		Readout: model.Readout{Token: []int32{0, 1, 1, 1}, Dim: []int32{2, 2, 3, 0}, Threshold: []float32{0, 0, 0, 0}},
		Tensors: []model.Tensor{
			dense("base", 2, d, 0, 0, 0, 0, 0, 0, 0, 0),
			dense("input", 2, d, 3, -3, 0, 0, 5, -5, 0, 0),
			dense("n1w", 1, d, ones...), dense("n1b", 1, d, zeros...),
			dense("inw", 3*d, d, in...), dense("inb", 1, 3*d, inB...),
			dense("outw", d, d, out...), dense("outb", 1, d, outB...),
			dense("n2w", 1, d, ones...), dense("n2b", 1, d, zeros...),
			dense("l1w", 1, d, l1...), dense("l1b", 1, 1, -0.5),
			dense("l2w", d, 1, l2...), dense("l2b", 1, d, zeros...),
		}}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	// Both bits set: both tokens normalise to (√2, −√2, 0, 0) before and
	// after attention adds to dim 2 (scores tie: attention averages √2).
	// Token 0's bit only: token 1 is all zero (LN = 0), so token 0 wins.
	r2 := math.Sqrt2
	lnAfter := func(x []float64) float64 { // LN(x)₀ with unit weight, zero bias
		var mu, v float64
		for _, a := range x {
			mu += a
		}
		mu /= float64(len(x))
		for _, a := range x {
			v += (a - mu) * (a - mu)
		}
		return (x[0] - mu) / math.Sqrt(v/float64(len(x))+1e-5)
	}
	w := math.Exp(50 * r2 / math.Sqrt2) // token 0's weight against token 1's (score 0)
	a1 := w / (w + 1) * r2              // what token 1 (all zero) attends to
	x1 := []float64{0, 0, a1 + 0.25, 0}
	cases := []struct {
		bits uint64
		want []float64 // token 0 dim 2, token 1 dims 2, 3, 0
	}{
		{3, func() []float64 {
			x := []float64{5, -5, r2 + 0.25, 0}
			return []float64{r2 + 0.25, r2 + 0.25, math.Max(lnAfter(x)-0.5, 0), 5}
		}()},
		{1, []float64{r2 + 0.25, a1 + 0.25, math.Max(lnAfter(x1)-0.5, 0), 0}},
	}
	for _, tc := range cases {
		for _, f64 := range []bool{false, true} {
			res, err := Forward(m, []bitvec.Vec{{tc.bits}}, Options{Float64: f64, KeepValues: true})
			if err != nil {
				t.Fatal(err)
			}
			for k, want := range tc.want {
				if got := res.Values[0][k]; math.Abs(got-want) > 1e-5 {
					t.Errorf("bits %b float64 %v: readout %d = %v, want %v", tc.bits, f64, k, got, want)
				}
			}
		}
	}
}
