package wire

import (
	"math"
	"testing"
)

// TestHeapFloorBytes: the floor is 16 MiB, or an eighth of a Go memory
// limit under 128 MiB (--plugin-memory sets one), and none for a limit of
// nothing.
func TestHeapFloorBytes(t *testing.T) {
	for _, tc := range []struct {
		limit int64
		want  int
	}{
		{math.MaxInt64, 16 << 20},
		{1 << 30, 16 << 20},
		{128 << 20, 16 << 20},
		{64 << 20, 8 << 20},
		{7 * 8, 7},
		{0, 0},
	} {
		if got := heapFloorBytes(tc.limit); got != tc.want {
			t.Errorf("heapFloorBytes(%d) = %d, want %d", tc.limit, got, tc.want)
		}
	}
}
