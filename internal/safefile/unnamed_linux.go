package safefile

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// openUnnamed opens an unnamed file in directory h for writing
// (O_TMPFILE): until it is linked (link), no name shows it, and a process
// killed while writing it (SIGKILL mid-export) leaves nothing behind. ok
// is false where the file system has none.
func openUnnamed(h handle) (*os.File, bool) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		return nil, false // link needs it
	}
	fd, err := unix.Openat(h, ".", unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, false
	}
	return os.NewFile(uintptr(fd), "(unnamed)"), true
}

// link gives the unnamed file f the name in h (linkat through
// /proc/self/fd, which needs no privilege).
func (d *Dir) link(h handle, f *os.File, name string) error {
	return unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(int(f.Fd())), h, name, unix.AT_SYMLINK_FOLLOW)
}
