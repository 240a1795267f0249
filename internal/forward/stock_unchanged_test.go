package forward

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tcforge/tcforge/internal/modeltest"
	"github.com/tcforge/tcforge/plugins/fusion"
	"github.com/tcforge/tcforge/plugins/keccak"
	"github.com/tcforge/tcforge/plugins/tokensasstates"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/model"
)

// randomStock builds a stock model of T tokens, d_model d, the given heads
// and layers, with random dense-ish weights (a fifth of them zero).
func randomStock(rng *rand.Rand, T, d, heads, ffn, layers int) *model.Model {
	nIn := 2 * T
	val := func() float64 { return rng.NormFloat64() }
	m := &model.Model{Tokens: T, DModel: d, Embed: model.Embedding{Base: "base", Input: "input", InputToken: make([]int32, nIn)}}
	m.Tensors = append(m.Tensors, modeltest.RandomTensor(rng, "base", T, d, 0.5, val), modeltest.RandomTensor(rng, "input", nIn, d, 0.3, val))
	for b := range nIn {
		m.Embed.InputToken[b] = int32(b % T)
	}
	for li := range layers {
		n := func(s string) string { return fmt.Sprintf("l%d.%s", li, s) }
		l := &model.EncoderLayer{Heads: heads, Eps: 1e-5}
		l.SetNames([]string{n("n1w"), n("n1b"), n("inw"), n("inb"), n("outw"), n("outb"), n("n2w"), n("n2b"), n("l1w"), n("l1b"), n("l2w"), n("l2b")})
		for _, sh := range []struct {
			name       string
			rows, cols int
		}{{"n1w", 1, d}, {"n1b", 1, d}, {"inw", 3 * d, d}, {"inb", 1, 3 * d}, {"outw", d, d}, {"outb", 1, d},
			{"n2w", 1, d}, {"n2b", 1, d}, {"l1w", ffn, d}, {"l1b", 1, ffn}, {"l2w", d, ffn}, {"l2b", 1, d}} {
			m.Tensors = append(m.Tensors, modeltest.RandomTensor(rng, n(sh.name), sh.rows, sh.cols, 0.8, val))
		}
		m.Blocks = append(m.Blocks, model.Block{Layer: l})
	}
	for k := range 3 * T {
		m.Readout.Token = append(m.Readout.Token, int32(k%T))
		m.Readout.Dim = append(m.Readout.Dim, int32(rng.IntN(d)))
		m.Readout.Threshold = append(m.Readout.Threshold, 0)
	}
	return m
}

// TestStockUnchanged pins the stock pass bit for bit, as TestPassUnchanged
// pins the generic one: the digest (passDigest) of float32 and float64
// passes over 16 samples of the tokens-as-states model of a Keccak toy
// (fusion) and of random stock models (heads of 1, 5 and 14 dimensions, 8
// and 64 tokens), taken before the heads ran as dense tiles (gemm, expVec):
// the tiles give the scalar loop's bits, with the AVX-512 kernels and
// without (with them only, under -short).
func TestStockUnchanged(t *testing.T) {
	sets := []bool{useAVX512}
	if useAVX512 && !testing.Short() {
		sets = []bool{false, true}
	}
	defer func(v bool) { useAVX512 = v }(useAVX512)
	for _, z := range sets {
		useAVX512 = z
		t.Run(fmt.Sprintf("avx512=%v", z), stockUnchanged)
	}
}

func stockUnchanged(t *testing.T) {
	const want = "db355cfa58e8a1fecccd04bbe62f629949c912c221a4fc6ec87c0563e3f422a2"
	ctx := context.Background()
	c := build(t, keccak.Plugin, map[string]any{"log_w": int64(2), "rate": int64(50), "rounds": int64(3), "padding": "none"})
	l, err := fusion.Compile(ctx, c, fusion.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tas, err := tokensasstates.Map(ctx, l, tokensasstates.Config{})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(37, 3))
	models := []*model.Model{tas, randomStock(rng, 8, 8, 8, 16, 2), randomStock(rng, 64, 120, 24, 64, 2), randomStock(rng, 13, 28, 2, 30, 3)}
	h := sha256.New()
	for i, m := range models {
		p, err := Compile(m)
		if err != nil {
			t.Fatal(err)
		}
		in := bitvec.Random(rand.New(rand.NewPCG(3, uint64(i))), 16, p.nIn)
		for _, f64 := range []bool{false, true} {
			r, err := p.Run(in, Options{Float64: f64, KeepValues: true})
			if err != nil {
				t.Fatal(err)
			}
			one := sha256.New()
			passDigest(one, r)
			passDigest(h, r)
			t.Logf("model %d (%d tokens, d %d) float64=%v: %s", i, m.Tokens, m.DModel, f64, hex.EncodeToString(one.Sum(nil))[:16])
		}
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		t.Errorf("digest of every stock pass %s, want %s", got, want)
	}
}
