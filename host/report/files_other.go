//go:build !unix

package report

import "os"

// openNoFollow opens path with flag (links cannot be refused here).
func openNoFollow(path string, flag int) (*os.File, error) { return os.OpenFile(path, flag, 0) }
