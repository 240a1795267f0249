//go:build unix

package wire

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestBlobFileRoundTrip(t *testing.T) {
	dir := t.TempDir()
	blob := bytes.Repeat([]byte("tcforge"), 100_000)
	// Read, then mapped (the budget takes one blob), then read again
	// (the budget is spent); the mapping holds until Release.
	m := NewMapped(int64(len(blob)) + 10)
	for i, mapped := range []*Mapped{nil, m, m} {
		// Written in parts, as a flat circuit is: the file is their
		// concatenation and its checksum theirs.
		ref, err := writeBlobFile(dir, [][]byte{blob[:5], blob[5:70_000], {}, blob[70_000:]})
		if err != nil {
			t.Fatal(err)
		}
		got, err := readBlobFile(context.Background(), dir, ref, uint64(len(blob)), mapped)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, blob) {
			t.Fatalf("#%d: blob changed on the way", i)
		}
		if _, err := os.Stat(filepath.Join(dir, ref.name)); !os.IsNotExist(err) {
			t.Errorf("#%d: the reader left the file behind: %v", i, err)
		}
		if i == 1 {
			got[0] = 'T' // the mapping is private and writable
			if n := m.Mapped(); n != int64(len(blob)) {
				t.Errorf("mapped %d bytes, want the blob's %d", n, len(blob))
			}
		}
	}
	if n := m.Mapped(); n > int64(len(blob)) {
		t.Errorf("mapped %d bytes in all, over the budget", n)
	}
	m.Release()
	if n := m.Mapped(); n != int64(len(blob)) {
		t.Errorf("after Release: %d bytes counted, want %d (the budget is spent for good)", n, len(blob))
	}
	// A mapped blob whose checksum is wrong is refused and unmapped.
	m = NewMapped(1 << 30)
	ref, err := writeBlobFile(dir, [][]byte{blob})
	if err != nil {
		t.Fatal(err)
	}
	ref.crc++
	if _, err := readBlobFile(context.Background(), dir, ref, uint64(len(blob)), m); err == nil || !strings.Contains(err.Error(), "CRC-32C") {
		t.Errorf("a mapped blob with a wrong checksum: %v, want a CRC error", err)
	}
	if n := m.Mapped(); n != 0 {
		t.Errorf("the refused blob is still mapped: %d bytes", n)
	}
	ref, err = writeBlobFile(dir, [][]byte{blob[:5], blob[5:70_000], {}, blob[70_000:]})
	if err != nil {
		t.Fatal(err)
	}
	// The reference survives its metadata encoding.
	back, ok, err := blobRefFrom(ref.md())
	if err != nil || !ok || back != ref {
		t.Errorf("metadata round trip: %+v %v %v, want %+v", back, ok, err, ref)
	}
}

func TestBlobFileRejects(t *testing.T) {
	dir := t.TempDir()
	blob := []byte(strings.Repeat("x", 1000))
	for _, tc := range []struct {
		name string
		mod  func(ref *blobRef, size *uint64)
		want string
	}{
		{"size", func(_ *blobRef, size *uint64) { *size++ }, "1000 bytes, 1001 announced"},
		{"checksum", func(ref *blobRef, _ *uint64) { ref.crc ^= 1 }, "CRC-32C"},
		{"name", func(ref *blobRef, _ *uint64) { ref.name = "../" + ref.name }, "bad blob file name"},
		{"foreign", func(ref *blobRef, _ *uint64) { ref.name = "passwd" }, "bad blob file name"},
		{"missing", func(ref *blobRef, _ *uint64) { ref.name = blobFilePrefix + "none" }, "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ref, err := writeBlobFile(dir, [][]byte{blob})
			if err != nil {
				t.Fatal(err)
			}
			size := uint64(len(blob))
			tc.mod(&ref, &size)
			if _, err := readBlobFile(context.Background(), dir, ref, size, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	t.Run("link", func(t *testing.T) {
		target := filepath.Join(t.TempDir(), "secret")
		if err := os.WriteFile(target, blob, 0o600); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(dir, blobFilePrefix+"link")
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		if _, err := readBlobFile(context.Background(), dir, blobRef{name: blobFilePrefix + "link"}, uint64(len(blob)), nil); err == nil {
			t.Error("a symbolic link was followed")
		}
	})
	t.Run("no directory", func(t *testing.T) {
		if _, err := readBlobFile(context.Background(), "", blobRef{name: blobFilePrefix + "x"}, 1, nil); err == nil {
			t.Error("a blob file was read without a blob directory")
		}
	})
}

func TestCheckBlobDir(t *testing.T) {
	private := t.TempDir()
	if err := os.Chmod(private, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := checkBlobDir(private); err != nil {
		t.Errorf("private directory refused: %v", err)
	}
	open := t.TempDir()
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(private, "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "l")
	if err := os.Symlink(private, link); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", "relative", open, file, link, filepath.Join(private, "missing")} {
		if err := checkBlobDir(bad); err == nil {
			t.Errorf("checkBlobDir(%q) accepted it", bad)
		}
	}
}

// TestSweepBlobDirs checks that the blob directories of hosts that are
// gone (a host killed with SIGKILL cannot remove its own) are removed, with
// the files a killed transfer left, and that nothing else is touched.
func TestSweepBlobDirs(t *testing.T) {
	tmp := t.TempDir()
	// A process that has exited: its ID names a dead host.
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := strconv.Itoa(cmd.Process.Pid)
	mk := func(name string, perm os.FileMode) string {
		dir := filepath.Join(tmp, name)
		if err := os.Mkdir(dir, perm); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	gone := mk(blobDirPrefix+dead+"-123", 0o700)
	if err := os.WriteFile(filepath.Join(gone, blobFilePrefix+"1"), []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	keep := []string{
		mk(blobDirPrefix+strconv.Itoa(os.Getpid())+"-1", 0o700),  // this host
		mk(blobDirPrefix+strconv.Itoa(os.Getppid())+"-2", 0o700), // a live host
		mk(blobDirPrefix+"abc", 0o700),                           // no process ID
		mk(blobDirPrefix+dead+"-9", 0o755),                       // not private: not ours to judge
		mk("other-"+dead+"-1", 0o700),                            // not a blob directory
	}
	sweepBlobDirs(tmp)
	if _, err := os.Stat(gone); !os.IsNotExist(err) {
		t.Errorf("the dead host's directory %s survived: %v", gone, err)
	}
	for _, dir := range keep {
		if _, err := os.Stat(dir); err != nil {
			t.Errorf("%s was removed: %v", dir, err)
		}
	}
}
