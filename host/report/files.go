package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/tcforge/tcforge/host/config"
	"github.com/tcforge/tcforge/host/run"
)

// tempInfix marks WriteFileAtomic's temporary files: ".<name>.tmp-<random>".
const tempInfix = ".tmp-"

// WriteFileAtomic writes data to path atomically: into a temporary file in the
// same directory, renamed over path once complete. A reader never sees a
// partial file, and a write cut short leaves the old file or none.
func WriteFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+tempInfix+"*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// Missing returns the points of an incomplete result (res.Complete false)
// that have no rows: they did not run, or did not finish.
func Missing(res *run.Result) []config.Point {
	if res.Complete {
		return nil
	}
	have := map[int]bool{}
	for _, row := range res.Rows {
		have[row.Point.Index] = true
	}
	var out []config.Point
	for _, pt := range res.Pipeline.Points() {
		if !have[pt.Index] {
			out = append(out, pt)
		}
	}
	return out
}

// notRun is the error of a point that did not run: "not run: interrupted".
func notRun(res *run.Result) string {
	why := res.Stopped
	if why == "" {
		why = "the run stopped first"
	}
	return "not run: " + why
}

// incomplete describes an incomplete result in a sentence: "Incomplete
// (interrupted): 3 of 8 points finished".
func incomplete(res *run.Result) string {
	why := res.Stopped
	if why == "" {
		why = "stopped"
	}
	n := res.Pipeline.NumPoints()
	return fmt.Sprintf("Incomplete (%s): %d of %d points finished", why, n-int64(len(Missing(res))), n)
}

// ManifestFile is the run manifest in an output directory: which run
// wrote which files, and whether it finished. Files of the directory it
// does not list were left by an earlier run.
const ManifestFile = "tcforge-run.json"

// Manifest is the content of DIR/tcforge-run.json. It is written with
// Status "running" before the first pipeline runs and rewritten when the
// run ends, however it ends short of being killed.
type Manifest struct {
	Tool string `json:"tool"`
	// PID is the process ID of the run that wrote it.
	PID int `json:"pid,omitempty"`
	// Configs are the pipeline files of the run, as given.
	Configs []string  `json:"configs"`
	Started time.Time `json:"started"`
	// Finished is zero while the run is running.
	Finished time.Time `json:"finished,omitzero"`
	// Status is "running", "ok" (every row verified and as expected),
	// "failed" (some did not), "failed: <why>" (its files could not be
	// written) or "stopped: <why>" (interrupted, terminated, standard
	// output closed, the host's memory bound: finished points are
	// written). "running" in a directory whose lock no run holds is a run
	// that was killed (see Previous).
	Status    string             `json:"status"`
	Pipelines []ManifestPipeline `json:"pipelines"`
	// Files are every file the run wrote, relative to the directory.
	Files []string `json:"files"`
	// Previous says how the run before this one into the directory
	// ended when its manifest could not say it: "killed: …" for one that
	// still said "running" when this one took the directory's lock (it
	// was killed, or its machine stopped). Empty otherwise.
	Previous string `json:"previous,omitempty"`
	// HostPeakRSS is the host process's own peak resident memory in
	// bytes when the run ended (Linux's VmHWM; 0 where unknown), and
	// HostMemoryLimit the bound it held itself to (--memory).
	HostPeakRSS     int64 `json:"host_peak_rss,omitempty"`
	HostMemoryLimit int64 `json:"host_memory_limit,omitempty"`
}

// ManifestPipeline is one pipeline of a run: its status ("running",
// "ok", "failed", "incomplete", "not run") and rows.
type ManifestPipeline struct {
	Name   string   `json:"name"`
	Status string   `json:"status"`
	Rows   int      `json:"rows"`
	Files  []string `json:"files,omitempty"`
}

