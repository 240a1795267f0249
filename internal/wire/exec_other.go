//go:build !linux

package wire

import (
	"io"
	"os/exec"
	"path/filepath"
)

// privateCopy copies the executable r into the plugin's private directory
// dir and returns the copy's path (no memfd here).
func privateCopy(cmd *exec.Cmd, r io.Reader, _ int64, dir string) (string, func(), error) {
	path, err := copyToDir(r, dir, filepath.Base(cmd.Path))
	return path, func() {}, err
}
