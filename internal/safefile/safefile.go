// Package safefile opens the files the host reads and writes so that
// what is found in their place cannot hang, exhaust or redirect it: an
// input is opened without waiting (a FIFO), checked on the opened
// descriptor to be a regular file, and read only up to a size bound; an
// output directory's files are written atomically (a temporary file
// renamed over the name), read and removed without following a symbolic
// link anywhere below the directory itself, so that a link planted there
// can neither redirect a write nor a removal out of it.
package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// TempInfix marks the temporary files of atomic writes:
// ".<name>.tmp-<random>" beside the file they become.
const TempInfix = ".tmp-"

// ErrNotFollowed is the error (wrapped) of an operation below a Dir that
// met a symbolic link, or a file, where a directory was to be: it is not
// followed.
var ErrNotFollowed = errors.New("a symbolic link or not a directory: not followed")

// NotRegularError reports an input that is not a regular file: a named
// pipe (which would wait for a writer), a device (/dev/zero never ends),
// a directory or a socket.
type NotRegularError struct {
	Path string
	What string // "a named pipe (FIFO), not a regular file", …
}

// Error implements error.
func (e *NotRegularError) Error() string { return e.Path + " is " + e.What }

// TooLargeError reports an input over its size bound.
type TooLargeError struct {
	Path        string
	Size, Limit int64
}

// Error implements error.
func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s holds %d bytes, over the limit of %d for this file", e.Path, e.Size, e.Limit)
}

// what describes a file mode that is not a regular file.
func what(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO), not a regular file"
	case m.IsDir():
		return "a directory, not a file"
	case m&fs.ModeDevice != 0:
		return "a device, not a regular file"
	case m&fs.ModeSocket != 0:
		return "a socket, not a regular file"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link (not followed here)"
	}
	return "not a regular file"
}

// checkOpened checks an opened file: a regular file of at most limit
// bytes (limit ≤ 0: any size). It returns the size.
func checkOpened(f *os.File, path string, limit int64) (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	if !fi.Mode().IsRegular() {
		return 0, &NotRegularError{Path: path, What: what(fi.Mode())}
	}
	if limit > 0 && fi.Size() > limit {
		return 0, &TooLargeError{Path: path, Size: fi.Size(), Limit: limit}
	}
	return fi.Size(), nil
}

// Open opens path for reading as a regular file of at most limit bytes
// (limit ≤ 0: any size): it does not wait on a FIFO, and checks the
// descriptor it opened, not the name, so nothing can be swapped in
// between. A link named by path is followed (the user named it). It
// returns the file and its size.
func Open(path string, limit int64) (*os.File, int64, error) {
	f, err := openNonblock(path)
	if err != nil {
		return nil, 0, err
	}
	size, err := checkOpened(f, path, limit)
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, size, nil
}

// ReadFile reads path whole as Open opens it: a regular file of at most
// limit bytes. A file that grows while it is read is cut at limit and
// refused.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, size, err := Open(path, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAll(f, path, size, limit)
}

// readAll reads f (size bytes when it was checked) up to limit bytes.
func readAll(f *os.File, path string, size, limit int64) ([]byte, error) {
	var r io.Reader = f
	if limit > 0 {
		r = io.LimitReader(f, limit+1)
	}
	buf := make([]byte, 0, size+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", path, err)
		}
	}
	if limit > 0 && int64(len(buf)) > limit {
		return nil, &TooLargeError{Path: path, Size: int64(len(buf)), Limit: limit}
	}
	return buf, nil
}

// split cleans rel, a slash- or separator-separated path below a
// directory, and returns its directory components and its base name. An
// absolute path, one that climbs out (".."), or an empty one is refused.
func split(rel string) ([]string, string, error) {
	clean := filepath.Clean(filepath.FromSlash(rel))
	if rel == "" || filepath.IsAbs(clean) || clean == "." || clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return nil, "", fmt.Errorf("%q is not a file name inside the directory", rel)
	}
	parts := strings.Split(clean, string(filepath.Separator))
	return parts[:len(parts)-1], parts[len(parts)-1], nil
}

// tempName returns a fresh temporary name beside base.
func tempName(base string) string {
	return "." + base + TempInfix + randomSuffix()
}

// IsTemp reports whether name (a base name) is an atomic write's
// temporary file, and returns the name of the file it was to become.
func IsTemp(name string) (string, bool) {
	i := strings.LastIndex(name, TempInfix)
	if i <= 1 || name[0] != '.' {
		return "", false
	}
	return name[1:i], true
}
