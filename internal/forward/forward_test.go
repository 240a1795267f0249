package forward

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/tcforge/tcforge/internal/modeltest"
	"github.com/tcforge/tcforge/internal/safetensors"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/model"
)

// denseForward is a straightforward dense float64 reference of the forward
// pass, written from the package documentation: every score computed, the
// softmax taken over all tokens with the usual max subtraction.
func denseForward(m *model.Model, in bitvec.Vec) []float64 {
	T, d := m.Tokens, m.DModel
	dense := func(name string) [][]float64 {
		t := m.Tensor(name)
		out := make([][]float64, t.Rows)
		for r := range out {
			out[r] = make([]float64, t.Cols)
			cols, vals := t.Row(r)
			for k, c := range cols {
				out[r][c] = float64(vals[k])
			}
		}
		return out
	}
	mul := func(w [][]float64, x []float64) []float64 {
		out := make([]float64, len(w))
		for r := range w {
			for c, v := range w[r] {
				out[r] += v * x[c]
			}
		}
		return out
	}
	x := dense(m.Embed.Base)
	inp := dense(m.Embed.Input)
	for b, tok := range m.Embed.InputToken {
		if in.Get(b) == 1 {
			for c := 0; c < d; c++ {
				x[tok][c] += inp[b][c]
			}
		}
	}
	norm := func(n *model.RMSNorm, x [][]float64) [][]float64 {
		if n == nil {
			return x
		}
		g := dense(n.Weight)[0]
		out := make([][]float64, len(x))
		for t := range x {
			ss := 0.0
			for _, v := range x[t] {
				ss += v * v
			}
			r := math.Sqrt(ss/float64(d) + n.Eps)
			out[t] = make([]float64, d)
			for c := range x[t] {
				out[t][c] = g[c] * x[t][c] / r
			}
		}
		return out
	}
	apply := func(residual bool, x, y [][]float64) [][]float64 {
		if !residual {
			return y
		}
		for t := range x {
			for c := range x[t] {
				y[t][c] += x[t][c]
			}
		}
		return y
	}
	for _, b := range m.Blocks {
		if a := b.Attn; a != nil {
			xn := norm(a.Norm, x)
			y := make([][]float64, T)
			for t := range y {
				y[t] = make([]float64, d)
			}
			for _, h := range a.Heads {
				Q, K, V, O := dense(h.Q), dense(h.K), dense(h.V), dense(h.O)
				q, k, v := make([][]float64, T), make([][]float64, T), make([][]float64, T)
				for t := 0; t < T; t++ {
					q[t], k[t], v[t] = mul(Q, xn[t]), mul(K, xn[t]), mul(V, xn[t])
				}
				for i := 0; i < T; i++ {
					s := make([]float64, T)
					for j := 0; j < T; j++ {
						for c := range q[i] {
							s[j] += q[i][c] * k[j][c]
						}
					}
					att := make([]float64, T)
					switch a.Mode {
					case model.Hard:
						for j := range s {
							if math.Abs(s[j]-1) <= model.HardTol {
								att[j] = 1
							}
						}
					case model.Softmax:
						mx := math.Inf(-1)
						for _, v := range s {
							mx = math.Max(mx, v)
						}
						z := 0.0
						for j := range s {
							att[j] = math.Exp(a.Beta * (s[j] - mx))
							z += att[j]
						}
						for j := range att {
							att[j] /= z
						}
					}
					out := make([]float64, len(v[0]))
					for j := 0; j < T; j++ {
						for c := range out {
							out[c] += att[j] * v[j][c]
						}
					}
					o := mul(O, out)
					for c := range o {
						y[i][c] += o[c]
					}
				}
			}
			x = apply(a.Residual, x, y)
		}
		if f := b.FFN; f != nil {
			xn := norm(f.Norm, x)
			G, U, W := dense(f.Gate), dense(f.Value), dense(f.Out)
			y := make([][]float64, T)
			for t := 0; t < T; t++ {
				g, u := mul(G, xn[t]), mul(U, xn[t])
				h := make([]float64, len(g))
				for k := range h {
					h[k] = g[k] / (1 + math.Exp(-g[k])) * u[k]
				}
				y[t] = mul(W, h)
			}
			x = apply(f.Residual, x, y)
		}
	}
	out := make([]float64, len(m.Readout.Token))
	for k := range out {
		out[k] = x[m.Readout.Token[k]][m.Readout.Dim[k]]
	}
	return out
}

