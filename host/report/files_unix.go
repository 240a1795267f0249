//go:build unix

package report

import (
	"os"
	"syscall"
)

// openNoFollow opens path with flag, failing on a symbolic link and not
// waiting for a FIFO.
func openNoFollow(path string, flag int) (*os.File, error) {
	return os.OpenFile(path, flag|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}
