package cli

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/tcforge/tcforge/internal/wire"
)

// physicalMemory returns the machine's physical memory in bytes (0 if
// unknown).
func physicalMemory() int64 {
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil {
		return 0
	}
	return int64(si.Totalram) * int64(max(1, si.Unit))
}

// addressSpaceLeft returns how much of this process's RLIMIT_AS (ulimit
// -v, prlimit --as) its address space leaves, in bytes: the limit less
// what the process has mapped already (VmSize), 0 if unlimited. A Go
// process maps about 1.2 GB of address space before it allocates anything
// (the runtime's reservations), and its plugin processes as much: under
// a limit of a few GB that is most of it.
func addressSpaceLeft() int64 {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_AS, &rl); err != nil || rl.Cur == unix.RLIM_INFINITY || rl.Cur > 1<<62 {
		return 0
	}
	used, _ := wire.ProcessMemory(os.Getpid(), "VmSize")
	return max(int64(rl.Cur)-used, 1)
}

// cgroupMemoryLimit returns the memory limit of this process's cgroup in
// bytes (0 if none): the least memory.max (cgroup v2) or
// memory.limit_in_bytes (v1) along its path, as a Slurm job's --mem or a
// container's memory limit sets it.
func cgroupMemoryLimit() int64 {
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return 0
	}
	cg, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return 0
	}
	return cgroupLimit(mi, cg, os.ReadFile)
}

// cgroupLimit is cgroupMemoryLimit on the contents of /proc/self/mountinfo
// and /proc/self/cgroup, reading the cgroup files with read.
func cgroupLimit(mountinfo, cgroup []byte, read func(string) ([]byte, error)) int64 {
	// The memory hierarchies and this process's place in each.
	type mount struct{ root, point string }
	var v1, v2 []mount
	sc := bufio.NewScanner(bytes.NewReader(mountinfo))
	for sc.Scan() {
		// id parent major:minor root point options… - fstype source superoptions
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(g) < 1 {
			continue
		}
		m := mount{root: unescapeMount(f[3]), point: unescapeMount(f[4])}
		switch {
		case g[0] == "cgroup2":
			v2 = append(v2, m)
		case g[0] == "cgroup" && len(g) >= 3 && hasOption(g[2], "memory"):
			v1 = append(v1, m)
		}
	}
	least := int64(0)
	take := func(n int64) {
		if n > 0 && (least == 0 || n < least) {
			least = n
		}
	}
	sc = bufio.NewScanner(bytes.NewReader(cgroup))
	for sc.Scan() {
		// hierarchy-id:controllers:path
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		mounts, file := v1, "memory.limit_in_bytes"
		switch {
		case parts[0] == "0" && parts[1] == "":
			mounts, file = v2, "memory.max"
		case !hasOption(parts[1], "memory"):
			continue
		}
		for _, m := range mounts {
			rel, ok := strings.CutPrefix(parts[2], m.root)
			if !ok {
				continue
			}
			for dir := filepath.Join(m.point, rel); ; dir = filepath.Dir(dir) {
				if b, err := read(filepath.Join(dir, file)); err == nil {
					take(parseLimit(b))
				}
				if dir == m.point || !strings.HasPrefix(dir, m.point) {
					break
				}
			}
		}
	}
	return least
}

// parseLimit reads a cgroup memory limit: bytes, or "max" (v2) or a value
// near 2⁶³ (v1) for none (0).
func parseLimit(b []byte) int64 {
	s := strings.TrimSpace(string(b))
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n >= 1<<62 {
		return 0
	}
	return n
}

// hasOption reports whether the comma-separated list has opt.
func hasOption(list, opt string) bool {
	for o := range strings.SplitSeq(list, ",") {
		if o == opt {
			return true
		}
	}
	return false
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
