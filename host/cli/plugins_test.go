package cli_test

import (
	"context"
	"os"
	"time"

	"github.com/tcforge/tcforge/host/builtin"
	"github.com/tcforge/tcforge/plugins/keccak"
	"github.com/tcforge/tcforge/plugins/reifier"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
)

// hangMarkEnv names a file the "hangs" layerer creates when it starts
// hanging.
const hangMarkEnv = "TCFORGE_TEST_HANG_MARK"

// testBuiltins are the bundled plugins plus misbehaving ones. They are
// served, like bundled plugins, by re-executing the test binary, so every
// misbehaviour happens in a real plugin process behind real RPC.
// noPrepare is the Prepare of the test layerers: nothing to resolve.
func noPrepare(context.Context, *sdk.Pass) (any, error) { return nil, nil }

func testBuiltins() map[string]sdk.Plugin {
	m := builtin.Plugins()
	// reifierThen compiles with the real backend, then corrupts the result.
	reifierThen := func(corrupt func(*layered.Circuit)) func(context.Context, *sdk.Pass, *circuit.Circuit) (*layered.Circuit, error) {
		return func(ctx context.Context, _ *sdk.Pass, c *circuit.Circuit) (*layered.Circuit, error) {
			lc, err := reifier.Compile(ctx, c)
			if err != nil {
				return nil, err
			}
			corrupt(lc)
			return lc, nil
		}
	}
	lastLevel := func(lc *layered.Circuit) int32 { return lc.LevelStart[len(lc.LevelStart)-2] }
	for _, p := range []*sdk.Layerer{
		{Name: "panics", Version: "0.0.1", Doc: "panics in Layer",
			Layer: func(ctx context.Context, _ *sdk.Pass, c *circuit.Circuit) (*layered.Circuit, error) {
				panic("layering is hard")
			}},
		{Name: "dies", Version: "0.0.1", Doc: "exits in the middle of Layer",
			Layer: func(ctx context.Context, _ *sdk.Pass, c *circuit.Circuit) (*layered.Circuit, error) {
				os.Exit(3)
				return nil, nil
			}},
		{Name: "hangs", Version: "0.0.1", Doc: "never answers Layer (and ignores cancellation)",
			Layer: func(ctx context.Context, _ *sdk.Pass, c *circuit.Circuit) (*layered.Circuit, error) {
				if mark := os.Getenv(hangMarkEnv); mark != "" {
					os.WriteFile(mark, nil, 0o644) // tell the test we are stuck
				}
				time.Sleep(time.Hour)
				return nil, nil
			}},
		{Name: "lies", Version: "0.0.1", Doc: "returns a well-formed circuit whose first output is stuck at 0",
			Layer: reifierThen(func(lc *layered.Circuit) { lc.Threshold[lastLevel(lc)] = 1 << 20 })},
		{Name: "bad-src", Version: "0.0.1", Doc: "an edge from beyond the previous level (index out of range: a level skipped)",
			Layer: reifierThen(func(lc *layered.Circuit) { lc.Src[lc.RowStart[lastLevel(lc)]] = 1 << 24 })},
		{Name: "bad-outputs", Version: "0.0.1", Doc: "one output too few",
			Layer: reifierThen(func(lc *layered.Circuit) {
				n := len(lc.Kind) - 1
				lc.Kind, lc.Threshold, lc.Tag = lc.Kind[:n], lc.Threshold[:n], lc.Tag[:n]
				lc.RowStart = lc.RowStart[:n+1]
				lc.Src, lc.Weight = lc.Src[:lc.RowStart[n]], lc.Weight[:lc.RowStart[n]]
				lc.LevelStart[len(lc.LevelStart)-1]--
			})},
	} {
		p.Prepare = noPrepare
		m[p.Name] = p
	}
	// A construction whose circuit has a cycle: a node reading itself.
	m["cyclic"] = &sdk.Construction{Name: "cyclic", Version: "0.0.1", Doc: "returns a circuit with a cycle",
		Params:  keccak.Plugin.Params,
		Prepare: keccak.Plugin.Prepare,
		Build: func(ctx context.Context, p *sdk.Pass) (*circuit.Circuit, error) {
			c, err := keccak.Plugin.Build(ctx, p)
			if err != nil {
				return nil, err
			}
			last := len(c.Ops) - 1
			c.Args[c.ArgStart[last]] = circuit.Node(last)
			return c, nil
		},
		Reference: keccak.Plugin.Reference,
	}
	// Served with another protocol version (see TestMain).
	m["oldproto"] = &sdk.Layerer{Name: "oldproto", Version: "0.0.1", Doc: "speaks protocol 0", Prepare: noPrepare,
		Layer: func(ctx context.Context, _ *sdk.Pass, c *circuit.Circuit) (*layered.Circuit, error) {
			return reifier.Compile(ctx, c)
		}}
	return m
}
