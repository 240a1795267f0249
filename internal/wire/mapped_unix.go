//go:build unix

package wire

import (
	"os"
	"syscall"
)

// mapPrivate maps size bytes of f, private and writable (copy on write).
func mapPrivate(f *os.File, size int64) ([]byte, error) {
	return syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE)
}

// unmap undoes mapPrivate.
func unmap(b []byte) { _ = syscall.Munmap(b) }
