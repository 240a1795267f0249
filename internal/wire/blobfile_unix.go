//go:build unix

package wire

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// openNoFollow opens path for reading, failing if it is a symbolic link,
// and without waiting for a writer if it is a FIFO (the caller checks on
// the opened file that it is a regular one).
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

// checkOwner reports an error unless fi belongs to this process's user.
func checkOwner(fi fs.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("%s: no owner to check", fi.Name())
	}
	if int(st.Uid) != os.Getuid() {
		return fmt.Errorf("%s belongs to user %d, not %d", fi.Name(), st.Uid, os.Getuid())
	}
	return nil
}

// processAlive reports whether a process with this ID exists (signal 0
// probes without sending; EPERM means it exists under another user).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
