package forward

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tcforge/tcforge/internal/modeltest"
	"github.com/tcforge/tcforge/plugins/keccak"
	"github.com/tcforge/tcforge/plugins/reifier"
	"github.com/tcforge/tcforge/plugins/tokensasgates"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/model"
)

// TestNeededTokens checks that skipping the tokens the readout does not
// depend on (Program.need) changes no readout value, bit for bit, and that on
// a tokens-as-gates model with hard attention it skips what the circuit's
// levels say: block t computes only tokens at levels ≥ t.
func TestNeededTokens(t *testing.T) {
	ctx := context.Background()
	c := build(t, keccak.Plugin, map[string]any{"log_w": int64(2), "rate": int64(50), "rounds": int64(3), "padding": "none"})
	l, err := reifier.Compile(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	models := map[string]*model.Model{}
	for _, mode := range []model.AttnMode{model.Hard, model.Softmax} {
		m, err := tokensasgates.Map(ctx, l, tokensasgates.Options{Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		models["tokens-as-gates/"+string(mode)] = m
	}
	for v := range 3 {
		models["random/"+string(rune('0'+v))] = modeltest.RandomModel(rand.New(rand.NewPCG(5, uint64(v))), v)
	}
	for name, m := range models {
		t.Run(name, func(t *testing.T) {
			p, err := Compile(m)
			if err != nil {
				t.Fatal(err)
			}
			in := bitvec.Random(rand.New(rand.NewPCG(1, 2)), 20, p.nIn)
			for _, f64 := range []bool{false, true} {
				got, err := p.Run(in, Options{KeepValues: true, Float64: f64, Lanes: 8})
				if err != nil {
					t.Fatal(err)
				}
				need := p.need
				p.need = nil
				want, err := p.Run(in, Options{KeepValues: true, Float64: f64, Lanes: 8})
				p.need = need
				if err != nil {
					t.Fatal(err)
				}
				for s := range want.Values {
					for k, w := range want.Values[s] {
						if g := got.Values[s][k]; math.Float64bits(g) != math.Float64bits(w) {
							t.Fatalf("float64=%v sample %d readout %d: %v with skipping, %v without", f64, s, k, g, w)
						}
					}
				}
			}
		})
	}
	// Hard tokens-as-gates: sublayers 2t and 2t+1 (block t) need exactly
	// the tokens of levels ≥ t+1 that the outputs depend on, and every
	// output is needed to the end.
	p, err := Compile(models["tokens-as-gates/hard"])
	if err != nil {
		t.Fatal(err)
	}
	if p.need == nil {
		t.Fatal("hard tokens-as-gates: every token needed everywhere")
	}
	S := int32(len(p.subs))
	level := func(tok int) int { // the circuit level of a token
		if tok < l.NumInputs {
			return 0
		}
		g := int32(tok - l.NumInputs)
		for L := 1; ; L++ {
			if g < l.LevelStart[L] {
				return L
			}
		}
	}
	computed := 0
	for tok, last := range p.need {
		if last >= 0 && int(last)/2+1 > level(tok) {
			t.Errorf("token %d (level %d) needed until sublayer %d, past its level's block", tok, level(tok), last)
		}
		computed += int(last) + 1
	}
	for _, tok := range p.outTok {
		if p.need[tok] != S-1 {
			t.Errorf("output token %d needed until %d, want %d", tok, p.need[tok], S-1)
		}
	}
	frac := float64(computed) / float64(int(S)*p.T)
	t.Logf("hard tokens-as-gates, depth %d: %.1f%% of (token, sublayer) pairs computed", l.Depth(), 100*frac)
	if frac > 0.6 {
		t.Errorf("%.2f of the (token, sublayer) pairs computed, want about half", frac)
	}
	if pn, _ := Compile(models["tokens-as-gates/softmax"]); pn.need == nil || pn.need[0] != S-3 && pn.need[0] != S-1 {
		// Softmax sums every token: all needed but in the last block.
		t.Errorf("softmax tokens-as-gates: token 0 needed until %v", pn.need)
	}
}
