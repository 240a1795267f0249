//go:build !linux

package cli

// physicalMemory returns 0: unknown here (the host's bound is then
// --memory or GOMEMLIMIT only).
func physicalMemory() int64 { return 0 }
