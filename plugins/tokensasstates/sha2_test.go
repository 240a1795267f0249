package tokensasstates_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/tcforge/tcforge/plugins/fusion"
	"github.com/tcforge/tcforge/plugins/sha2"
	"github.com/tcforge/tcforge/plugins/tokensasstates"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// TestSHA2 maps SHA-2 over fusion with the mapper's defaults (Config{}:
// one token a bit position) and checks the model's shape and its float32
// pass on 64 random messages: against the layered circuit at reduced
// rounds, against crypto/sha256 at full rounds (TCFORGE_HEAVY=1: a full
// model takes one to three minutes to map and pass). maxWeight is
// fusion's bound on an addition's sums: 2¹⁶ gives 8-bit chunks (depth
// 321 for full SHA-256); at the default 2²² (16-bit chunks, depth 193) a
// gate's Σ|w·x| + |θ| reaches 1,370,036 (3,146,662 before words.go) and
// the mapper refuses (refused: the figure it gives). One block stays
// within the issue's ≤ 500 M dense parameters (629,799,200 before
// words.go).
func TestSHA2(t *testing.T) {
	tests := []struct {
		name      string
		values    map[string]any
		maxWeight int64
		heavy     bool
		short     string // why -short skips it (a cheaper row checks the same code)
		refused   string
		blocks    int
		dModel    int   // at most
		ffn       int   // at most
		dense     int64 // at most (0: any)
	}{
		{"sha256 r=8", map[string]any{"preset": "sha256", "rounds": int64(8)}, 0, false, "", "reaches 1103070 > 262144", 0, 0, 0, 0},
		{"sha256", map[string]any{"preset": "sha256"}, 0, false, "full SHA-256's float32 refusal (2 s; sha256 r=8 checks the refusal)", "reaches 1370036 > 262144", 0, 0, 0, 0},
		{"sha256 r=8 8-bit chunks", map[string]any{"preset": "sha256", "rounds": int64(8)}, 1 << 16, false, "", "", 40, 512, 4096, 0},
		{"sha256 8-bit chunks", map[string]any{"preset": "sha256"}, 1 << 16, true, "", "", 320, 512, 4096, 500e6},
		{"sha224 8-bit chunks", map[string]any{"preset": "sha224"}, 1 << 16, true, "", "", 320, 512, 4096, 500e6},
		{"sha256 2 blocks 8-bit chunks", map[string]any{"preset": "sha256", "blocks": int64(2)}, 1 << 16, true, "", "", 641, 512, 4096, 2e9},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.heavy {
				sdktest.Heavy(t, "full SHA-2 through tokens-as-states (a minute or two each)")
			}
			if tt.short != "" {
				sdktest.Short(t, tt.short)
			}
			ctx := context.Background()
			c := sdktest.Build(t, sha2.Plugin, tt.values)
			l, err := fusion.Compile(ctx, c, fusion.Options{MaxSum: tt.maxWeight})
			if err != nil {
				t.Fatal(err)
			}
			t0 := time.Now()
			m, err := tokensasstates.Map(ctx, l, tokensasstates.Config{})
			if tt.refused != "" {
				if err == nil || !strings.Contains(err.Error(), tt.refused) {
					t.Fatalf("err = %v, want the float32 refusal (%s)", err, tt.refused)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			mapTime := time.Since(t0)
			s := m.Stats()
			if s.Tokens != 32 || s.Blocks != tt.blocks || s.Blocks != l.Depth()-1 || s.DModel > tt.dModel || s.FFNHidden > tt.ffn || tt.dense > 0 && s.ParamsDense > tt.dense || !m.IsStock() {
				t.Fatalf("tokens %d, blocks %d (depth %d), d_model %d, FFN %d, %d dense parameters, stock %v; want 32 tokens, %d blocks, d_model ≤ %d, FFN ≤ %d, ≤ %d dense parameters (0: any), stock layers",
					s.Tokens, s.Blocks, l.Depth(), s.DModel, s.FFNHidden, s.ParamsDense, m.IsStock(), tt.blocks, tt.dModel, tt.ffn, tt.dense)
			}
			rng := rand.New(rand.NewPCG(23, uint64(i)))
			msgs := make([][]byte, 64)
			in := make([]bitvec.Vec, len(msgs))
			for k := range msgs {
				msgs[k] = make([]byte, l.NumInputs/8)
				for j := range msgs[k] {
					msgs[k][j] = byte(rng.Uint32())
				}
				in[k] = bitvec.NewVec(l.NumInputs)
				for j := range l.NumInputs {
					in[k].Set(j, uint(msgs[k][j/8]>>(7-j%8)&1))
				}
			}
			t1 := time.Now()
			want, err := bitvec.EvalSliced(in, l.NumInputs, l.Evaluator())
			if err != nil {
				t.Fatal(err)
			}
			res := checkPass(t, "float32 stock pass vs layered circuit", m, in, want, l.NumOutputs())
			passTime := time.Since(t1)
			if _, full := tt.values["rounds"]; !full {
				for k, msg := range msgs {
					var d []byte
					switch tt.values["preset"] {
					case "sha224":
						x := sha256.Sum224(msg)
						d = x[:]
					default:
						x := sha256.Sum256(msg)
						d = x[:]
					}
					for j := range l.NumOutputs() {
						if res.Outputs[k].Get(j) != uint(d[j/8]>>(7-j%8)&1) {
							t.Fatalf("message %d: the float32 stock pass's digest differs from crypto/sha256 at bit %d", k, j)
						}
					}
				}
			}
			t.Logf("%s: depth %d; tokens %d, d_model %d, blocks %d, heads %d, FFN %d, params dense %d nonzero %d; attrs %v; margin %.7f; map %v, float32 pass %v",
				tt.name, l.Depth(), s.Tokens, s.DModel, s.Blocks, s.Heads, s.FFNHidden, s.ParamsDense, s.ParamsNonzero, m.Attrs, res.MinMargin,
				mapTime.Round(time.Millisecond), passTime.Round(time.Millisecond))
		})
	}
}

