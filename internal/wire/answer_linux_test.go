package wire

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestBlobFileFIFO: a FIFO in place of a blob file is refused at once
// (opened without waiting for a writer, checked on the opened file), not
// waited on past the call's timeout and the host's signals.
func TestBlobFileFIFO(t *testing.T) {
	dir := t.TempDir()
	name := blobFilePrefix + "fifo"
	if err := syscall.Mkfifo(filepath.Join(dir, name), 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := readBlobFile(context.Background(), dir, blobRef{name: name}, 1<<20, nil)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("a FIFO as blob file: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("readBlobFile waits on a FIFO")
	}
}

// TestReadBlobStops: reading a large blob file stops when the call's
// context ends, between two chunks.
func TestReadBlobStops(t *testing.T) {
	dir := t.TempDir()
	blob := make([]byte, readChunk+1)
	ref, err := writeBlobFile(dir, [][]byte{blob})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := readBlobFile(ctx, dir, ref, uint64(len(blob)), nil); err != context.Canceled {
		t.Errorf("a cancelled read: %v", err)
	}
}

// pluginWrites writes blob into the host's answer file a, as a plugin
// process does (a separate open of its /proc path).
func pluginWrites(t *testing.T, a *answerFile, blob []byte) uint32 {
	t.Helper()
	f, err := os.OpenFile(a.path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	crc, err := writeBlob(f, [][]byte{blob[:100], blob[100:]})
	if err != nil {
		t.Fatal(err)
	}
	return crc
}

// TestAnswerFileSealed: an answer the host maps cannot change under it.
// Once taken, the answer file is sealed: another process can neither
// truncate it (before, a mapped blob file truncated after its checksum
// check faulted the host with SIGBUS at the next read of a lost page)
// nor write into it (which changed arrays the decoder had checked). And
// an answer file another process holds a writable shared mapping of,
// which cannot be sealed, is read into fresh memory rather than mapped.
func TestAnswerFileSealed(t *testing.T) {
	blob := bytes.Repeat([]byte("tcforge!"), 1<<17) // 1 MiB
	m := NewMapped(1 << 30)
	defer m.Release()

	a := newAnswerFile()
	if a == nil {
		t.Skip("no memfd here")
	}
	defer a.close()
	crc := pluginWrites(t, a, blob)
	got, err := a.take(context.Background(), uint64(len(blob)), crc, m)
	if err != nil {
		t.Fatal(err)
	}
	if m.Mapped() != int64(len(blob)) {
		t.Fatalf("%d bytes mapped, want the answer's %d", m.Mapped(), len(blob))
	}
	for _, attack := range [][]string{
		{"truncate", "-s", "0", a.path},
		{"dd", "if=/dev/zero", "of=" + a.path, "bs=4096", "count=1", "conv=notrunc"},
		{"truncate", "-s", "+1M", a.path},
	} {
		if out, err := exec.Command(attack[0], attack[1:]...).CombinedOutput(); err == nil {
			t.Errorf("%s changed the sealed answer file: %s", strings.Join(attack, " "), out)
		}
	}
	if !bytes.Equal(got, blob) { // every page read: a truncation would fault here
		t.Error("the mapped answer changed")
	}

	// A writable shared mapping held elsewhere: not sealable, so read.
	b := newAnswerFile()
	defer b.close()
	crc = pluginWrites(t, b, blob)
	other, err := os.OpenFile(b.path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	shared, err := syscall.Mmap(int(other.Fd()), 0, len(blob), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(shared)
	before := m.Mapped()
	got, err = b.take(context.Background(), uint64(len(blob)), crc, m)
	if err != nil {
		t.Fatal(err)
	}
	if m.Mapped() != before {
		t.Error("an answer file that could not be sealed was mapped")
	}
	copy(shared, bytes.Repeat([]byte{0xff}, 4096))
	if !bytes.Equal(got, blob) {
		t.Error("the answer read from an unsealed file changed with it")
	}

	// A wrong checksum is refused, and the mapping dropped.
	c := newAnswerFile()
	defer c.close()
	crc = pluginWrites(t, c, blob)
	before = m.Mapped()
	if _, err := c.take(context.Background(), uint64(len(blob)), crc+1, m); err == nil || !strings.Contains(err.Error(), "CRC-32C") {
		t.Errorf("a wrong checksum: %v", err)
	}
	if m.Mapped() != before {
		t.Error("a refused answer stayed mapped")
	}
}
