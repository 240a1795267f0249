package forward

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/model"
)

// TestWatch checks Options.Watch on the models TestPassUnchanged pins
// (fused blocks, skipped tokens, static dimensions, replacing sublayers)
// and on a random stock model: the values it reads at each boundary b are
// what a float64 pass of the model cut after b blocks reads out there, and
// at the last boundary a float32 watch gives the readout's own values, bit
// for bit (the same pass, unfused and computing every token).
func TestWatch(t *testing.T) {
	names, models := unchangedModels(t)
	names = append(names, "stock")
	models = append(models, randomStock(rand.New(rand.NewPCG(3, 4)), 6, 10, 2, 7, 3))
	for i, m := range models {
		t.Run(names[i], func(t *testing.T) {
			rng := rand.New(rand.NewPCG(9, uint64(i)))
			in := bitvec.Random(rng, 5, m.NumInputs())
			nb := len(m.Blocks)
			wt := &Watch{Token: make([][]int32, nb+1), Dim: make([][]int32, nb+1)}
			for b := range wt.Token {
				for range 12 {
					wt.Token[b] = append(wt.Token[b], int32(rng.IntN(m.Tokens)))
					wt.Dim[b] = append(wt.Dim[b], int32(rng.IntN(m.DModel)))
				}
			}
			wt.Token[nb], wt.Dim[nb] = m.Readout.Token, m.Readout.Dim
			got, err := Forward(m, in, Options{Float64: true, Watch: wt})
			if err != nil {
				t.Fatal(err)
			}
			for b := range nb + 1 {
				cut := *m
				cut.Blocks = m.Blocks[:b]
				cut.Readout = model.Readout{Token: wt.Token[b], Dim: wt.Dim[b], Threshold: make([]float32, len(wt.Token[b]))}
				want, err := Forward(&cut, in, Options{Float64: true, KeepValues: true})
				if err != nil {
					t.Fatal(err)
				}
				for s := range in {
					for k, w := range want.Values[s] {
						if g := got.Watched[s][b][k]; math.Abs(g-w) > 1e-9*(1+math.Abs(w)) {
							t.Fatalf("sample %d, boundary %d, token %d, dim %d: watched %v, the cut model reads %v", s, b, wt.Token[b][k], wt.Dim[b][k], g, w)
						}
					}
				}
			}
			got32, err := Forward(m, in, Options{Watch: wt})
			if err != nil {
				t.Fatal(err)
			}
			pass, err := Forward(m, in, Options{KeepValues: true})
			if err != nil {
				t.Fatal(err)
			}
			for s := range in {
				if g, w := fmt.Sprint(got32.Watched[s][nb]), fmt.Sprint(pass.Values[s]); g != w {
					t.Fatalf("sample %d: watched at the last boundary %s, the readout %s", s, g, w)
				}
			}
		})
	}
}

// TestWatchRefuses checks that a watch naming what the model lacks is
// refused before the pass runs.
func TestWatchRefuses(t *testing.T) {
	_, models := unchangedModels(t)
	m := models[0]
	for _, wt := range []*Watch{
		{Token: [][]int32{{0}}, Dim: [][]int32{{int32(m.DModel)}}},
		{Token: [][]int32{{int32(m.Tokens)}}, Dim: [][]int32{{0}}},
		{Token: make([][]int32, len(m.Blocks)+2), Dim: make([][]int32, len(m.Blocks)+2)},
		{Token: [][]int32{{0, 0}}, Dim: [][]int32{{0}}},
	} {
		if _, err := Forward(m, nil, Options{Watch: wt}); err == nil {
			t.Errorf("watch %+v accepted", wt)
		}
	}
}
