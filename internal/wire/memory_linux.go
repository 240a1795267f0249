package wire

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// residentBytes returns process pid's resident set size (VmRSS).
func residentBytes(pid int) (int64, bool) { return ProcessMemory(pid, "VmRSS") }

// ProcessMemory returns a size field of process pid's /proc status in
// bytes: "VmRSS" (resident now), "VmHWM" (its peak), …; false where it
// cannot be read.
func ProcessMemory(pid int, field string) (int64, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, false
	}
	_, rest, ok := bytes.Cut(b, []byte("\n"+field+":"))
	if !ok {
		return 0, false
	}
	f := bytes.Fields(rest)
	if len(f) < 2 || string(f[1]) != "kB" {
		return 0, false
	}
	kb, err := strconv.ParseInt(string(f[0]), 10, 64)
	return kb << 10, err == nil
}
