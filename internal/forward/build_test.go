package forward

import (
	"context"
	"os"
	"testing"

	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/circuit"
)

// build builds construction c at the given parameter values, as
// sdktest.Build does (sdktest checks models with this package, so this
// package's own tests cannot import it).
func build(t testing.TB, c *sdk.Construction, values map[string]any) *circuit.Circuit {
	t.Helper()
	pass, err := sdk.NewPass(context.Background(), c, values)
	if err != nil {
		t.Fatalf("%s %v: %v", c.Name, values, err)
	}
	circ, err := c.Build(context.Background(), pass)
	if err != nil {
		t.Fatalf("%s %v: %v", c.Name, values, err)
	}
	return circ
}

// heavy skips t outside the heavy test tier, as sdktest.Heavy does.
func heavy(t testing.TB, what string) {
	t.Helper()
	if testing.Short() || os.Getenv("TCFORGE_HEAVY") != "1" {
		t.Skipf("%s: set TCFORGE_HEAVY=1 (without -short) to run it", what)
	}
}
