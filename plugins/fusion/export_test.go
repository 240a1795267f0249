package fusion

import (
	"context"

	"github.com/tcforge/tcforge/sdk/circuit"
)

// WidthBound returns widthBound of the plan Compile realises for c with
// opts (without a budget), for tests.
func WidthBound(ctx context.Context, c *circuit.Circuit, opts Options) (int, error) {
	c, n, err := lower(ctx, c, opts)
	if err != nil {
		return 0, err
	}
	pl, err := plan(ctx, n, n.outputs(c), opts)
	if err != nil {
		return 0, err
	}
	return widthBound(c, n, pl), nil
}