func TestForwardMatchesDenseReference(t *testing.T) {
	for _, variant := range []int{0, 1, 2} {
		for seed := uint64(1); seed <= 4; seed++ {
			t.Run(fmt.Sprintf("variant%d/seed%d", variant, seed), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(seed, uint64(variant)))
				m := modeltest.RandomModel(rng, variant)
				in := bitvec.Random(rng, 7, 4)
				p, err := Compile(m)
				if err != nil {
					t.Fatal(err)
				}
				for _, f64 := range []bool{true, false} {
					res, err := p.Run(in, Options{Float64: f64, KeepValues: true, Lanes: 3})
					if err != nil {
						t.Fatal(err)
					}
					tol := 1e-9
					if !f64 {
						tol = 2e-3
					}
					for s := range in {
						want := denseForward(m, in[s])
						for k, w := range want {
							got := res.Values[s][k]
							if math.Abs(got-w) > tol*(1+math.Abs(w)) {
								t.Errorf("float64=%v sample %d output %d = %v, dense reference %v", f64, s, k, got, w)
							}
						}
					}
				}
			})
		}
	}
}

// TestSoftmaxImplicitZeros checks the O(nonzeros) softmax against the
// dense one on a score matrix with few stored entries and a large β, and
// that overriding β changes the result the same way.
func TestSoftmaxImplicitZeros(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	m := modeltest.RandomModel(rng, 0)
	for i := range m.Blocks {
		m.Blocks[i].Attn.Mode = model.Softmax
		m.Blocks[i].Attn.Beta = 7
	}
	in := bitvec.Random(rng, 5, 4)
	for _, beta := range []float64{0, 0.25, 3} {
		res, err := Forward(m, in, Options{Float64: true, KeepValues: true, Beta: beta})
		if err != nil {
			t.Fatal(err)
		}
		ref := *m
		ref.Blocks = nil
		for _, b := range m.Blocks {
			a := *b.Attn
			if beta > 0 {
				a.Beta = beta
			}
			ref.Blocks = append(ref.Blocks, model.Block{Attn: &a, FFN: b.FFN})
		}
		for s := range in {
			want := denseForward(&ref, in[s])
			for k, w := range want {
				if got := res.Values[s][k]; math.Abs(got-w) > 1e-9*(1+math.Abs(w)) {
					t.Errorf("β override %v: sample %d output %d = %v, want %v", beta, s, k, got, w)
				}
			}
		}
	}
}

func TestMarshalRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for variant := 0; variant < 3; variant++ {
		m := modeltest.RandomModel(rng, variant)
		blob, err := m.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var got model.Model
		if err := got.UnmarshalBinary(blob); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(&got, m) {
			t.Errorf("variant %d: round trip changed the model", variant)
		}
		for _, cut := range []int{0, 7, len(blob) / 2, len(blob) - 1} {
			var bad model.Model
			if err := bad.UnmarshalBinary(blob[:cut]); err == nil {
				t.Errorf("decoding %d of %d bytes succeeded", cut, len(blob))
			}
		}
	}
}

