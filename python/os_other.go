//go:build !unix

package python

import (
	"os"
	"os/exec"
	"syscall"
)

// inGroup does nothing where there are no process groups.
func inGroup(*exec.Cmd) {}

// signalGroup kills the process itself where there are no process groups.
func signalGroup(cmd *exec.Cmd, _ syscall.Signal) error {
	if cmd.Process == nil {
		return nil
	}
	return cmd.Process.Kill()
}

const (
	terminate = syscall.SIGKILL
	kill      = syscall.SIGKILL
)

// openNoFollow opens path for reading (links are checked by the caller).
func openNoFollow(path string) (*os.File, error) {
	return os.Open(path)
}

// gone reports true: without signals a writer's life cannot be asked
// after, and the writer is serialised by ModuleWriter.
func gone(int) bool { return true }