// TestWordsSHA2 maps SHA-256 at reduced rounds (8 and 20; -short: 8,
// without the pass; 8-bit chunks) with and
// without words (Config.NoWords): the words' slots fetch fewer
// dimensions and give a smaller model, exact in float32 against the
// layered circuit on 64 random messages.
func TestWordsSHA2(t *testing.T) {
	tests := []struct {
		rounds          int64
		fetched, before int64 // the model's fetched attr with and without words
		dense, denseWas int64
	}{
		{8, 93, 110, 16371968, 18795664},
		{20, 97, 104, 44613960, 52231540},
	}
	for i, tt := range tests {
		t.Run(fmt.Sprintf("rounds=%d", tt.rounds), func(t *testing.T) {
			if tt.rounds > 8 {
				sdktest.Short(t, "20 rounds (7 s; rounds=8 checks the same words)")
			}
			ctx := context.Background()
			c := sdktest.Build(t, sha2.Plugin, map[string]any{"preset": "sha256", "rounds": tt.rounds})
			l, err := fusion.Compile(ctx, c, fusion.Options{MaxSum: 1 << 16})
			if err != nil {
				t.Fatal(err)
			}
			m, err := tokensasstates.Map(ctx, l, tokensasstates.Config{})
			if err != nil {
				t.Fatal(err)
			}
			was, err := tokensasstates.Map(ctx, l, tokensasstates.Config{NoWords: true})
			if err != nil {
				t.Fatal(err)
			}
			s, sw := m.Stats(), was.Stats()
			t.Logf("words: fetched %d, d_model %d, FFN %d, %d dense; without: fetched %d, d_model %d, FFN %d, %d dense",
				m.Attrs["fetched"], s.DModel, s.FFNHidden, s.ParamsDense, was.Attrs["fetched"], sw.DModel, sw.FFNHidden, sw.ParamsDense)
			if m.Attrs["fetched"] != tt.fetched || was.Attrs["fetched"] != tt.before || s.ParamsDense != tt.dense || sw.ParamsDense != tt.denseWas {
				t.Fatalf("fetched %d / %d, dense %d / %d; want %d / %d, %d / %d", m.Attrs["fetched"], was.Attrs["fetched"], s.ParamsDense, sw.ParamsDense,
					tt.fetched, tt.before, tt.dense, tt.denseWas)
			}
			if testing.Short() {
				// TestSHA2's "sha256 r=8 8-bit chunks" passes the same
				// model (Config{} on the same circuit) in -short.
				return
			}
			in := bitvec.Random(rand.New(rand.NewPCG(23, uint64(100+i))), 64, l.NumInputs)
			want, err := bitvec.EvalSliced(in, l.NumInputs, l.Evaluator())
			if err != nil {
				t.Fatal(err)
			}
			checkPass(t, "float32 stock pass (words) vs layered circuit", m, in, want, l.NumOutputs())
		})
	}
}
