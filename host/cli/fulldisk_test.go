package cli_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestFullDisk: --out on a 64 KiB file system that fills up during the
// run (a real tmpfs, mounted in a private mount namespace for the host
// process) ends the run at the failed write: exit 1, one "Error:" line
// naming the file and "no space left on device", the manifest "failed:
// …" with the pipeline whose files failed, the later pipelines "not
// run", and no partial or temporary file. Before, the exit status was 2
// and the manifest stayed at "running".
func TestFullDisk(t *testing.T) {
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("needs unshare(1) to mount a small tmpfs")
	}
	if err := exec.Command("unshare", "-rm", "true").Run(); err != nil {
		if err := exec.Command("unshare", "-m", "true").Run(); err != nil {
			t.Skipf("cannot make a mount namespace here: %v", err)
		}
	}
	dir := t.TempDir()
	cfg := writeFile(t, dir, "p.hcl", smallPipeline("first", "reifier")+smallPipeline("second", "reifier")+smallPipeline("third", "reifier"))
	disk := filepath.Join(dir, "disk")
	kept := filepath.Join(dir, "kept") // the tmpfs's files, copied out before it goes
	code, stderr := onTinyDisk(t, disk, kept, "run", "--log-level", "error", "--progress", "never", "--out", filepath.Join(disk, "o"), cfg)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, stderr.String())
	}
	if lines := strings.Split(strings.TrimSpace(stderr.String()), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "Error: ") || !strings.Contains(lines[0], "no space left on device") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
	out := filepath.Join(kept, "o")
	var m manifest
	readJSON(t, filepath.Join(out, "tcforge-run.json"), &m)
	if !strings.HasPrefix(m.Status, "failed: ") || !strings.Contains(m.Status, "no space left on device") {
		t.Errorf("manifest status %q", m.Status)
	}
	failed := -1
	for i, p := range m.Pipelines {
		if p.Status == "files failed" {
			failed = i
		}
	}
	if failed < 0 {
		t.Fatalf("no pipeline's files failed: %+v", m.Pipelines)
	}
	for _, p := range m.Pipelines[failed+1:] {
		if p.Status != "not run" {
			t.Errorf("pipeline %s after the failed write: %q", p.Name, p.Status)
		}
	}
	// Every file there is whole: no temporary files, every listed file
	// present, every CSV with its header and rows.
	filepath.Walk(out, func(path string, fi os.FileInfo, err error) error {
		if err == nil && strings.Contains(fi.Name(), ".tmp-") {
			t.Errorf("temporary file left: %s", path)
		}
		return nil
	})
	for _, f := range m.Files {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("the manifest lists %s: %v", f, err)
		}
	}
	csvs, _ := filepath.Glob(filepath.Join(out, "*.csv"))
	for _, c := range csvs {
		b, _ := os.ReadFile(c)
		if lines := strings.Count(string(b), "\n"); lines != 3 {
			t.Errorf("%s: %d lines, want a header and 2 rows", c, lines)
		}
	}
	t.Logf("manifest: %s; pipelines %+v", m.Status, m.Pipelines)
}

// onTinyDisk runs the test binary as tcforge with args, in a private mount
// namespace where disk is a 64 KiB tmpfs, and copies disk's files to kept
// before the namespace, and the tmpfs, go. It skips the test where no
// tmpfs can be mounted.
func onTinyDisk(t *testing.T, disk, kept string, args ...string) (int, *bytes.Buffer) {
	t.Helper()
	if err := os.Mkdir(disk, 0o755); err != nil {
		t.Fatal(err)
	}
	script := `mount -t tmpfs -o size=64k tmpfs "$1" || exit 99; d=$1; k=$2; shift 2; "$@"; rc=$?; cp -a "$d" "$k"; exit $rc`
	uargs := append([]string{"-m", "sh", "-c", script, "sh", disk, kept, os.Args[0]}, args...)
	if os.Geteuid() != 0 {
		uargs = append([]string{"-r"}, uargs...)
	}
	cmd := exec.Command("unshare", uargs...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Run()
	code := cmd.ProcessState.ExitCode()
	if code == 99 {
		t.Skipf("cannot mount a tmpfs here: %s", stderr.String())
	}
	return code, &stderr
}

// TestBristolFullDisk: inspect --bristol on a disk too small for the
// netlist (SHA3-256's, about 10 MB, on 64 KiB) fails without leaving a
// partial file; before, it left the first 64 KiB of the netlist.
func TestBristolFullDisk(t *testing.T) {
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("needs unshare(1) to mount a small tmpfs")
	}
	dir := t.TempDir()
	cfg := writeFile(t, dir, "one.hcl", "pipeline \"one\" {\n  construction \"keccak\" {\n    preset = \"sha3-256\"\n  }\n  layerer \"reifier\" {}\n}\n")
	disk, kept := filepath.Join(dir, "disk"), filepath.Join(dir, "kept")
	code, stderr := onTinyDisk(t, disk, kept, "inspect", "--log-level", "error", "--bristol", filepath.Join(disk, "n.txt"), cfg)
	if code == 0 || !strings.Contains(stderr.String(), "no space left on device") {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	ents, _ := os.ReadDir(kept)
	if len(ents) != 0 {
		t.Errorf("left on the full disk: %v", ents)
	}
}
