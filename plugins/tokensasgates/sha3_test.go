package tokensasgates_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/tcforge/tcforge/plugins/keccak"
	"github.com/tcforge/tcforge/plugins/noattention"
	"github.com/tcforge/tcforge/plugins/reifier"
	"github.com/tcforge/tcforge/plugins/tokensasgates"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/model"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// TestFullSHA3 maps full SHA3-256 (reifier) with every mapper and checks
// 64 random inputs as a run does (sdktest.CheckModel). It takes minutes,
// so it runs in the heavy tier (TCFORGE_HEAVY=1; TCFORGE_MAPPERS=hard,
// softmax,… to choose; TCFORGE_PROF=FILE to profile).
func TestFullSHA3(t *testing.T) {
	sdktest.Heavy(t, "every mapping of full SHA3-256 (minutes)")
	p, err := sdk.NewPass(context.Background(), keccak.Plugin, map[string]any{"preset": "sha3-256"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := keccak.Plugin.Build(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	l, err := reifier.Compile(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	in := bitvec.Random(rand.New(rand.NewPCG(1, 2)), 64, l.NumInputs)
	ctx := context.Background()
	mappers := map[string]func() (*model.Model, error){
		"mlp":      func() (*model.Model, error) { return noattention.MLP(ctx, l) },
		"residual": func() (*model.Model, error) { return noattention.Residual(ctx, l) },
		"hard": func() (*model.Model, error) {
			return tokensasgates.Map(ctx, l, tokensasgates.Options{Mode: model.Hard})
		},
		"softmax": func() (*model.Model, error) {
			return tokensasgates.Map(ctx, l, tokensasgates.Options{Mode: model.Softmax})
		},
	}
	names := []string{"mlp", "residual", "hard", "softmax"}
	if s := os.Getenv("TCFORGE_MAPPERS"); s != "" {
		names = splitComma(s)
	}
	for _, name := range names {
		t0 := time.Now()
		m, err := mappers[name]()
		if err != nil {
			t.Fatal(err)
		}
		tm := time.Since(t0)
		if f := os.Getenv("TCFORGE_PROF"); f != "" {
			pf, _ := os.Create(f + "." + name)
			pprof.StartCPUProfile(pf)
		}
		t0 = time.Now()
		// The run's check: float32 bit for bit, float64, the labels on
		// four samples.
		mc := sdktest.CheckModel(t, m, l, sdktest.ModelOptions{In: in})
		tc := time.Since(t0)
		if os.Getenv("TCFORGE_PROF") != "" {
			pprof.StopCPUProfile()
		}
		fmt.Printf("%s: %+v map %v check %v margin %.6f exact in %s\n", name, m.Stats(), tm, tc, mc.MinMargin, mc.ExactIn)
	}
}

func splitComma(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ',' {
			if i > start {
				out = append(out, s[start:i])
			}
			start = i + 1
		}
	}
	return out
}
