//go:build !unix

package cli

import "os"

// tryLock does nothing where flock is not available: runs into one --out
// are not kept apart there.
func tryLock(*os.File) error { return nil }

// openLock opens (or creates) the lock file at path for reading and
// writing.
func openLock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
}
