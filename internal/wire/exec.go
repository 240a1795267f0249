package wire

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/tcforge/tcforge/internal/safefile"
)

// Pin makes Launch run a private copy of an external plugin's executable
// instead of the file its path names: the file is opened once, copied
// (and hashed on the way) to where no one can change it, and the copy is
// what runs — on Linux a sealed memfd (memfd_create, then F_SEAL_WRITE,
// F_SEAL_SHRINK, F_SEAL_GROW: its content can no longer change) passed to
// the process and run as /proc/self/fd/N, elsewhere a copy in the
// plugin's private directory. The hash is of exactly what runs, so a file
// swapped or rewritten between a check and the exec (go-plugin's
// SecureConfig checked the path and then ran the path) can no longer run
// unpinned.
type Pin struct {
	// Want, if set, is the SHA-256 the executable must have (a lock
	// file's pin): another is refused before it runs (ErrChecksum).
	Want []byte
	// Got is set by Launch to the SHA-256 of what it ran (or refused).
	Got []byte
}

// ErrChecksum is the error Launch returns (wrapped) when the executable's
// SHA-256 is not the one its Pin wants: nothing was run.
var ErrChecksum = fmt.Errorf("the executable's SHA-256 is not the pinned one")

// maxExecutable bounds a plugin executable Launch copies.
const maxExecutable = 4 << 30

// pinExecutable replaces cmd's executable by a private copy (see Pin) and
// records its hash in pin; dir is the plugin's private directory (used
// where there is no memfd). release is called once the process has
// started (or failed to). exe is the path to name the plugin by in
// messages: the original.
func pinExecutable(cmd *exec.Cmd, dir string, pin *Pin) (release func(), err error) {
	src, size, err := safefile.Open(cmd.Path, maxExecutable)
	if err != nil {
		return nil, fmt.Errorf("plugin executable: %w", err)
	}
	defer src.Close()
	h := sha256.New()
	path, release, err := privateCopy(cmd, io.TeeReader(src, h), size, dir)
	if err != nil {
		return nil, fmt.Errorf("copying the plugin executable %s to a private file: %w", cmd.Path, err)
	}
	pin.Got = h.Sum(nil)
	if pin.Want != nil && !bytes.Equal(pin.Got, pin.Want) {
		release()
		return nil, fmt.Errorf("%s: SHA-256 %s, pinned %s: %w", cmd.Path, hex.EncodeToString(pin.Got), hex.EncodeToString(pin.Want), ErrChecksum)
	}
	cmd.Path = path
	return release, nil
}

// copyToDir is privateCopy where there is no memfd: the executable is
// copied into the plugin's private directory dir (mode 0700, this user's),
// mode 0500, and run from there; the copy goes with the directory.
func copyToDir(r io.Reader, dir, name string) (string, error) {
	if dir == "" {
		return "", fmt.Errorf("no private directory")
	}
	path := filepath.Join(dir, "exe-"+filepath.Base(name))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o700)
	if err != nil {
		return "", err
	}
	_, err = io.Copy(f, r)
	if err == nil {
		err = f.Chmod(0o500)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return "", err
	}
	return path, nil
}
