// Package modeltest makes random transformer models for the tests of the
// model IR, its encodings and the forward pass.
package modeltest

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tcforge/tcforge/sdk/model"
)

// RandomTensor returns a rows×cols tensor with about density·rows·cols
// entries drawn by val.
func RandomTensor(rng *rand.Rand, name string, rows, cols int, density float64, val func() float64) model.Tensor {
	b := model.NewBuilder(name, rows, cols)
	for r := 0; r < rows; r++ {
		for c := 0; c < cols; c++ {
			if rng.Float64() < density {
				b.Add(r, c, val())
			}
		}
	}
	t, err := b.Tensor()
	if err != nil {
		panic(err)
	}
	return t
}

// RandomModel builds a small model exercising every feature: static
// (lane-independent) and dynamic scores, hard and softmax heads, shared
// tensors, norms, residual and replacing sublayers.
func RandomModel(rng *rand.Rand, variant int) *model.Model {
	T, d, nIn, dk, dv, hid := 5, 8, 4, 6, 2, 5
	small := func() float64 { return float64(rng.IntN(5) - 2) }
	real := func() float64 { return rng.NormFloat64() }
	m := &model.Model{Arch: "random", Tokens: T, DModel: d, Attrs: map[string]int64{"variant": int64(variant)}}
	// The base embedding sets integer "identity" dims 0..3; inputs write dims 4..7.
	base := model.NewBuilder("embed.base", T, d)
	for t := 0; t < T; t++ {
		base.Add(t, t%4, 1)
		base.Add(t, 4+t%3, real())
	}
	bt, _ := base.Tensor()
	in := RandomTensor(rng, "embed.input", nIn, d, 0.3, real)
	// Keep inputs off the static dims 0..3.
	for k := range in.Col {
		in.Col[k] = 4 + in.Col[k]%4
	}
	FixCSR(&in)
	m.Embed = model.Embedding{Base: "embed.base", Input: "embed.input", InputToken: []int32{0, 2, 4, 2}}
	// Static-score matrices read only dims 0..3 with small integers; dynamic ones read everything.
	staticQK := func(name string) model.Tensor {
		t := RandomTensor(rng, name, dk, d, 0.5, small)
		for k := range t.Col {
			t.Col[k] %= 4
		}
		FixCSR(&t)
		return t
	}
	m.Tensors = append(m.Tensors, bt, in,
		staticQK("q.static"), staticQK("k.static"),
		RandomTensor(rng, "q.dyn", dk, d, 0.4, real), RandomTensor(rng, "k.dyn", dk, d, 0.4, real),
		RandomTensor(rng, "v", dv, d, 0.5, real), RandomTensor(rng, "o", d, dv, 0.5, real),
		RandomTensor(rng, "v2", dv, d, 0.5, real), RandomTensor(rng, "o2", d, dv, 0.5, real),
		model.Ones("norm", d))
	g := RandomTensor(rng, "norm2", 1, d, 1, func() float64 { return 0.5 + rng.Float64() })
	m.Tensors = append(m.Tensors, g)
	for bi := 0; bi < 3; bi++ {
		gate := RandomTensor(rng, fmt.Sprintf("ffn%d.gate", bi), hid, d, 0.5, real)
		val := RandomTensor(rng, fmt.Sprintf("ffn%d.value", bi), hid, d, 0.5, real)
		out := RandomTensor(rng, fmt.Sprintf("ffn%d.out", bi), d, hid, 0.4, real)
		m.Tensors = append(m.Tensors, gate, val, out)
		a := &model.Attention{Mode: model.Softmax, Beta: 0.5 + rng.Float64()*2, Residual: true}
		f := &model.FFN{Gate: gate.Name, Value: val.Name, Out: out.Name, Residual: true}
		switch variant {
		case 0: // static scores, hard and softmax blocks, no norm
			a.Heads = []model.Head{{Q: "q.static", K: "k.static", V: "v", O: "o"}, {Q: "q.static", K: "k.static", V: "v2", O: "o2"}}
			if bi == 1 {
				a.Mode = model.Hard
			}
		case 1: // dynamic scores with norms
			a.Heads = []model.Head{{Q: "q.dyn", K: "k.dyn", V: "v", O: "o"}, {Q: "q.static", K: "k.static", V: "v2", O: "o2"}}
			a.Norm = &model.RMSNorm{Weight: "norm2", Eps: 1e-5}
			f.Norm = &model.RMSNorm{Weight: "norm", Eps: 1e-6}
		case 2: // replacing sublayers (no residual) kill the static part
			a.Heads = []model.Head{{Q: "q.static", K: "k.static", V: "v", O: "o"}, {Q: "q.dyn", K: "k.static", V: "v2", O: "o2"}}
			if bi == 1 {
				f.Residual = false
			}
			if bi == 2 {
				a.Residual = false
				a.Mode = model.Hard
			}
		}
		m.Blocks = append(m.Blocks, model.Block{Attn: a, FFN: f})
	}
	for k := 0; k < 6; k++ {
		m.Readout.Token = append(m.Readout.Token, int32(k%T))
		m.Readout.Dim = append(m.Readout.Dim, int32((k*3)%d))
		m.Readout.Threshold = append(m.Readout.Threshold, 0.1*float32(k))
	}
	return m
}

// FixCSR re-sorts a tensor whose columns were edited.
func FixCSR(t *model.Tensor) {
	b := model.NewBuilder(t.Name, t.Rows, t.Cols)
	for r := 0; r < t.Rows; r++ {
		cols, vals := t.Row(r)
		for k, c := range cols {
			b.Add(r, int(c), float64(vals[k]))
		}
	}
	nt, err := b.Tensor()
	if err != nil {
		panic(err)
	}
	*t = nt
}

// FuzzSeeds adds a few valid encodings of random models (and prefixes of
// them) to a fuzz target.
func FuzzSeeds(f *testing.F, encode func(*model.Model) []byte) {
	rng := rand.New(rand.NewPCG(11, 12))
	for variant := range 3 {
		data := encode(RandomModel(rng, variant))
		f.Add(data)
		f.Add(data[:len(data)/2])
	}
	f.Add([]byte{})
}
