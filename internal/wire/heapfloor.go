package wire

import "math"

// heapFloor is the heap a plugin process lets itself grow to before its
// first garbage collection. A plugin process starts with an empty heap, so
// Go's collector (GOGC 100, a 4 MB first goal) would run at 4, 8, 16 MB …
// through its first calls, where the same work in the host's process finds
// a heap already grown: on the main job of the README (four plugin
// processes, 64 points) the plugins' collections were 76 ms of CPU against
// the host's 34 ms, and a floor of 16 MiB took the run's CPU time from
// 0.57 s to 0.47 s (medians of 7; docs/design.md, "A heap floor in plugin
// processes"). Past the floor the collector paces as before: a
// plugin whose live heap is L grows to about 2(L + floor) between
// collections, of which the floor itself is never resident, so a large
// plugin holds at most 16 MiB more memory than without it.
const heapFloor = 16 << 20

// heapFloorBytes returns the size of the floor for a process whose Go
// memory limit is limit (debug.SetMemoryLimit(-1); math.MaxInt64 for
// none): heapFloor, or an eighth of the limit if that is less, so that a
// tight --plugin-memory bound is not eaten by the floor.
func heapFloorBytes(limit int64) int {
	if limit <= 0 {
		return 0
	}
	if limit == math.MaxInt64 || limit/8 >= heapFloor {
		return heapFloor
	}
	return int(limit / 8)
}
