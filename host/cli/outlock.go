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
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("--out %s: the run lock: %w", dir, err)
	}
	if err := tryLock(f); err != nil {
		holder, _ := os.ReadFile(path)
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
