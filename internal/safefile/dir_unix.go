//go:build unix

package safefile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Dir is a directory whose files are created, read and removed relative
// to a descriptor of it, each component below it opened with O_NOFOLLOW
// (openat-style): nothing planted in it redirects an operation out of it.
type Dir struct {
	path string
	fd   int
}

// handle is an open directory below a Dir (its own descriptor, or the
// Dir's).
type handle = int

// openNonblock opens path for reading without waiting for a FIFO's writer.
func openNonblock(path string) (*os.File, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// OpenDir opens the directory path (a link naming it is followed: the
// user chose it), creating it first if create. Close it when done.
func OpenDir(path string, create bool) (*Dir, error) {
	if create {
		if err := os.MkdirAll(path, 0o755); err != nil {
			return nil, err
		}
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return &Dir{path: path, fd: fd}, nil
}

// Close closes the directory.
func (d *Dir) Close() error { return unix.Close(d.fd) }

// sub opens the directories dirs below d, one component at a time without
// following links, creating missing ones if create. release it.
func (d *Dir) sub(dirs []string, create bool) (handle, error) {
	fd := d.fd
	for i, c := range dirs {
		const flags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
		nfd, err := unix.Openat(fd, c, flags, 0)
		if errors.Is(err, unix.ENOENT) && create {
			if err = unix.Mkdirat(fd, c, 0o755); err == nil || errors.Is(err, unix.EEXIST) {
				nfd, err = unix.Openat(fd, c, flags, 0)
			}
		}
		if fd != d.fd {
			unix.Close(fd)
		}
		if err != nil {
			p := filepath.Join(d.path, filepath.Join(dirs[:i+1]...))
			if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
				return -1, fmt.Errorf("%s is %w", p, ErrNotFollowed)
			}
			return -1, &fs.PathError{Op: "open", Path: p, Err: err}
		}
		fd = nfd
	}
	return fd, nil
}

// release closes a handle sub returned.
func (d *Dir) release(h handle) {
	if h != d.fd && h >= 0 {
		unix.Close(h)
	}
}

// createTemp creates a file in h to become base, for writing: an unnamed
// one where the system has them (openUnnamed: a process killed while it
// writes leaves nothing), else a new temporary name beside base,
// exclusively. It returns the file and its name ("" for none).
func (d *Dir) createTemp(h handle, base string) (*os.File, string, error) {
	if f, ok := openUnnamed(h); ok {
		return f, "", nil
	}
	name := tempName(base)
	fd, err := unix.Openat(h, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, "", err
	}
	return os.NewFile(uintptr(fd), name), name, nil
}

// rename renames from to to within h.
func (d *Dir) rename(h handle, from, to string) error { return unix.Renameat(h, from, h, to) }

// unlink removes name from h, whatever it is but a directory.
func (d *Dir) unlink(h handle, name string) { _ = unix.Unlinkat(h, name, 0) }

// removeIn removes base from h if it is a file or a link (path names it
// in errors).
func (d *Dir) removeIn(h handle, base, path string) (bool, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(h, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return false, nil
		}
		return false, &fs.PathError{Op: "remove", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		return false, fmt.Errorf("%s is a directory: not removed", path)
	}
	if err := unix.Unlinkat(h, base, 0); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return false, nil
		}
		return false, &fs.PathError{Op: "remove", Path: path, Err: err}
	}
	return true, nil
}

// openIn opens base in h for reading, following no link and waiting for no
// FIFO writer.
func (d *Dir) openIn(h handle, base, path string) (*os.File, error) {
	fd, err := unix.Openat(h, base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ELOOP) {
		return nil, &NotRegularError{Path: path, What: what(fs.ModeSymlink)}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// names lists h.
func (d *Dir) names(h handle) ([]string, error) {
	fd, err := unix.Dup(h)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), d.path)
	defer f.Close()
	return f.Readdirnames(-1)
}
