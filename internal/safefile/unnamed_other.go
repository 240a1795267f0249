//go:build unix && !linux

package safefile

import "os"

// openUnnamed has no unnamed files here: temporary files have names.
func openUnnamed(handle) (*os.File, bool) { return nil, false }

// link never runs here: every temporary file has a name.
func (d *Dir) link(handle, *os.File, string) error { return os.ErrInvalid }
