package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// outLockFile is the lock file a run holds in its --out directory.
const outLockFile = ".tcforge-run.lock"

// errLocked is what tryLock returns for a lock another process holds.
var errLocked = errors.New("locked")

// lockOut takes the lock of the --out directory dir for the rest of the
// process's life (the kernel releases it when the process ends, SIGKILL
// included), or says which run holds it: two runs into one directory
// each overwrote the other's files and manifest.
func lockOut(dir string) (*os.File, error) {
	path := filepath.Join(dir, outLockFile)
	f, err := openLock(path)
	if err != nil {
		return nil, fmt.Errorf("--out %s: the run lock: %w", dir, err)
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		// Its holder's pid is written into it: never through a link, nor
		// into a FIFO or a device planted there.
		f.Close()
		return nil, fmt.Errorf("--out %s: the run lock %s is not a regular file; remove it", dir, path)
	}
	if err := tryLock(f); err != nil {
		holder := make([]byte, 64)
		n, _ := f.ReadAt(holder, 0)
		holder = holder[:n]
		f.Close()
		if errors.Is(err, errLocked) {
			who := strings.TrimSpace(string(holder))
			if who == "" {
				who = "another process"
			}
			return nil, fmt.Errorf("--out %s is in use by another tcforge run (%s); wait for it to end or choose another directory", dir, who)
		}
		return nil, fmt.Errorf("--out %s: the run lock: %w", dir, err)
	}
	if err := f.Truncate(0); err == nil {
		fmt.Fprintf(f, "pid %d", os.Getpid())
	}
	return f, nil
}
