package sdk_test

import (
	"context"
	"errors"
	"testing"

	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/bitvec"
)

// TestEachInput: outputs in input order; an error or the end of the
// context stops the loop and names the sample.
func TestEachInput(t *testing.T) {
	in := []bitvec.Vec{{1}, {2}, {3}}
	out, err := sdk.EachInput(context.Background(), in, func(v bitvec.Vec) (bitvec.Vec, error) { return bitvec.Vec{v[0] * 10}, nil })
	if err != nil || len(out) != 3 || out[0][0] != 10 || out[2][0] != 30 {
		t.Fatalf("EachInput = %v, %v", out, err)
	}
	boom := errors.New("boom")
	_, err = sdk.EachInput(context.Background(), in, func(v bitvec.Vec) (bitvec.Vec, error) {
		if v[0] == 2 {
			return nil, boom
		}
		return v, nil
	})
	if !errors.Is(err, boom) || err.Error() != "sample 1: boom" {
		t.Errorf("error = %v, want sample 1: boom", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := sdk.EachInput(ctx, in, func(v bitvec.Vec) (bitvec.Vec, error) { return v, nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: %v", err)
	}
}
