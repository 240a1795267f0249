package tokensasstates_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tcforge/tcforge/plugins/adder"
	"github.com/tcforge/tcforge/plugins/fusion"
	"github.com/tcforge/tcforge/plugins/keccak"
	"github.com/tcforge/tcforge/plugins/md"
	"github.com/tcforge/tcforge/plugins/merkle"
	"github.com/tcforge/tcforge/plugins/sha2"
	"github.com/tcforge/tcforge/plugins/tokensasstates"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/model"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// Points are the circuits the mapper is tested on (fusion-layered).
var Points = []struct {
	Name   string
	Plugin *sdk.Construction
	Values map[string]any
	Cfg    tokensasstates.Config
}{
	{"keccak-w1", keccak.Plugin, map[string]any{"log_w": int64(0), "rate": int64(16), "rounds": int64(2)}, tokensasstates.Config{Tokens: 4}},
	{"keccak-w2", keccak.Plugin, map[string]any{"log_w": int64(1), "rate": int64(25), "rounds": int64(2)}, tokensasstates.Config{Tokens: 2, Interleave: true}},
	{"keccak-w8", keccak.Plugin, map[string]any{"log_w": int64(3), "rate": int64(100), "rounds": int64(2)}, tokensasstates.Config{Tokens: 8, Interleave: true}},
	{"md", md.Plugin, map[string]any{"log_w": int64(1), "rounds": int64(3), "block_bits": int64(25), "blocks": int64(2)}, tokensasstates.Config{Tokens: 4}},
	{"merkle", merkle.Plugin, map[string]any{"log_w": int64(1), "rounds": int64(3), "block_bits": int64(25), "leaves": int64(2)}, tokensasstates.Config{Tokens: 4}},
	{"adder", adder.Plugin, map[string]any{"n": int64(8)}, tokensasstates.Config{Tokens: 8, Interleave: true}},
}