func TestValidateRejects(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for _, tc := range []struct {
		name  string
		edit  func(m *model.Model)
		wantS string
	}{
		{"missing tensor", func(m *model.Model) { m.Blocks[0].Attn.Heads[0].Q = "nope" }, `no tensor named "nope"`},
		{"wrong shape", func(m *model.Model) { m.Blocks[0].FFN.Out = "ffn0.gate" }, `want 8×5`},
		{"bad mode", func(m *model.Model) { m.Blocks[0].Attn.Mode = "sparse" }, `unknown mode`},
		{"bad beta", func(m *model.Model) { m.Blocks[0].Attn.Beta = 0 }, `β > 0`},
		{"unsorted columns", func(m *model.Model) {
			m.Tensors[0].Col[0], m.Tensors[0].Col[1] = m.Tensors[0].Col[1], m.Tensors[0].Col[0]
		}, `out of order`},
		{"readout outside", func(m *model.Model) { m.Readout.Dim[0] = 99 }, `outside`},
		{"input token outside", func(m *model.Model) { m.Embed.InputToken[0] = 5 }, `outside 0..4`},
		{"NaN weight", func(m *model.Model) { m.Tensors[2].Val[0] = float32(math.NaN()) }, `NaN`},
	} {
		m := modeltest.RandomModel(rng, 0)
		tc.edit(m)
		err := m.Validate()
		if err == nil || !contains(err.Error(), tc.wantS) {
			t.Errorf("%s: Validate() = %v, want an error containing %q", tc.name, err, tc.wantS)
		}
	}
}

func contains(s, sub string) bool {
	return len(sub) == 0 || len(s) >= len(sub) && (s[:len(sub)] == sub || contains(s[1:], sub))
}

func TestBuilderSumsDuplicatesAndDropsZeros(t *testing.T) {
	b := model.NewBuilder("w", 2, 3)
	b.Add(1, 2, 1)
	b.Add(0, 1, 2)
	b.Add(1, 0, 5)
	b.Add(0, 1, 0.5)
	b.Add(1, 2, -1)
	got, err := b.Tensor()
	if err != nil {
		t.Fatal(err)
	}
	want := model.Tensor{Name: "w", Rows: 2, Cols: 3, RowPtr: []int32{0, 1, 2}, Col: []int32{1, 0}, Val: []float32{2.5, 5}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Tensor() = %+v, want %+v", got, want)
	}
	b = model.NewBuilder("w", 2, 3)
	b.Add(2, 0, 1)
	if _, err := b.Tensor(); err == nil {
		t.Error("an entry outside the shape was accepted")
	}
}

func TestSafetensorsRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for _, tc := range []struct {
		limit  int64
		layout string
	}{{0, safetensors.LayoutCSR}, {1 << 20, safetensors.LayoutDense}, {100, safetensors.LayoutCSR}} {
		m := modeltest.RandomModel(rng, 1)
		dir := t.TempDir()
		info, err := safetensors.Export(m, dir, "m", tc.limit)
		if err != nil {
			t.Fatal(err)
		}
		if info.Layout != tc.layout {
			t.Errorf("limit %d: layout %s, want %s", tc.limit, info.Layout, tc.layout)
		}
		if tc.limit == 100 && !contains(info.Note, "over the 100 B limit") {
			t.Errorf("limit 100: note %q does not explain the refusal", info.Note)
		}
		got, err := safetensors.Import(filepath.Join(dir, "m.json"))
		if err != nil {
			t.Fatal(err)
		}
		in := bitvec.Random(rng, 9, 4)
		want, err := Forward(m, in, Options{Float64: true, KeepValues: true})
		if err != nil {
			t.Fatal(err)
		}
		res, err := Forward(got, in, Options{Float64: true, KeepValues: true})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(res.Values, want.Values) {
			t.Errorf("layout %s: the re-read model computes %v, the original %v", info.Layout, res.Values, want.Values)
		}
		if got.Stats() != m.Stats() {
			t.Errorf("layout %s: stats %+v, want %+v", info.Layout, got.Stats(), m.Stats())
		}
	}
}

func TestSiLU(t *testing.T) {
	for _, x := range []float64{-200, -89.5, -88, -30, -1, 0, 0.5, 3, 16.9, 17, 40, 1e6} {
		want := x / (1 + math.Exp(-x))
		if got := float64(silu(x)); math.Abs(got-want) > 1e-15*math.Max(1, math.Abs(want)) {
			t.Errorf("silu64(%v) = %v, want %v", x, got, want)
		}
		w32 := float32(want)
		if got := silu(float32(x)); math.Abs(float64(got-w32)) > 1e-6*math.Max(1, math.Abs(float64(w32))) {
			t.Errorf("silu32(%v) = %v, want %v", x, got, w32)
		}
	}
}
