package decoder

import (
	"testing"

	"github.com/tcforge/tcforge/sdk/layered"
)

// TestRoundLevels: a round's levels from the scope tags, counting a round
// once however a builder suffixes or nests its scope (SHA-256's adders tag
// "round N counters"; Keccak's steps "round N/theta").
func TestRoundLevels(t *testing.T) {
	for _, tc := range []struct {
		name  string
		depth int
		tags  []string
		want  int
	}{
		{"sha-2 with adder counters", 644, []string{"schedule", "round 1", "round 1 counters", "round 2", "round 2 counters"}, 322},
		{"keccak steps", 48, []string{"round 1/theta", "round 1/chi", "round 2/theta", "round 2/iota"}, 24},
		{"two blocks", 40, []string{"block 1/round 1", "block 1/round 2", "block 2/round 1", "block 2/round 2"}, 10},
		{"no rounds", 7, []string{"schedule"}, 7},
		{"not a round number", 9, []string{"round about"}, 9},
	} {
		c := &layered.Circuit{LevelStart: make([]int32, tc.depth+1), Tags: tc.tags}
		if got := roundLevels(c); got != tc.want {
			t.Errorf("%s: roundLevels %d, want %d", tc.name, got, tc.want)
		}
	}
}
