package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/tcforge/tcforge/host/config"
	"github.com/tcforge/tcforge/host/run"
	"github.com/tcforge/tcforge/internal/safefile"
)

// tempInfix marks WriteFileAtomic's temporary files: ".<name>.tmp-<random>".
const tempInfix = safefile.TempInfix

// maxManifest bounds the manifest a run reads back (ReadManifest): a
// manifest of 100 000 points' files is a few MB.
const maxManifest = 64 << 20

// WriteFileAtomic writes data to rel below dir (created if missing)
// atomically: into a temporary file beside it, renamed over it once
// complete. A reader never sees a partial file, and a write cut short
// leaves the old file or none. No symbolic link below dir is followed: a
// link planted in place of a directory on the way fails the write, one in
// place of the file is replaced (safefile.Dir).
func WriteFileAtomic(dir, rel string, data []byte) error {
	d, err := safefile.OpenDir(dir, true)
	if err != nil {
		return fmt.Errorf("writing %s: %w", filepath.Join(dir, rel), err)
	}
	defer d.Close()
	return d.WriteFile(rel, data)
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
	// HostMemoryFrom says where the bound comes from: "--memory",
	// "GOMEMLIMIT", "half of the physical memory", "half of RLIMIT_AS
	// (ulimit -v)" or "half of the cgroup's memory limit".
	HostMemoryFrom string `json:"host_memory_from,omitempty"`
	// PluginProcesses are the plugin processes the run started, in
	// order, as far as the run got.
	PluginProcesses []PluginProcess `json:"plugin_processes,omitempty"`
}

// PluginProcess is one plugin process of a run.
type PluginProcess struct {
	// Plugins are the plugins it served; Shared says there were more
	// than one (bundled plugins share a process: a crash, a timeout or
	// the memory bound ended it under all of them).
	Plugins []string `json:"plugins"`
	Shared  bool     `json:"shared,omitempty"`
	PID     int      `json:"pid,omitempty"`
	// Restart says it was started again to replace a process of one of
	// its plugins that had ended (crashed, or was killed at a timeout or
	// the memory bound).
	Restart bool `json:"restart,omitempty"`
	// Ended says how it ended if it did before the run ("exit status
	// 3"); processes still running were stopped with the run.
	Ended string `json:"ended,omitempty"`
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
	err = WriteFileAtomic(dir, ManifestFile, b)
	if err == nil || !errors.Is(err, syscall.ENOSPC) {
		return err
	}
	return overwrite(filepath.Join(dir, ManifestFile), b, err)
}

// overwrite writes b over path in place when b fits in the 4 KiB blocks
// path already holds (so no new block is needed), else returns err.
func overwrite(path string, b []byte, err error) error {
	// Not through a link, and only a regular file: the manifest's own.
	f, oerr := openNoFollow(path, os.O_WRONLY)
	if oerr != nil {
		return err
	}
	st, serr := f.Stat()
	if serr != nil || !st.Mode().IsRegular() || int64(len(b)) > (st.Size()+4095)/4096*4096 {
		f.Close()
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
// It must be a regular file of at most 64 MiB, reached without a link (a
// FIFO or /dev/zero planted there is refused, not waited on or read
// forever).
func ReadManifest(dir string) (*Manifest, error) {
	d, err := safefile.OpenDir(dir, false)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer d.Close()
	b, err := d.ReadFile(ManifestFile, maxManifest)
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
// DIR/plots/<name>.<figure>-vs-<var>.svg|png, and the circuit drawings
// and logs the earlier run's manifest lists for those pipelines, with the
// temporary files a killed run left beside any of them. Files of other
// pipelines stay. It returns the files removed.
//
// The manifest is data anyone could have written: an entry is removed
// only if it is a file this tool writes for that pipeline (ownedFile: its
// name and place), and every removal is confined to dir without
// following a link (safefile.Dir.Remove): an entry naming a file outside,
// or reached through a symbolic link, or a directory, is left alone.
func ClearOwned(dir string, names []string) ([]string, error) {
	d, err := safefile.OpenDir(dir, false)
	if err != nil {
		return nil, fmt.Errorf("clearing the earlier run's files: %w", err)
	}
	defer d.Close()
	own := map[string]bool{}
	for _, n := range names {
		own[n] = true
	}
	rm := map[string]bool{"report.html": true, ManifestFile: true}
	if m, err := ReadManifest(dir); err == nil && m != nil {
		for _, p := range m.Pipelines {
			if !own[p.Name] {
				continue
			}
			for _, f := range p.Files {
				if rel, ok := ownedFile(p.Name, f); ok {
					rm[rel] = true
				}
			}
		}
	}
	for _, n := range names {
		rm[n+".csv"], rm[n+".json"], rm[n+".md"] = true, true, true
	}
	plots, _ := d.List("plots")
	for _, base := range plots {
		if target, ok := safefile.IsTemp(base); ok {
			base = target
		}
		for _, n := range names {
			if isPlot(n, base) {
				rm[path.Join("plots", base)] = true
			}
		}
	}
	// A run killed while writing leaves WriteFileAtomic's temporary file
	// beside the file it was writing; with the lock held, no run is
	// writing it now.
	listed := map[string][]string{}
	for f := range rm {
		sub := path.Dir(f)
		if _, ok := listed[sub]; !ok {
			listed[sub], _ = d.List(sub)
		}
	}
	for sub, entries := range listed {
		for _, e := range entries {
			if target, ok := safefile.IsTemp(e); ok && rm[path.Join(sub, target)] {
				rm[path.Join(sub, e)] = true
			}
		}
	}
	var removed []string
	for _, f := range slices.Sorted(maps.Keys(rm)) {
		ok, err := d.Remove(f)
		if errors.Is(err, safefile.ErrNotFollowed) {
			continue // reached through a link: not this run's to remove
		}
		if err != nil {
			return removed, fmt.Errorf("clearing the earlier run's %s: %w", f, err)
		}
		if ok {
			removed = append(removed, f)
		}
	}
	return removed, nil
}

// ownedFile reports whether rel, a file a manifest lists for pipeline
// name, is one this tool writes for it, and returns it cleaned
// (slash-separated): DIR/<name>.csv|json|md, a plot
// plots/<name>.<figure>-vs-<var>.svg|png, a drawing
// circuits/<name>[.<point>].<layerer>.svg or a log
// logs/<name>[.<point>][.<block>].log (run's --out layout). Anything else —
// another name, another place, a path out of the directory — is not.
func ownedFile(name, rel string) (string, bool) {
	rel = path.Clean(filepath.ToSlash(rel))
	sub, base := path.Split(rel)
	switch sub {
	case "":
		return rel, base == name+".csv" || base == name+".json" || base == name+".md"
	case "plots/":
		return rel, isPlot(name, base)
	case "circuits/":
		return rel, strings.HasPrefix(base, name+".") && strings.HasSuffix(base, ".svg")
	case "logs/":
		return rel, base == name+".log" || strings.HasPrefix(base, name+".") && strings.HasSuffix(base, ".log")
	}
	return rel, false
}

// isPlot reports whether base is a plot of pipeline name:
// <name>.<figure>-vs-<var>.<svg|png>, with exactly one more dot, so
// pipeline "a" does not claim the plots of pipeline "a.b".
func isPlot(name, base string) bool {
	rest, ok := strings.CutPrefix(base, name+".")
	if !ok || strings.Count(rest, ".") != 1 || !strings.Contains(rest, "-vs-") {
		return false
	}
	return strings.HasSuffix(rest, ".svg") || strings.HasSuffix(rest, ".png")
}
