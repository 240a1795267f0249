package run

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"testing"

	"github.com/rs/zerolog"

	"github.com/tcforge/tcforge/internal/point"
	"github.com/tcforge/tcforge/plugins/fusion"
	"github.com/tcforge/tcforge/plugins/keccak"
	"github.com/tcforge/tcforge/plugins/noattention"
	"github.com/tcforge/tcforge/plugins/reifier"
	"github.com/tcforge/tcforge/plugins/tokensasgates"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/model"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// TestCheckUnchanged pins what a model check decides, bit for bit: for
// the four mappers' models of a Keccak toy through both layerers, on 64
// samples, the float32 verification pass (probed where the model has a
// softmax β) — every output bit and min_margin —, whether the float64
// pass reproduces every bit (exact_in), and β_min with its step, probe
// bound and method, as runMapper computes them. A faster forward pass must
// leave the digest alone (issue 28: it was taken with the pass of 9b417c1,
// before the kernels changed).
func TestCheckUnchanged(t *testing.T) {
	if testing.Short() {
		t.Skip("about 30 s: the CI tier's (go test without -short)")
	}
	const want = "462969aee36a437465479e57e104eb0f8e88269651b53c9dcfb3c6eb3d2b9431"
	ctx := context.Background()
	c := sdktest.Build(t, keccak.Plugin, map[string]any{"log_w": int64(2), "rate": int64(50), "rounds": int64(3), "padding": "none"})
	ls := map[string]*layered.Circuit{}
	var err error
	if ls["reifier"], err = reifier.Compile(ctx, c); err != nil {
		t.Fatal(err)
	}
	if ls["fusion"], err = fusion.Compile(ctx, c, fusion.Options{}); err != nil {
		t.Fatal(err)
	}
	maps := []struct {
		name string
		f    func(*layered.Circuit) (*model.Model, error)
	}{
		{"mlp", func(l *layered.Circuit) (*model.Model, error) { return noattention.MLP(ctx, l) }},
		{"residual", func(l *layered.Circuit) (*model.Model, error) { return noattention.Residual(ctx, l) }},
		{"hard", func(l *layered.Circuit) (*model.Model, error) {
			return tokensasgates.Map(ctx, l, tokensasgates.Options{Mode: model.Hard})
		}},
		{"softmax", func(l *layered.Circuit) (*model.Model, error) {
			return tokensasgates.Map(ctx, l, tokensasgates.Options{Mode: model.Softmax})
		}},
	}
	all := sha256.New()
	for _, lay := range []string{"reifier", "fusion"} {
		l := ls[lay]
		in := point.Samples(7, 64, l.NumInputs)
		want, err := bitvec.EvalSliced(in, l.NumInputs, l.Eval)
		if err != nil {
			t.Fatal(err)
		}
		for _, mp := range maps {
			m, err := mp.f(l)
			if err != nil {
				t.Fatal(err)
			}
			beta, _ := m.SoftmaxBeta()
			res, err := point.CheckModel(ctx, m, l, in, want, point.ModelOptions{ProbeBeta: beta > 0})
			if err != nil {
				t.Fatalf("%s/%s: %v", lay, mp.name, err)
			}
			prog := res.Program
			exact64 := res.Exact["fp64"]
			var bmin, step, bound float64
			var method string
			if beta > 0 {
				if bmin, step, bound, method, err = betaMin(ctx, prog, res.Beta, in, want, l.NumOutputs(), beta, 0, zerolog.Nop()); err != nil {
					t.Fatal(err)
				}
			}
			h := sha256.New()
			for _, o := range res.Outputs {
				fmt.Fprint(h, o)
			}
			fmt.Fprintf(h, "%x %v %x %x %x %s", math.Float64bits(res.MinMargin), exact64, math.Float64bits(bmin), math.Float64bits(step), math.Float64bits(bound), method)
			d := h.Sum(nil)
			all.Write(d)
			t.Logf("%s/%s: min_margin %v, fp64 exact %v, β_min %v (step %v, bound %v, %s): %s", lay, mp.name, res.MinMargin, exact64, bmin, step, bound, method, hex.EncodeToString(d)[:16])
		}
	}
	if got := hex.EncodeToString(all.Sum(nil)); got != want {
		t.Errorf("digest of the model checks %s, want %s (the per-model digests above locate a change)", got, want)
	}
}
