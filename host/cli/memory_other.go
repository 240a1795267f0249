//go:build !linux

package cli

// physicalMemory returns 0: unknown here (the host's bound is then
// --memory or GOMEMLIMIT only).
func physicalMemory() int64 { return 0 }

// addressSpaceLeft returns 0: not looked at here.
func addressSpaceLeft() int64 { return 0 }

// cgroupMemoryLimit returns 0: no cgroups here.
func cgroupMemoryLimit() int64 { return 0 }
