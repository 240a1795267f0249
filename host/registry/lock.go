package registry

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"

	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"

	"github.com/tcforge/tcforge/internal/safefile"
)

// LockFile is the default name of the plugin lock file, in the spirit of
// Terraform's .terraform.lock.hcl: it pins each external plugin to the
// SHA-256 of its executable.
const LockFile = ".tcforge.lock.hcl"

// Lock pins external plugins by name to their executables' SHA-256.
type Lock struct {
	Path    string            // the file it was read from or will be written to
	Plugins map[string]string // name -> lowercase hex SHA-256
}

type lockFileSchema struct {
	Plugins []struct {
		Name   string `hcl:"name,label"`
		SHA256 string `hcl:"sha256"`
		Path   string `hcl:"path,optional"`
	} `hcl:"plugin,block"`
}

// maxLockFile bounds a lock file (a pin is about 150 bytes).
const maxLockFile = 16 << 20

// ReadLock reads a lock file: a regular file of at most 16 MiB (a FIFO or
// a device named by --lock is refused, not waited on or read without end). A missing file is not an error: it returns
// (nil, nil), and plugins run unpinned.
func ReadLock(path string) (*Lock, error) {
	src, err := safefile.ReadFile(path, maxLockFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the plugin lock file: %w", err)
	}
	f, diags := hclparse.NewParser().ParseHCL(src, path)
	if diags.HasErrors() {
		return nil, fmt.Errorf("plugin lock file: %w", diags)
	}
	var s lockFileSchema
	if diags := gohcl.DecodeBody(f.Body, nil, &s); diags.HasErrors() {
		return nil, fmt.Errorf("plugin lock file: %w", diags)
	}
	l := &Lock{Path: path, Plugins: map[string]string{}}
	for _, p := range s.Plugins {
		if _, dup := l.Plugins[p.Name]; dup {
			return nil, fmt.Errorf("plugin lock file %s: plugin %q is pinned twice", path, p.Name)
		}
		if b, err := hex.DecodeString(p.SHA256); err != nil || len(b) != sha256.Size {
			return nil, fmt.Errorf("plugin lock file %s: plugin %q: sha256 must be 64 hex digits, got %q", path, p.Name, p.SHA256)
		}
		l.Plugins[p.Name] = p.SHA256
	}
	return l, nil
}

// WriteLock writes the lock file pinning plugins (name -> executable path)
// to the SHA-256 of their executables now.
func WriteLock(path string, plugins map[string]string) (*Lock, error) {
	names := make([]string, 0, len(plugins))
	for n := range plugins {
		names = append(names, n)
	}
	slices.Sort(names)
	f := hclwrite.NewEmptyFile()
	body := f.Body()
	l := &Lock{Path: path, Plugins: map[string]string{}}
	for _, n := range names {
		sum, err := FileSHA256(plugins[n])
		if err != nil {
			return nil, err
		}
		l.Plugins[n] = sum
		b := body.AppendNewBlock("plugin", []string{n}).Body()
		b.SetAttributeValue("path", cty.StringVal(plugins[n]))
		b.SetAttributeValue("sha256", cty.StringVal(sum))
	}
	out := append([]byte("# Pins external tcforge plugins to their executables' SHA-256.\n# Written by \"tcforge plugins lock\"; a mismatch refuses to run the plugin.\n\n"), f.Bytes()...)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		return nil, fmt.Errorf("writing the plugin lock file: %w", err)
	}
	return l, nil
}

// FileSHA256 returns the lowercase hex SHA-256 of a file's contents.
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("hashing plugin executable: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hashing plugin executable %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// pinned returns the SHA-256 the lock pins external plugin name to (nil
// without a lock), or why it may not run.
func (l *Lock) pinned(name, path string) ([]byte, error) {
	if l == nil {
		return nil, nil
	}
	want, ok := l.Plugins[name]
	if !ok {
		return nil, fmt.Errorf("external plugin %q (%s) is not pinned in %s; check it, then run \"tcforge plugins lock\"", name, path, l.Path)
	}
	sum, err := hex.DecodeString(want)
	if err != nil || len(sum) != sha256.Size {
		return nil, fmt.Errorf("%s: plugin %q: bad sha256 %q", l.Path, name, want)
	}
	return sum, nil
}

// mismatch explains a pinned plugin whose executable, as the host copied
// it to run it, has SHA-256 got.
func (l *Lock) mismatch(name, path, got string) error {
	return fmt.Errorf("external plugin %q (%s) has SHA-256 %s, but %s pins %s; refusing to run it (if the change is intended, run \"tcforge plugins lock\")", name, path, got, l.Path, l.Plugins[name])
}
