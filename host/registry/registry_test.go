package registry_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/tcforge/tcforge/host/registry"
	"github.com/tcforge/tcforge/sdk"
)

// TestOpenInProcess: bundled plugins are found by name, external ones on
// the plugin path (overriding a bundled one), unknown names are a
// *NotFoundError listing what there is, and an invalid declaration is
// refused (sdk.Validate) before it can be called.
func TestOpenInProcess(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"tcforge-plugin-ext", "tcforge-plugin-toy", "not-a-plugin"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bad := toyPlugin()
	bad.Name = "bad"
	bad.Prepare = nil
	reg := registry.New(registry.Options{
		Builtins:  map[string]sdk.Plugin{"toy": toyPlugin(), "bad": bad},
		Dirs:      []string{dir},
		InProcess: true,
		Log:       zerolog.Nop(),
	})
	defer reg.Close()
	if got, want := reg.Names(), []string{"bad", "ext", "toy"}; !slices.Equal(got, want) {
		t.Errorf("Names() = %v, want %v", got, want)
	}
	if src, ok := reg.Lookup("toy"); !ok || src.Bundled || src.Path != filepath.Join(dir, "tcforge-plugin-toy") {
		t.Errorf("Lookup(toy) = %+v, %v; want the external executable, which overrides the bundled plugin", src, ok)
	}
	if src, ok := reg.Lookup("bad"); !ok || !src.Bundled {
		t.Errorf("Lookup(bad) = %+v, %v; want bundled", src, ok)
	}
	_, _, err := reg.Open(context.Background(), "nosuch")
	var nf *registry.NotFoundError
	if !errors.As(err, &nf) || !slices.Equal(nf.Bundled, []string{"bad", "toy"}) || nf.SearchPath != dir {
		t.Errorf("Open(nosuch) = %v, want a NotFoundError listing bad, toy and %s", err, dir)
	}
	pl, src, err := reg.Open(context.Background(), "bad")
	if err == nil || pl != nil || !strings.Contains(err.Error(), "no Prepare") {
		t.Errorf("Open(bad) = %v, %v, want the declaration refused", pl, err)
	}
	if !src.InProcess {
		t.Errorf("Open(bad) source %+v, want in-process", src)
	}
	if got := reg.Externals(); len(got) != 2 || got["ext"] != filepath.Join(dir, "tcforge-plugin-ext") {
		t.Errorf("Externals() = %v", got)
	}
}

// TestLockRefusesUnpinned: with a lock file, an external plugin it does
// not pin is refused with the reason before anything is started.
func TestLockRefusesUnpinned(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "tcforge-plugin-ext")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(dir, "lock.hcl")
	if _, err := registry.WriteLock(lock, map[string]string{}); err != nil {
		t.Fatal(err)
	}
	reg := registry.New(registry.Options{Dirs: []string{dir}, LockPath: lock, Log: zerolog.Nop()})
	defer reg.Close()
	_, _, err := reg.Open(context.Background(), "ext")
	if err == nil || !strings.Contains(err.Error(), `external plugin "ext" (`+exe+`) is not pinned in `+lock) {
		t.Errorf("Open(ext) = %v, want it refused as not pinned", err)
	}
}

// TestGoMemLimit checks the GOMEMLIMIT a plugin process is started with
// under a memory bound: 7/8 of it, unless the environment sets one.
func TestGoMemLimit(t *testing.T) {
	for _, tt := range []struct {
		env   []string
		limit int64
		want  []string
	}{
		{[]string{"A=1"}, 8 << 30, []string{"A=1", "GOMEMLIMIT=7516192768"}},
		{[]string{"GOMEMLIMIT=1GiB", "A=1"}, 8 << 30, []string{"GOMEMLIMIT=1GiB", "A=1"}},
		{nil, 1 << 20, []string{"GOMEMLIMIT=917504"}},
	} {
		if got := registry.GoMemLimit(slices.Clone(tt.env), tt.limit); !slices.Equal(got, tt.want) {
			t.Errorf("GoMemLimit(%q, %d) = %q, want %q", tt.env, tt.limit, got, tt.want)
		}
	}
}
