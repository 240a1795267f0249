package sdk

import (
	"context"
	"fmt"

	"github.com/tcforge/tcforge/sdk/bitvec"
)

// EachInput is the loop of a Reference that computes each output from its
// input alone: it calls f on every input in order, stops when ctx ends,
// and names the sample of an error.
func EachInput(ctx context.Context, inputs []bitvec.Vec, f func(in bitvec.Vec) (bitvec.Vec, error)) ([]bitvec.Vec, error) {
	out := make([]bitvec.Vec, len(inputs))
	for k, in := range inputs {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("sample %d: %w", k, err)
		}
		var err error
		if out[k], err = f(in); err != nil {
			return nil, fmt.Errorf("sample %d: %w", k, err)
		}
	}
	return out, nil
}
