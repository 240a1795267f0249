package forward

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tcforge/tcforge/internal/modeltest"
	"github.com/tcforge/tcforge/plugins/fusion"
	"github.com/tcforge/tcforge/plugins/keccak"
	"github.com/tcforge/tcforge/plugins/noattention"
	"github.com/tcforge/tcforge/plugins/reifier"
	"github.com/tcforge/tcforge/plugins/tokensasgates"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/model"
)

// passDigest hashes everything a forward pass decides: every output bit,
// every raw readout value (its float64 bits), the minimum margin and the β
// probe's bound.
func passDigest(h hash.Hash, r *Result) {
	u64 := func(v uint64) { _ = binary.Write(h, binary.LittleEndian, v) }
	f64 := func(v float64) { u64(math.Float64bits(v)) }
	for s, o := range r.Outputs {
		for _, w := range o {
			u64(w)
		}
		for _, v := range r.Values[s] {
			f64(v)
		}
	}
	f64(r.MinMargin) // not where: samples tied for it are met in any order
	if b := r.Beta; b != nil {
		fmt.Fprintf(h, "β %v %q %v %v", b.Supported, b.Reason, math.Float64bits(b.Min), b.Saturated)
	}
}

// unchangedModels are the models TestPassUnchanged pins: the four mappers
// of a Keccak toy through both layerers, and random models with every
// feature the pass has (norms, dynamic scores, replacing sublayers).
func unchangedModels(t *testing.T) ([]string, []*model.Model) {
	ctx := context.Background()
	c := build(t, keccak.Plugin, map[string]any{"log_w": int64(2), "rate": int64(50), "rounds": int64(3), "padding": "none"})
	ls := map[string]*layered.Circuit{}
	var err error
	if ls["reifier"], err = reifier.Compile(ctx, c); err != nil {
		t.Fatal(err)
	}
	if ls["fusion"], err = fusion.Compile(ctx, c, fusion.Options{}); err != nil {
		t.Fatal(err)
	}
	var names []string
	var models []*model.Model
	add := func(name string, m *model.Model, err error) {
		if err != nil {
			t.Fatal(err)
		}
		names, models = append(names, name), append(models, m)
	}
	for _, lay := range []string{"reifier", "fusion"} {
		l := ls[lay]
		m, err := noattention.MLP(ctx, l)
		add(lay+"/mlp", m, err)
		m, err = noattention.Residual(ctx, l)
		add(lay+"/residual", m, err)
		m, err = tokensasgates.Map(ctx, l, tokensasgates.Options{Mode: model.Hard})
		add(lay+"/hard", m, err)
		m, err = tokensasgates.Map(ctx, l, tokensasgates.Options{Mode: model.Softmax})
		add(lay+"/softmax", m, err)
	}
	for v := range 3 {
		add(fmt.Sprintf("random/%d", v), modeltest.RandomModel(rand.New(rand.NewPCG(5, uint64(v))), v), nil)
	}
	return names, models
}

// TestPassUnchanged pins the forward pass bit for bit: for each model of
// unchangedModels, 64 samples (32 lanes a worker, the assembly kernels'
// width) and 40 (20 lanes, the Go loops), the digest (passDigest) of the
// float32 pass, the probed float32 pass, the float64 pass and float32
// passes at half and a third of the model's β. A change to the pass must
// leave these alone: the verification results (every output bit, the
// margins, β_min's probe) are decided exactly as before. The float32
// values depend on whether the FMA kernels run (amd64 with AVX2 and FMA)
// or the Go loops (-tags purego, other CPUs), so each has its digest; the
// AVX-512 kernels give the AVX2 kernels' bits, so on a CPU with AVX-512 the
// test runs twice, with and without them (once under -short).
func TestPassUnchanged(t *testing.T) {
	want := map[bool]string{ // by useAVX
		true:  "82a076509e98e657ce467a7753fa559e393136d714acc38543a8d84007dffe16",
		false: "81a0538cf84b198280a1b8319d48f674d2db4cf0cd522d51dc2c0ff21d30e54f",
	}[useAVX]
	names, models := unchangedModels(t)
	sets := []bool{useAVX512}
	if useAVX512 && !testing.Short() {
		sets = []bool{false, true} // the AVX2 kernels too (CI's tier)
	}
	defer func(v bool) { useAVX512 = v }(useAVX512)
	for _, z := range sets {
		useAVX512 = z
		t.Run(fmt.Sprintf("avx512=%v", z), func(t *testing.T) { passUnchanged(t, names, models, want) })
	}
}

// passUnchanged is TestPassUnchanged with the kernels set as they are.
func passUnchanged(t *testing.T, names []string, models []*model.Model, want string) {
	h := sha256.New()
	for i, m := range models {
		p, err := Compile(m)
		if err != nil {
			t.Fatal(err)
		}
		beta, _ := m.SoftmaxBeta()
		for _, n := range []int{64, 40} {
			in := bitvec.Random(rand.New(rand.NewPCG(3, uint64(n))), n, p.nIn)
			for _, opt := range []Options{{}, {ProbeBeta: true}, {Float64: true}, {Beta: beta / 2}, {Beta: beta / 3}} {
				opt.KeepValues = true
				r, err := p.RunContext(context.Background(), in, opt)
				if err != nil {
					t.Fatalf("%s: %v", names[i], err)
				}
				one := sha256.New()
				passDigest(one, r)
				passDigest(h, r)
				t.Logf("%s n=%d float64=%v probe=%v β=%v: %s", names[i], n, opt.Float64, opt.ProbeBeta, opt.Beta, hex.EncodeToString(one.Sum(nil))[:16])
			}
		}
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		t.Errorf("digest of every pass %s, want %s (the per-pass digests above locate a change)", got, want)
	}
}

// TestBlockFused checks that the tokens-as-gates models of
// unchangedModels run their blocks fused (fusable, worker.block) where the
// AVX-512 kernels apply — TestPassUnchanged then pins the fused path's
// bits — and that a probed pass does not.
func TestBlockFused(t *testing.T) {
	if !useAVX512 {
		t.Skip("no AVX-512: blocks run sublayer by sublayer")
	}
	names, models := unchangedModels(t)
	for i, m := range models {
		p, err := Compile(m)
		if err != nil {
			t.Fatal(err)
		}
		tag := names[i][strings.Index(names[i], "/")+1:]
		if want := tag == "hard" || tag == "softmax"; p.fuse != want {
			t.Errorf("%s: fuse %v, want %v", names[i], p.fuse, want)
		}
		if !p.fuse {
			continue
		}
		in := bitvec.Random(rand.New(rand.NewPCG(3, 64)), 64, p.nIn)
		for _, probe := range []bool{false, true} {
			p.idle = nil
			if _, err := p.Run(in, Options{ProbeBeta: probe && tag == "softmax"}); err != nil {
				t.Fatal(err)
			}
			blocks := 0
			for _, x := range p.idle {
				blocks += x.(*worker[float32]).blocks
			}
			if fused := !(probe && tag == "softmax"); (blocks > 0) != fused {
				t.Errorf("%s probed %v: %d fused blocks", names[i], probe, blocks)
			}
		}
	}
}
