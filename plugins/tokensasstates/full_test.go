package tokensasstates_test

import (
	"context"
	"crypto/sha3"
	"math/rand/v2"
	"testing"

	"github.com/tcforge/tcforge/plugins/fusion"
	"github.com/tcforge/tcforge/plugins/keccak"
	"github.com/tcforge/tcforge/plugins/tokensasstates"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/model"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// TestFullSHA3 maps full SHA3-256 (one block: 135-byte messages) over
// fusion with the mapper's defaults (Config{}: the tokens from the
// circuit's position hints, its 64 slices) and checks the shape targets of issue 15 and the
// digests of 64 random messages in the host's float32 pass against
// crypto/sha3.
func TestFullSHA3(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: full SHA3-256 through tokens-as-states")
	}
	ctx := context.Background()
	c := sdktest.Build(t, keccak.Plugin, map[string]any{"preset": "sha3-256"})
	l, err := fusion.Compile(ctx, c, fusion.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := tokensasstates.Map(ctx, l, tokensasstates.Config{})
	if err != nil {
		t.Fatal(err)
	}
	s := m.Stats()
	t.Logf("depth %d: tokens %d, d_model %d, blocks %d, heads %d, FFN %d, params %d dense %d nonzero; attrs %v",
		l.Depth(), s.Tokens, s.DModel, s.Blocks, s.Heads, s.FFNHidden, s.ParamsDense, s.ParamsNonzero, m.Attrs)
	for _, f := range []struct {
		name       string
		got, limit int64
	}{
		{"blocks", int64(s.Blocks), 48}, {"tokens", int64(s.Tokens), 64}, {"fewer tokens", 64, int64(s.Tokens)}, {"d_model", int64(s.DModel), 256},
		{"FFN width", int64(s.FFNHidden), 1024}, {"heads", int64(s.Heads), 25}, {"dense parameters", s.ParamsDense, 25_000_000},
	} {
		if f.got > f.limit {
			t.Errorf("%s %d, target ≤ %d", f.name, f.got, f.limit)
		}
	}
	res := passSHA3(t, m, l.NumInputs)
	t.Logf("64 digests equal crypto/sha3; margin %.4f", res.MinMargin)
}

// passSHA3 runs m's float32 forward pass on 64 random 135-byte messages
// (one SHA3-256 block, numInputs message bits) and checks every digest
// against crypto/sha3 and the margin (≥ 0.4).
func passSHA3(t *testing.T, m *model.Model, numInputs int) *sdktest.PassResult {
	t.Helper()
	rng := rand.New(rand.NewPCG(15, 256))
	msgs := make([][]byte, 64)
	in := make([]bitvec.Vec, len(msgs))
	for i := range msgs {
		msgs[i] = make([]byte, 135)
		for j := range msgs[i] {
			msgs[i][j] = byte(rng.Uint32())
		}
		in[i] = bitvec.NewVec(numInputs)
		for j := range numInputs {
			in[i].Set(j, uint(msgs[i][j/8]>>(j%8)&1))
		}
	}
	res := sdktest.Forward(t, m, in, sdktest.PassOptions{})
	for i, msg := range msgs {
		d := sha3.Sum256(msg)
		for j := range 256 {
			if res.Outputs[i].Get(j) != uint(d[j/8]>>(j%8)&1) {
				t.Fatalf("message %d: the float32 stock pass's digest differs from crypto/sha3 at bit %d", i, j)
			}
		}
	}
	if res.MinMargin < 0.4 {
		t.Errorf("margin %v, want ≥ 0.4", res.MinMargin)
	}
	return res
}
