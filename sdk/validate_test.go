package sdk_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/model"
)

// TestValidateMaxWeight: a mapper's MaxWeight is 0 (none) or positive.
func TestValidateMaxWeight(t *testing.T) {
	for _, tc := range []struct {
		mw   int64
		want string
	}{{0, ""}, {1 << 16, ""}, {-1, "MaxWeight -1"}} {
		m := &sdk.Mapper{Name: "m", Doc: "d", MaxWeight: tc.mw,
			Prepare: func(context.Context, *sdk.Pass) (any, error) { return nil, nil },
			Map:     func(context.Context, *sdk.Pass, *layered.Circuit) (*model.Model, error) { return nil, nil }}
		err := sdk.Validate(m)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("MaxWeight %d: %v, want %q", tc.mw, err, tc.want)
		}
		if got := m.Describe().MaxWeight; got != tc.mw {
			t.Errorf("MaxWeight %d described as %d", tc.mw, got)
		}
	}
}
