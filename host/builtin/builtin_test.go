package builtin_test

import (
	"maps"
	"slices"
	"testing"

	"github.com/tcforge/tcforge/host/builtin"
	"github.com/tcforge/tcforge/sdk"
)

// TestValidate: every bundled plugin's declaration passes sdk.Validate (as
// Serve and the registry require), under the name it is bundled as.
func TestValidate(t *testing.T) {
	pls := builtin.Plugins()
	want := []string{"ascon", "blake2s", "blake3", "bristol", "fusion", "keccak", "md", "md5", "merkle", "no-attention", "reifier", "sha1", "sha2", "tokens-as-gates", "tokens-as-states"}
	if got := slices.Sorted(maps.Keys(pls)); !slices.Equal(got, want) {
		t.Errorf("bundled plugins %v, want %v", got, want)
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