// Layered builds point i and layers it with fusion.
func layeredPoint(t *testing.T, i int) *layered.Circuit {
	t.Helper()
	p := Points[i]
	c := sdktest.Build(t, p.Plugin, p.Values)
	l, err := fusion.Compile(context.Background(), c, fusion.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestPoints(t *testing.T) {
	for i, p := range Points {
		t.Run(p.Name, func(t *testing.T) {
			l := layeredPoint(t, i)
			m, err := tokensasstates.Map(context.Background(), l, p.Cfg)
			if err != nil {
				t.Fatal(err)
			}
			// The last level is folded into the readout.
			if !m.IsStock() || len(m.Blocks) != l.Depth()-1 {
				t.Fatalf("%d blocks (stock %v), want %d stock layers", len(m.Blocks), m.IsStock(), l.Depth()-1)
			}
			in := bitvec.Random(rand.New(rand.NewPCG(1, uint64(i))), 64, l.NumInputs)
			want, err := bitvec.EvalSliced(in, l.NumInputs, l.Eval)
			if err != nil {
				t.Fatal(err)
			}
			res := checkPass(t, "float32 stock pass vs layered circuit", m, in, want, l.NumOutputs())
			// The wire encoding keeps the stock layers.
			b, err := m.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			var back model.Model
			if err := back.UnmarshalBinary(b); err != nil || !back.IsStock() {
				t.Fatalf("round trip: %v (stock %v)", err, back.IsStock())
			}
			s := m.Stats()
			t.Logf("%s: depth %d, tokens %d, d_model %d, blocks %d, heads %d, FFN %d, params %d dense %d nonzero, margin %.4f",
				p.Name, l.Depth(), s.Tokens, s.DModel, s.Blocks, s.Heads, s.FFNHidden, s.ParamsDense, s.ParamsNonzero, res.MinMargin)
		})
	}
}

// TestBalance maps the 32-bit adder, whose carry partials, stored divided
// by their gcd, keep Σ|w·x| + |θ| at 9,925 with LayerNorm's mean counted
// (17,982 and a balance dimension before partials were normalised),
// SHA-256 at 4 rounds and 8-bit chunks (none needed either), and toy
// Keccak at one level a round, whose mixed-radix projections put
// LayerNorm's mean far from 0: that model carries a balance dimension.
// Each equals the layered circuit in float32 on random inputs (256 for
// the adder, 64 for the others: their passes take seconds).
func TestBalance(t *testing.T) {
	tests := []struct {
		name    string
		build   func(*testing.T) *circuit.Circuit
		opts    fusion.Options
		balance int64
		maxSum  int64
	}{
		{"adder n=32", func(t *testing.T) *circuit.Circuit {
			return sdktest.Build(t, adder.Plugin, map[string]any{"n": int64(32)})
		}, fusion.Options{}, 0, 9925},
		{"sha256 r=4 8-bit chunks", func(t *testing.T) *circuit.Circuit {
			return sdktest.Build(t, sha2.Plugin, map[string]any{"preset": "sha256", "rounds": int64(4)})
		}, fusion.Options{MaxSum: 1 << 16}, 0, 60365},
		{"keccak w=1 r=2 round", func(t *testing.T) *circuit.Circuit {
			return sdktest.Build(t, keccak.Plugin, map[string]any{"log_w": int64(0), "rate": int64(16), "rounds": int64(2), "padding": "none"})
		}, fusion.Options{Objective: fusion.Round}, 1, 24332},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := fusion.Compile(context.Background(), tt.build(t), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			m, err := tokensasstates.Map(context.Background(), l, tokensasstates.Config{})
			if err != nil {
				t.Fatal(err)
			}
			if m.Attrs["balance"] != tt.balance || m.Attrs["max_sum"] != tt.maxSum {
				t.Fatalf("attrs %v: want balance %d, max_sum %d", m.Attrs, tt.balance, tt.maxSum)
			}
			n := 64
			if i == 0 {
				n = 256
			}
			in := bitvec.Random(rand.New(rand.NewPCG(32, uint64(i+1))), n, l.NumInputs)
			want, err := bitvec.EvalSliced(in, l.NumInputs, l.Eval)
			if err != nil {
				t.Fatal(err)
			}
			checkPass(t, "float32 stock pass vs layered circuit", m, in, want, l.NumOutputs())
		})
	}
}

// checkPass runs the host's float32 forward pass of m on in and checks
// that its outputs are want (n bits a message; what names the comparison:
// the logic or the layered circuit) and that every step is saturated
// (margin ≥ 0.4). It returns the pass's result.
func checkPass(t *testing.T, what string, m *model.Model, in, want []bitvec.Vec, n int) *sdktest.PassResult {
	t.Helper()
	res := sdktest.Forward(t, m, in, sdktest.PassOptions{})
	for s := range in {
		for k := range n {
			if res.Outputs[s].Get(k) != want[s].Get(k) {
				t.Fatalf("%s: sample %d, output bit %d is %d, want %d", what, s, k, res.Outputs[s].Get(k), want[s].Get(k))
			}
		}
	}
	if res.MinMargin < 0.4 {
		t.Errorf("%s: margin %v, want ≥ 0.4", what, res.MinMargin)
	}
	return res
}

// TestRefusesInexact: a comparator of two 20-bit numbers,
// [Σ 2ⁱaᵢ − Σ 2ⁱbᵢ ≥ 0], sums terms up to 2·(2²⁰ − 1), and each float32
// LayerNorm output's relative error (2⁻²⁴) could then exceed a step's
// margin: the mapper says so instead of building a model that is wrong on
// some inputs. So does full SHA-256 at fusion's default bound (16-bit
// chunks; TestSHA2 "sha256 r=8").
func TestRefusesInexact(t *testing.T) {
	const n = 20
	lb := layered.NewBuilder(2*n, nil)
	tag := lb.Tag("compare")
	src := make([]int32, 2*n)
	w := make([]int32, 2*n)
	for i := range n {
		src[i], w[i] = int32(i), 1<<i
		src[n+i], w[n+i] = int32(n+i), -1<<i
	}
	lb.Gate(layered.KindGate, 0, src, w, tag)
	lb.Level()
	lb.Gate(layered.KindGate, 1, []int32{0}, []int32{1}, tag)
	lb.Level()
	_, err := tokensasstates.Map(context.Background(), lb.Circuit(nil), tokensasstates.Config{Tokens: 1})
	if err == nil || !strings.Contains(err.Error(), "reaches 2097150 > 262144") {
		t.Fatalf("err = %v, want the float32 refusal", err)
	}
}

// TestAutoTokens maps circuits with Config.Tokens 0: one token a distinct
// position hint (Keccak's slices, MD's and Merkle's permutation slices,
// the adder's bits), and, for a circuit stripped of its hints, the one of
// 1, 2, 4, 8, 16 tokens whose model has the fewest dense parameters (each
// mapped here too). Every model equals the layered circuit in float32.
func TestAutoTokens(t *testing.T) {
	tests := []struct {
		point  int
		strip  bool
		tokens int
	}{
		{0, false, 1}, // keccak w = 1: one slice
		{1, false, 2},
		{2, false, 8},
		{3, false, 2}, // md, w = 2
		{4, false, 2}, // merkle, w = 2
		{5, false, 8}, // adder, 8 bits
		{2, true, 0},  // keccak w = 8 without hints: searched
		{5, true, 0},
	}
	for _, tt := range tests {
		name := Points[tt.point].Name
		if tt.strip {
			name += " without hints"
		}
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			l := layeredPoint(t, tt.point)
			if tt.strip {
				l.InputPos, l.Pos, l.FormPos = nil, nil, nil
			}
			if got := tokensasstates.AutoTokens(l); got != tt.tokens {
				t.Fatalf("AutoTokens %d, want %d", got, tt.tokens)
			}
			m, err := tokensasstates.Map(ctx, l, tokensasstates.Config{})
			if err != nil {
				t.Fatal(err)
			}
			want := tt.tokens
			if tt.strip {
				if m.Attrs["tokens_searched"] != 5 || m.Attrs["tokens_from_hints"] != 0 {
					t.Fatalf("attrs %v: want tokens_searched 5", m.Attrs)
				}
				// The least of the candidates' dense parameters.
				var least int64 = -1
				for T := 1; T <= tokensasstates.MaxAutoSearch; T *= 2 {
					c, err := tokensasstates.Map(ctx, l, tokensasstates.Config{Tokens: T})
					if err != nil {
						t.Fatal(err)
					}
					if p := c.Stats().ParamsDense; least < 0 || p < least {
						least, want = p, T
					}
				}
				if got := m.Stats().ParamsDense; got != least {
					t.Errorf("dense parameters %d, want the least of the candidates, %d", got, least)
				}
				// docs/mappers.md quotes toy Keccak w = 8: 1 token,
				// 5,219,507 dense parameters (16 tokens: 12,039,960).
				if tt.point == 2 {
					c, err := tokensasstates.Map(ctx, l, tokensasstates.Config{Tokens: 16})
					if err != nil {
						t.Fatal(err)
					}
					if want != 1 || least != 5219507 || c.Stats().ParamsDense != 12039960 {
						t.Errorf("kept %d tokens, %d dense parameters (16 tokens: %d); docs/mappers.md says 1, 5,219,507 (12,039,960)", want, least, c.Stats().ParamsDense)
					}
				}
			} else if m.Attrs["tokens_from_hints"] != 1 {
				t.Fatalf("attrs %v: want tokens_from_hints 1", m.Attrs)
			}
			if m.Tokens != want {
				t.Fatalf("%d tokens, want %d", m.Tokens, want)
			}
			in := bitvec.Random(rand.New(rand.NewPCG(23, uint64(tt.point))), 64, l.NumInputs)
			wantOut, err := bitvec.EvalSliced(in, l.NumInputs, l.Eval)
			if err != nil {
				t.Fatal(err)
			}
			checkPass(t, "float32 stock pass vs layered circuit", m, in, wantOut, l.NumOutputs())
			t.Logf("%d tokens, d_model %d, dense %d, attrs %v", m.Tokens, m.DModel, m.Stats().ParamsDense, m.Attrs)
		})
	}
}
