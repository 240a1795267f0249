//go:build unix

package python

import (
	"os"
	"os/exec"
	"syscall"
)

// inGroup starts cmd as the leader of a process group of its own, so that
// whatever it starts is stopped with it (signalGroup).
func inGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup sends sig to the process group cmd leads (started with
// inGroup); a group already gone is no error.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) error {
	if cmd.Process == nil {
		return nil
	}
	if err := syscall.Kill(-cmd.Process.Pid, sig); err != nil && err != syscall.ESRCH {
		return err
	}
	return nil
}

// terminate and kill are the signals that stop the module writer: first
// asked (its temporary files removed), then forced.
const (
	terminate = syscall.SIGTERM
	kill      = syscall.SIGKILL
)

// openNoFollow opens path for reading without following a link (ELOOP)
// or blocking on a FIFO.
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

// gone reports whether no process pid exists (a temporary file's writer
// that was killed).
func gone(pid int) bool {
	return syscall.Kill(pid, 0) == syscall.ESRCH
}
