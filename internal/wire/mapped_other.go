//go:build !unix

package wire

import "os"

// mapPrivate maps nothing where there is no mmap: files are read.
func mapPrivate(*os.File, int64) ([]byte, error) { return nil, nil }

// unmap has nothing to undo.
func unmap([]byte) {}
