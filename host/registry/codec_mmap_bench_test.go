//go:build linux

package registry_test

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tcforge/tcforge/sdk/layered"
)

// BenchmarkLayeredCodecMmapSHA3_256 is what the flat SHA3-256 layered
// circuit would cost at the boundary if the receiver mapped the blob file
// instead of reading it (the wire reads it today): the sender's CRC-32C
// and write as in BenchmarkLayeredCodecSHA3_256's flat/file, then the
// receiver's mapping of the file, CRC-32C over the mapping and DecodeView
// of it (views of the page cache: no fresh buffer, no copy).
func BenchmarkLayeredCodecMmapSHA3_256(b *testing.B) {
	lc := sha3Layered(b)
	dir := b.TempDir()
	b.Run("flat/mmap", func(b *testing.B) {
		for b.Loop() {
			g, n, crc := writeBlob(b, dir, lc.MarshalFlat())
			blob, err := syscall.Mmap(int(g.Fd()), 0, n, syscall.PROT_READ, syscall.MAP_PRIVATE)
			g.Close()
			if err != nil {
				b.Fatal(err)
			}
			if crc32.Checksum(blob, castagnoli) != crc {
				b.Fatal("checksum differs")
			}
			if _, err := layered.DecodeView(blob); err != nil {
				b.Fatal(err)
			}
			if err := syscall.Munmap(blob); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// receiveEnv, set to "read:PATH" or "mmap:PATH", makes TestReceiveChild
// receive the blob file PATH as a host process would.
const receiveEnv = "TCFORGE_TEST_RECEIVE"

// BenchmarkLayeredReceiveFresh is the receiving side of the SHA3-256
// layered circuit's trip in a fresh process, as a host has it: each
// iteration starts the test binary anew (TestReceiveChild), which takes
// the blob file, already written and in the page cache, and decodes it,
// and reports its time as ms/receive (ns/op is mostly the process start).
// packed/read and flat/read read the file into fresh memory (the wire
// today), flat/mmap maps it; each checks the CRC-32C and decodes
// (UnmarshalBinary of the packed blob: fresh arrays, expanded; DecodeView
// of the flat one: views). A benchmark in the test process itself reuses
// its heap from one iteration to the next and so misses the page faults
// of fresh memory, most of what the packed decode and the flat read cost
// in a host.
func BenchmarkLayeredReceiveFresh(b *testing.B) {
	lc := sha3Layered(b)
	dir := b.TempDir()
	packed, err := lc.MarshalBinary()
	if err != nil {
		b.Fatal(err)
	}
	files := map[string][]byte{"packed": packed, "flat": bytes.Join(lc.MarshalFlat(), nil)}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	for _, tc := range []struct{ name, mode, file string }{
		{"packed/read", "read", "packed"},
		{"flat/read", "read", "flat"},
		{"flat/mmap", "mmap", "flat"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var total time.Duration
			for b.Loop() {
				cmd := exec.Command(os.Args[0], "-test.run=^TestReceiveChild$")
				cmd.Env = append(os.Environ(), receiveEnv+"="+tc.mode+":"+filepath.Join(dir, tc.file))
				out, err := cmd.Output()
				if err != nil {
					b.Fatalf("%v: %s", err, out)
				}
				var ns int64
				if _, err := fmt.Sscanf(string(out), "receive-ns %d", &ns); err != nil {
					b.Fatalf("child said %q: %v", out, err)
				}
				total += time.Duration(ns)
			}
			b.ReportMetric(float64(total)/float64(time.Millisecond)/float64(b.N), "ms/receive")
		})
	}
}

// TestReceiveChild is BenchmarkLayeredReceiveFresh's child: it receives
// one blob file (receiveEnv) and prints the time it took.
func TestReceiveChild(t *testing.T) {
	spec := os.Getenv(receiveEnv)
	if spec == "" {
		t.Skip("run by BenchmarkLayeredReceiveFresh")
	}
	mode, path, _ := strings.Cut(spec, ":")
	start := time.Now()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	var blob []byte
	if mode == "mmap" {
		if blob, err = syscall.Mmap(int(f.Fd()), 0, int(fi.Size()), syscall.PROT_READ, syscall.MAP_PRIVATE); err != nil {
			t.Fatal(err)
		}
	} else {
		blob = make([]byte, fi.Size())
		if _, err := io.ReadFull(f, blob); err != nil {
			t.Fatal(err)
		}
	}
	crc32.Checksum(blob, castagnoli)
	if _, err := layered.DecodeView(blob); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("receive-ns %d\n", time.Since(start).Nanoseconds())
}
