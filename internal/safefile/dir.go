package safefile

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// randomSuffix names a temporary file.
func randomSuffix() string { return strconv.FormatUint(rand.Uint64(), 36) }

// File is a file being written atomically into a Dir (Dir.Create): it
// takes its name when Commit renames it there, whole; until then, and if
// it is aborted, the name keeps what it held.
type File struct {
	*os.File
	d        *Dir
	parent   handle // the directory it is written in
	tmp      string // its temporary name there ("": it has none yet, see createTemp)
	name     string // the name it takes
	path     string // for errors
	finished bool
}

// Name returns the path the file will have, for messages.
func (f *File) Name() string { return f.path }

// Commit makes the file readable by everyone (mode 0644), closes it and
// renames it over its name: whatever was there (a file, a symbolic link)
// is replaced, never written through.
func (f *File) Commit() error {
	if f.finished {
		return fmt.Errorf("%s: already committed or aborted", f.path)
	}
	f.finished = true
	err := f.File.Chmod(0o644)
	if err == nil && f.tmp == "" {
		// An unnamed file gets a name only now, and for an instant.
		f.tmp = tempName(f.name)
		if err = f.d.link(f.parent, f.File, f.tmp); err != nil {
			f.tmp = ""
		}
	}
	if cerr := f.File.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = f.d.rename(f.parent, f.tmp, f.name)
	}
	if err != nil && f.tmp != "" {
		f.d.unlink(f.parent, f.tmp)
	}
	f.d.release(f.parent)
	if err != nil {
		return fmt.Errorf("writing %s: %w", f.path, err)
	}
	return nil
}

// Abort closes and removes the temporary file: the name keeps what it
// held. Abort after Commit does nothing, so `defer f.Abort()` is safe.
func (f *File) Abort() {
	if f.finished {
		return
	}
	f.finished = true
	f.File.Close()
	if f.tmp != "" {
		f.d.unlink(f.parent, f.tmp)
	}
	f.d.release(f.parent)
}

// Path returns the directory's path.
func (d *Dir) Path() string { return d.path }

// Create starts writing rel (a name below d, "plots/x.svg") atomically,
// creating the directories it lies in (mode 0755). No symbolic link below
// d is followed: a link in place of a directory on the way fails the
// write, one in place of the file is replaced by it.
func (d *Dir) Create(rel string) (*File, error) {
	dirs, base, err := split(rel)
	if err != nil {
		return nil, err
	}
	parent, err := d.sub(dirs, true)
	if err != nil {
		return nil, err
	}
	f, tmp, err := d.createTemp(parent, base)
	if err != nil {
		d.release(parent)
		return nil, fmt.Errorf("writing %s: %w", filepath.Join(d.path, rel), err)
	}
	return &File{File: f, d: d, parent: parent, tmp: tmp, name: base, path: filepath.Join(d.path, rel)}, nil
}

// WriteFile writes data to rel atomically (Create, Write, Commit).
func (d *Dir) WriteFile(rel string, data []byte) error {
	f, err := d.Create(rel)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", f.path, err)
	}
	return f.Commit()
}

// Remove removes the file rel below d if it is there: a regular file or a
// symbolic link (the link itself), never a directory, and never through a
// link on the way. It reports whether it removed something.
func (d *Dir) Remove(rel string) (bool, error) {
	dirs, base, err := split(rel)
	if err != nil {
		return false, err
	}
	parent, err := d.sub(dirs, false)
	if os.IsNotExist(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer d.release(parent)
	return d.removeIn(parent, base, filepath.Join(d.path, rel))
}

// ReadFile reads rel below d, a regular file of at most limit bytes
// (limit ≤ 0: any), following no link.
func (d *Dir) ReadFile(rel string, limit int64) ([]byte, error) {
	dirs, base, err := split(rel)
	if err != nil {
		return nil, err
	}
	parent, err := d.sub(dirs, false)
	if err != nil {
		return nil, err
	}
	defer d.release(parent)
	path := filepath.Join(d.path, rel)
	f, err := d.openIn(parent, base, path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size, err := checkOpened(f, path, limit)
	if err != nil {
		return nil, err
	}
	return readAll(f, path, size, limit)
}

// List returns the names in the directory rel below d ("" or "." for d
// itself), reached without following links; a missing directory has
// none.
func (d *Dir) List(rel string) ([]string, error) {
	var dirs []string
	if rel != "" && rel != "." {
		ds, base, err := split(rel)
		if err != nil {
			return nil, err
		}
		dirs = append(ds, base)
	}
	h, err := d.sub(dirs, false)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer d.release(h)
	return d.names(h)
}
