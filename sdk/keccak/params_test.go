package keccak_test

import (
	"strings"
	"testing"

	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/keccak"
)

// TestPermFromParams: rounds defaults to 12 + 2·log_w, an explicit value
// wins, and a bad log_w is located at log_w.
func TestPermFromParams(t *testing.T) {
	schema := []sdk.Param{keccak.LogWParam("Keccak-p"), keccak.RoundsParam()}
	for _, tc := range []struct {
		values     map[string]any
		logW       int
		wantRounds int
		wantErr    string
	}{
		{map[string]any{}, 6, 24, ""},
		{map[string]any{}, 2, 16, ""},
		{map[string]any{"rounds": int64(3)}, 1, 3, ""},
		{map[string]any{}, 7, 0, `parameter "log_w": log_w must be in 0..6`},
	} {
		p, err := sdk.NewParams(schema, tc.values)
		if err != nil {
			t.Fatal(err)
		}
		perm, err := keccak.PermFromParams(p, tc.logW)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("log_w %d %v: got %v, want error %q", tc.logW, tc.values, err, tc.wantErr)
			}
			continue
		}
		if err != nil || perm.LogW != tc.logW || perm.Rounds != tc.wantRounds {
			t.Errorf("log_w %d %v: got %+v, %v; want rounds %d", tc.logW, tc.values, perm, err, tc.wantRounds)
		}
	}
	if _, err := sdk.NewParams(schema, map[string]any{"rounds": int64(0)}); err == nil || !strings.Contains(err.Error(), "at least 1") {
		t.Errorf("rounds = 0: got %v, want a bound error", err)
	}
}
