package cli_test

import (
	"context"
	"fmt"
	"hash/fnv"
	"os"
	"syscall"

	"github.com/tcforge/tcforge/plugins/keccak"
	"github.com/tcforge/tcforge/plugins/noattention"
	"github.com/tcforge/tcforge/plugins/reifier"
	"github.com/tcforge/tcforge/plugins/tokensasgates"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/model"
)

// chaosEnv, when set (to a seed), makes the chaos plugins misbehave at
// random: a call crashes its process, freezes it (SIGSTOP) or returns a
// well-formed lie, by a hash of the seed, the call and its parameters;
// unset, they behave as the plugins they wrap.
const chaosEnv = "TCFORGE_TEST_CHAOS"

// chaos says what a call what with pass on an input of the given key (its
// sizes: the parameters of a layerer or mapper are the same at every
// point) does: "" (behave), "crash", "freeze" or "lie".
func chaos(what, key string, pass *sdk.Pass) string {
	seed := os.Getenv(chaosEnv)
	if seed == "" {
		return ""
	}
	pj, _ := pass.Params.MarshalJSON()
	h := fnv.New64a()
	h.Write([]byte(seed + "\x00" + what + "\x00" + key + "\x00"))
	h.Write(pj)
	switch r := h.Sum64() % 1000; {
	case r < 10:
		return "crash"
	case r < 15:
		return "freeze"
	case r < 35:
		return "lie"
	}
	return ""
}

// misbehave crashes or freezes the plugin process as chaos says, and
// reports whether the call should lie.
func misbehave(what, key string, pass *sdk.Pass) bool {
	switch chaos(what, key, pass) {
	case "crash":
		os.Exit(3)
	case "freeze":
		syscall.Kill(os.Getpid(), syscall.SIGSTOP) // the host's --timeout kills it
	case "lie":
		return true
	}
	return false
}

// addChaos adds the chaos plugins of every kind to the test builtins:
// chaos-keccak (keccak, lying with one round more), chaos-layer (reifier,
// lying with an output's threshold out of reach) and chaos-map
// (tokens-as-gates, lying with a readout threshold out of reach).
func addChaos(m map[string]sdk.Plugin) {
	con := *keccak.Plugin
	con.Name, con.Doc = "chaos-keccak", "keccak that crashes, freezes or lies at random (with $"+chaosEnv+")"
	build := con.Build
	con.Build = func(ctx context.Context, pass *sdk.Pass) (*circuit.Circuit, error) {
		if misbehave("build", "", pass) {
			vals := map[string]any{"rounds": int64(pass.Params.Int("rounds") + 1)}
			for _, k := range []string{"log_w", "rate"} {
				if pass.Params.Has(k) {
					vals[k] = int64(pass.Params.Int(k))
				}
			}
			lie, err := sdk.NewPass(ctx, keccak.Plugin, vals)
			if err != nil {
				return nil, err
			}
			return build(ctx, lie)
		}
		return build(ctx, pass)
	}
	m[con.Name] = &con

	lay := *reifier.Plugin
	lay.Name, lay.Doc = "chaos-layer", "reifier that crashes, freezes or lies at random (with $"+chaosEnv+")"
	layer := lay.Layer
	lay.Layer = func(ctx context.Context, pass *sdk.Pass, c *circuit.Circuit) (*layered.Circuit, error) {
		lie := misbehave("layer", fmt.Sprint(len(c.Ops), len(c.Args)), pass)
		lc, err := layer(ctx, pass, c)
		if err == nil && lie {
			lc.Threshold[lc.LevelStart[len(lc.LevelStart)-2]] = 1 << 20
		}
		return lc, err
	}
	m[lay.Name] = &lay

	mp := *tokensasgates.Plugin
	mp.Name, mp.Doc = "chaos-map", "tokens-as-gates that crashes, freezes or lies at random (with $"+chaosEnv+")"
	mapModel := mp.Map
	mp.Map = func(ctx context.Context, pass *sdk.Pass, lc *layered.Circuit) (*model.Model, error) {
		lie := misbehave("map", fmt.Sprint(len(lc.Kind), len(lc.Src)), pass)
		md, err := mapModel(ctx, pass, lc)
		if err == nil && lie {
			md.Readout.Threshold[0] = 1e30
		}
		return md, err
	}
	m[mp.Name] = &mp

	// A mapper whose every model is a well-formed lie: its check fails.
	liar := *tokensasgates.Plugin
	liar.Name, liar.Doc = "lying-map", "tokens-as-gates whose readout threshold is out of reach: every model fails its check"
	liar.Map = func(ctx context.Context, pass *sdk.Pass, lc *layered.Circuit) (*model.Model, error) {
		md, err := mapModel(ctx, pass, lc)
		if err == nil {
			md.Readout.Threshold[0] = 1e30
		}
		return md, err
	}
	m[liar.Name] = &liar

	// A mapper with one wrong weight: no-attention whose block 0 reads
	// every input of FFN unit 1 (the first ramp of level 1's gate 0) with
	// the opposite sign (TestModelErrorsLocated).
	wrong := *noattention.Plugin
	wrong.Name, wrong.Doc = "wrong-weight", "no-attention with one FFN unit's gate row negated in block 0: its models fail their check"
	wrong.Map = func(ctx context.Context, pass *sdk.Pass, lc *layered.Circuit) (*model.Model, error) {
		md, err := noattention.Plugin.Map(ctx, pass, lc)
		if err == nil {
			_, vals := md.Tensor("blocks.0.ffn.gate").Row(1)
			for i := range vals {
				vals[i] = -vals[i]
			}
		}
		return md, err
	}
	m[wrong.Name] = &wrong
}