// WriteManifest writes m to DIR/tcforge-run.json atomically. On a full
// disk, where the temporary file finds no room, it overwrites the
// manifest in place if the new one fits the blocks the old one holds
// (a full disk must not leave the manifest saying "running").
func WriteManifest(dir string, m *Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	path := filepath.Join(dir, ManifestFile)
	err = WriteFileAtomic(path, b)
	if err == nil || !errors.Is(err, syscall.ENOSPC) {
		return err
	}
	return overwrite(path, b, err)
}

// overwrite writes b over path in place when b fits in the 4 KiB blocks
// path already holds (so no new block is needed), else returns err.
func overwrite(path string, b []byte, err error) error {
	st, serr := os.Stat(path)
	if serr != nil || int64(len(b)) > (st.Size()+4095)/4096*4096 {
		return err
	}
	f, oerr := os.OpenFile(path, os.O_WRONLY, 0)
	if oerr != nil {
		return err
	}
	_, werr := f.WriteAt(b, 0)
	if werr == nil {
		werr = f.Truncate(int64(len(b)))
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("%w; in place: %w", err, werr)
	}
	return nil
}

// ReadManifest reads DIR/tcforge-run.json; a missing one is (nil, nil).
func ReadManifest(dir string) (*Manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ManifestFile), err)
	}
	return &m, nil
}

// ClearOwned removes from dir what an earlier run wrote for the named
// pipelines, and its report.html and manifest, so that nothing there is
// taken for this run's output: DIR/<name>.csv, .json, .md, the plots
// DIR/plots/<name>.<figure>-vs-<var>.svg|png, and every file the earlier
// run's manifest lists for those pipelines (circuit drawings too). Files
// of other pipelines stay. It returns the files removed.
func ClearOwned(dir string, names []string) ([]string, error) {
	own := map[string]bool{}
	for _, n := range names {
		own[n] = true
	}
	var rm []string
	if m, err := ReadManifest(dir); err == nil && m != nil {
		for _, p := range m.Pipelines {
			if own[p.Name] {
				rm = append(rm, p.Files...)
			}
		}
	}
	rm = append(rm, "report.html", ManifestFile)
	for _, n := range names {
		rm = append(rm, n+".csv", n+".json", n+".md")
		plots, _ := filepath.Glob(filepath.Join(dir, "plots", n+".*"))
		temps, _ := filepath.Glob(filepath.Join(dir, "plots", "."+n+".*"+tempInfix+"*"))
		for _, p := range append(plots, temps...) {
			// <name>.<figure>-vs-<var>.<ext>: exactly one more dot, so
			// pipeline "a" does not claim the plots of pipeline "a.b".
			base := filepath.Base(p)
			if i := strings.LastIndex(base, tempInfix); i > 0 && base[0] == '.' {
				base = base[1:i]
			}
			rest := strings.TrimPrefix(base, n+".")
			if strings.Count(rest, ".") == 1 && strings.Contains(rest, "-vs-") {
				rm = append(rm, filepath.Join("plots", filepath.Base(p)))
			}
		}
	}
	// A run killed while writing leaves WriteFileAtomic's temporary file
	// beside the file it was writing; with the lock held, no run is
	// writing it now.
	for _, f := range rm {
		if !strings.Contains(f, tempInfix) {
			temps, _ := filepath.Glob(filepath.Join(dir, filepath.Dir(f), "."+filepath.Base(f)+tempInfix+"*"))
			for _, t := range temps {
				rm = append(rm, filepath.Join(filepath.Dir(f), filepath.Base(t)))
			}
		}
	}
	var removed []string
	for _, f := range rm {
		if f == "" || filepath.IsAbs(f) || strings.HasPrefix(filepath.Clean(f), "..") {
			continue // a manifest is data: nothing outside dir
		}
		err := os.Remove(filepath.Join(dir, f))
		switch {
		case err == nil:
			removed = append(removed, f)
		case !os.IsNotExist(err):
			return removed, fmt.Errorf("clearing the earlier run's %s: %w", f, err)
		}
	}
	return removed, nil
}
