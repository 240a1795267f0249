package wire

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// dieWithParent asks the kernel to SIGKILL this process when the thread
// that started it exits (PR_SET_PDEATHSIG). The Go runtime does not end
// its threads (unless a goroutine locked to one exits), so that is the
// host's death. An error leaves the portable poll of watchParent.
func dieWithParent() { _ = unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0, 0, 0) }
