//go:build !unix

package wire

import (
	"errors"
	"io/fs"
	"os"
)

// openNoFollow is not offered here: blobs are streamed.
func openNoFollow(string) (*os.File, error) {
	return nil, errors.New("blob files are not supported here")
}

// checkOwner cannot check ownership here: the plugin streams its blobs.
func checkOwner(fs.FileInfo) error { return errors.New("blob files are not supported here") }

// processAlive is not asked here: without blob files there is nothing to
// sweep, so every process counts as alive.
func processAlive(int) bool { return true }
