//go:build !unix

package safefile

import (
	"io/fs"
	"os"
	"path/filepath"
)

// Dir is a directory whose files are created, read and removed through an
// os.Root: here (no openat with O_NOFOLLOW) a link below it is followed
// only as far as it stays inside it.
type Dir struct {
	path string
	root *os.Root
}

// handle is the directory below a Dir an operation works in: its path
// relative to the Dir.
type handle = string

// openNonblock opens path for reading (no FIFO to wait for here).
func openNonblock(path string) (*os.File, error) { return os.Open(path) }

// OpenDir opens the directory path, creating it first if create.
func OpenDir(path string, create bool) (*Dir, error) {
	if create {
		if err := os.MkdirAll(path, 0o755); err != nil {
			return nil, err
		}
	}
	r, err := os.OpenRoot(path)
	if err != nil {
		return nil, err
	}
	return &Dir{path: path, root: r}, nil
}

// Close closes the directory.
func (d *Dir) Close() error { return d.root.Close() }

func (d *Dir) sub(dirs []string, create bool) (handle, error) {
	rel := filepath.Join(dirs...)
	if rel == "" {
		return ".", nil
	}
	if create {
		if err := d.root.MkdirAll(rel, 0o755); err != nil {
			return "", err
		}
	}
	fi, err := d.root.Stat(rel)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", &fs.PathError{Op: "open", Path: filepath.Join(d.path, rel), Err: fs.ErrInvalid}
	}
	return rel, nil
}

func (d *Dir) release(handle) {}

func (d *Dir) createTemp(h handle, base string) (*os.File, string, error) {
	name := tempName(base)
	f, err := d.root.OpenFile(filepath.Join(h, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	return f, name, err
}

// link never runs here: every temporary file has a name.
func (d *Dir) link(handle, *os.File, string) error { return os.ErrInvalid }

func (d *Dir) rename(h handle, from, to string) error {
	return d.root.Rename(filepath.Join(h, from), filepath.Join(h, to))
}

func (d *Dir) unlink(h handle, name string) { _ = d.root.Remove(filepath.Join(h, name)) }

func (d *Dir) removeIn(h handle, base, path string) (bool, error) {
	rel := filepath.Join(h, base)
	fi, err := d.root.Lstat(rel)
	if os.IsNotExist(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if fi.IsDir() {
		return false, &fs.PathError{Op: "remove", Path: path, Err: fs.ErrInvalid}
	}
	if err := d.root.Remove(rel); err != nil {
		if os.IsNotExist(err) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

func (d *Dir) openIn(h handle, base, path string) (*os.File, error) {
	return d.root.Open(filepath.Join(h, base))
}

func (d *Dir) names(h handle) ([]string, error) {
	f, err := d.root.Open(h)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}
