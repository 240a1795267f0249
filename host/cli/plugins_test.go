package cli_test

import (
	"context"
	"os"

	"github.com/tcforge/tcforge/host/builtin"
	"github.com/tcforge/tcforge/plugins/reifier"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
)

// testBuiltins are the bundled plugins plus three misbehaving layerers.
// They are served, like bundled plugins, by re-executing the test binary.
func testBuiltins() map[string]sdk.Plugin {
	m := builtin.Plugins()
	for _, p := range []*sdk.Layerer{
		{Name: "panics", Version: "0.0.1", Doc: "panics in Layer",
			Layer: func(ctx context.Context, c *circuit.Circuit, p sdk.Params) (*layered.Circuit, error) {
				panic("layering is hard")
			}},
		{Name: "dies", Version: "0.0.1", Doc: "exits in the middle of Layer",
			Layer: func(ctx context.Context, c *circuit.Circuit, p sdk.Params) (*layered.Circuit, error) {
				os.Exit(3)
				return nil, nil
			}},
		{Name: "lies", Version: "0.0.1", Doc: "returns a well-formed circuit whose first output is stuck at 0",
			Layer: func(ctx context.Context, c *circuit.Circuit, p sdk.Params) (*layered.Circuit, error) {
				lc, err := reifier.Compile(ctx, c)
				if err != nil {
					return nil, err
				}
				last := lc.LevelStart[len(lc.LevelStart)-2]
				lc.Threshold[last] = 1 << 20 // never fires
				return lc, nil
			}},
	} {
		m[p.Name] = p
	}
	return m
}
