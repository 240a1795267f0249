package cli

import (
	"os"
	"testing"
)

// TestMachineShare: the default bound is half the least of the physical
// memory, RLIMIT_AS and the cgroup's limit, naming which.
func TestMachineShare(t *testing.T) {
	const gib = 1 << 30
	tests := []struct {
		ram, as, cg int64
		want        int64
		from        string
	}{
		{24 * gib, 0, 0, 12 * gib, "half of the physical memory"},
		{24 * gib, 8 * gib, 0, 4 * gib, "half of the address space RLIMIT_AS (ulimit -v) leaves"},
		{24 * gib, 8 * gib, 2 * gib, 1 * gib, "half of the cgroup's memory limit"},
		{24 * gib, 0, 30 * gib, 12 * gib, "half of the physical memory"},
		{0, 0, 0, 0, "none"},
	}
	for _, tt := range tests {
		got, from := machineShare(tt.ram, tt.as, tt.cg)
		if got != tt.want || from != tt.from {
			t.Errorf("machineShare(%d, %d, %d) = %d, %q; want %d, %q", tt.ram, tt.as, tt.cg, got, from, tt.want, tt.from)
		}
	}
}

// TestCgroupLimit: the cgroup's memory limit is found through
// /proc/self/mountinfo and /proc/self/cgroup for v1 and v2, at the
// machine's root or in a container (the mount's root is the cgroup's
// path), and the least along the path counts; "max" and v1's 2⁶³ − 4096
// are no limit.
func TestCgroupLimit(t *testing.T) {
	files := map[string]string{
		"/sys/fs/cgroup/memory/job/memory.limit_in_bytes":      "2147483648\n",
		"/sys/fs/cgroup/memory/job/step/memory.limit_in_bytes": "9223372036854771712\n",
		"/sys/fs/cgroup/memory/memory.limit_in_bytes":          "9223372036854771712\n",
		"/sys/fs/cgroup/slurm/job_7/memory.max":                "1073741824\n",
		"/sys/fs/cgroup/slurm/job_7/step_0/memory.max":         "max\n",
		"/sys/fs/cgroup/memory.max":                            "max\n",
		"/c/memory.max":                                        "536870912\n", // a container's view of its own cgroup
	}
	read := func(p string) ([]byte, error) {
		if s, ok := files[p]; ok {
			return []byte(s), nil
		}
		return nil, os.ErrNotExist
	}
	tests := []struct {
		name, mountinfo, cgroup string
		want                    int64
	}{
		{"v1", "34 30 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n",
			"4:memory:/job/step\n1:cpu:/\n", 2 << 30},
		{"v2", "40 30 0:37 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
			"0::/slurm/job_7/step_0\n", 1 << 30},
		{"v2 in a container", "40 30 0:37 /ctr /c rw - cgroup2 cgroup2 rw\n",
			"0::/ctr\n", 512 << 20},
		{"v1 without memory", "31 30 0:28 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n",
			"1:cpu:/job\n", 0},
		{"none", "", "", 0},
	}
	for _, tt := range tests {
		if got := cgroupLimit([]byte(tt.mountinfo), []byte(tt.cgroup), read); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, got, tt.want)
		}
	}
}
