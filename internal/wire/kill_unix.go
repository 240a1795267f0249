//go:build unix

package wire

import (
	"os/exec"
	"syscall"
)

// ownGroup makes cmd's process the leader of a process group of its own,
// which killGroup kills whole: a plugin executable that starts children
// (a shell script, a wrapper) leaves none behind it. A terminal's Ctrl-C
// then reaches the host alone, which stops its plugins itself.
func ownGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pgid = 0
}

// killGroup SIGKILLs the process group led by pid (what is left of it).
func killGroup(pid int) {
	if pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}
