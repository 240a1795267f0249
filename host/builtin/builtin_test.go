package builtin_test

import (
	"testing"

	"github.com/tcforge/tcforge/host/builtin"
	"github.com/tcforge/tcforge/sdk"
)

// TestValidate: every bundled plugin's declaration passes sdk.Validate (as
// Serve and the registry require), under the name it is bundled as.
func TestValidate(t *testing.T) {
	pls := builtin.Plugins()
	if len(pls) != 7 {
		t.Errorf("%d bundled plugins, want 7", len(pls))
	}
	for name, pl := range pls {
		if err := sdk.Validate(pl); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if got := pl.Describe().Name; got != name {
			t.Errorf("bundled as %q, describes itself as %q", name, got)
		}
	}
}
