package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/tcforge/tcforge/host/config"
	"github.com/tcforge/tcforge/host/progress"
	"github.com/tcforge/tcforge/host/report"
	"github.com/tcforge/tcforge/host/run"
)

// runOutput is what `tcforge run` produces besides the terminal table:
// the report files of --out (JSON, Markdown, plots, circuit drawings,
// report.html), the progress bar and the closing summary line.
type runOutput struct {
	dir      string // --out; "" writes no files
	png      bool   // plots as PNG too
	draw     string // glob of the pipelines whose small circuits are drawn ("": none)
	maxGates int    // largest circuit drawn
	bar      *progress.Bar
	log      zerolog.Logger
	sections []*report.Section
	summary  report.Summary
	manifest *report.Manifest // with --out: what this run wrote
	lock     *os.File         // with --out: the directory's run lock, held to the end
	memLimit int64            // the host's memory bound (hostMemory), for the manifest
	memFrom  string           // and where it comes from
	// processes returns the run's plugin processes so far, for the
	// manifest (nil: none recorded).
	processes func() []report.PluginProcess

	logMu   sync.Mutex
	logs    map[string][]string // with --out: the logs/ files of each pipeline
	tmpLogs string              // without --out: the directory logs/ is in
}

// saveDetail is the runner's SaveDetail: the full text behind a failed
// row's one-line error (a plugin's crash report, go-plugin's account of a
// failed start) is written atomically to
// logs/<pipeline>[.<point>][.<block>].log in --out, listed in the
// manifest among the pipeline's files, or, without --out, in a
// directory $TMPDIR/tcforge-logs-* made for the run. The row's error line
// gives the path.
func (o *runOutput) saveDetail(p *config.Pipeline, pt *config.Point, block, text string) (string, error) {
	name := p.Name
	if pt != nil {
		if s := pointSlug(*pt); s != "" {
			name += "." + s
		}
	}
	if block != "" {
		name += "." + block
	}
	rel := filepath.Join("logs", slugClean.ReplaceAllString(name, "_")+".log")
	o.logMu.Lock()
	defer o.logMu.Unlock()
	dir := o.dir
	if dir == "" {
		if o.tmpLogs == "" {
			d, err := os.MkdirTemp("", "tcforge-logs-")
			if err != nil {
				return "", err
			}
			o.tmpLogs = d
		}
		dir = o.tmpLogs
	}
	path := filepath.Join(dir, rel)
	if err := report.WriteFileAtomic(dir, rel, []byte(text)); err != nil {
		return "", err
	}
	if o.dir != "" {
		if o.logs == nil {
			o.logs = map[string][]string{}
		}
		if !slices.Contains(o.logs[p.Name], rel) {
			o.logs[p.Name] = append(o.logs[p.Name], rel)
		}
	}
	return path, nil
}

// checking shows the pre-run check's progress on the bar (on a terminal):
// the pipeline and how many of its points are checked, at most ten times
// a second.
func (o *runOutput) checking(runner *run.Runner, pipelines []*config.Pipeline) {
	if !o.bar.Enabled() {
		return
	}
	// Pipelines are checked at once: the bar shows the one that last
	// reached a point.
	var mu sync.Mutex
	var last time.Time
	done := map[*config.Pipeline]int64{}
	runner.Checking = func(p *config.Pipeline, pt config.Point) {
		mu.Lock()
		defer mu.Unlock()
		done[p]++
		n, total := done[p], p.NumPoints()
		if now := time.Now(); now.Sub(last) >= 100*time.Millisecond || n == total {
			last = now
			o.bar.Begin(fmt.Sprintf("checking %s: point %d of %d", p.Name, n, total))
		}
	}
}

// begin prepares --out for the run, once everything is checked and
// before the first point runs: it removes what an earlier run wrote for
// these pipelines (and its report.html), so that nothing there is taken
// for this run's, and writes the manifest with status "running".
func (o *runOutput) begin(configs []string, pipelines []*config.Pipeline, start time.Time) error {
	if o.dir == "" {
		return nil
	}
	if err := os.MkdirAll(o.dir, 0o755); err != nil {
		return fmt.Errorf("creating output directory: %w", err)
	}
	lock, err := lockOut(o.dir)
	if err != nil {
		return err
	}
	o.lock = lock
	// A manifest still "running" now that we hold the lock: its run
	// was killed (SIGKILL, the kernel's OOM killer, a power cut).
	previous := ""
	if old, err := report.ReadManifest(o.dir); err == nil && old != nil && old.Status == "running" {
		previous = fmt.Sprintf("killed: the run started %s ended without finishing (its manifest still said \"running\")", old.Started.Format(time.RFC3339))
		o.log.Warn().Str("dir", o.dir).Time("started", old.Started).Msg("the previous run into this directory was killed before it finished")
	}
	names := make([]string, len(pipelines))
	for i, p := range pipelines {
		names[i] = p.Name
	}
	removed, err := report.ClearOwned(o.dir, names)
	if err != nil {
		return err
	}
	if len(removed) > 0 {
		o.log.Debug().Strs("files", removed).Str("dir", o.dir).Msg("removed the earlier run's files of these pipelines")
	}
	o.manifest = &report.Manifest{Tool: "tcforge", Configs: configs, Started: start.UTC().Round(time.Second), Status: "running", Files: []string{}, Previous: previous, PID: os.Getpid()}
	for _, n := range names {
		o.manifest.Pipelines = append(o.manifest.Pipelines, report.ManifestPipeline{Name: n, Status: "not run"})
	}
	return report.WriteManifest(o.dir, o.manifest)
}

// release lets go of the --out lock (begin's), at the end of the run.
func (o *runOutput) release() {
	if o.lock != nil {
		o.lock.Close()
		o.lock = nil
	}
}

// wrote records files of pipeline name in the manifest and rewrites it,
// so that a run killed later still says which files are its own.
func (o *runOutput) wrote(name, status string, rows int, files ...string) {
	if o.manifest == nil {
		return
	}
	for i := range o.manifest.Pipelines {
		mp := &o.manifest.Pipelines[i]
		if mp.Name == name {
			mp.Status, mp.Rows = status, rows
			mp.Files = append(mp.Files, files...)
		}
	}
	o.manifest.Files = append(o.manifest.Files, files...)
	o.recordProcesses()
	if err := report.WriteManifest(o.dir, o.manifest); err != nil {
		o.log.Warn().Err(err).Msg("updating the run manifest")
	}
}

// watch hooks the progress bar into the runner and counts the points of
// the pipelines about to run.
func (o *runOutput) watch(runner *run.Runner, pipelines []*config.Pipeline) {
	if !o.bar.Enabled() {
		return
	}
	total := 0
	for _, p := range pipelines {
		total += len(p.Points())
	}
	o.bar.AddTotal(total)
	runner.Progress = func(p *config.Pipeline, pt config.Point, done bool) {
		if done {
			o.bar.Step()
			return
		}
		label := p.Name
		if s := pt.String(); s != "" {
			label += " " + s
		}
		o.bar.Begin(label)
	}
}

// pipeline writes one pipeline's report files (the CSV is written by the
// caller) and, with drawing on, draws its small circuits.
func (o *runOutput) pipeline(ctx context.Context, runner *run.Runner, res *run.Result) error {
	o.summary.Add(report.Summarize(res))
	if o.dir == "" {
		return nil
	}
	csvPath, err := report.WriteFiles(o.dir, res)
	if err != nil {
		return err
	}
	o.log.Info().Str("file", csvPath).Msg("wrote results")
	sec, err := report.WriteReports(o.dir, res, o.png)
	if err != nil {
		// The rows are in the CSV, whole (every file is written
		// atomically); the manifest names it and says the rest failed.
		if rel, rerr := filepath.Rel(o.dir, csvPath); rerr == nil {
			o.wrote(res.Pipeline.Name, "files failed", len(res.Rows), filepath.ToSlash(rel))
		}
		return err
	}
	status := "ok"
	switch {
	case !res.Complete:
		status = "incomplete"
	case !res.OK():
		status = "failed"
	}
	defer func() {
		files := append(append([]string(nil), sec.Files...), sec.Plots...)
		o.logMu.Lock()
		files = append(files, o.logs[res.Pipeline.Name]...)
		o.logMu.Unlock()
		for _, d := range sec.Drawings {
			files = append(files, d.File)
		}
		for i := range files {
			files[i] = filepath.ToSlash(files[i])
		}
		o.wrote(res.Pipeline.Name, status, len(res.Rows), files...)
	}()
	for _, f := range sec.Files {
		o.log.Debug().Str("file", filepath.Join(o.dir, f)).Msg("wrote report")
	}
	if ok, err := path.Match(o.draw, res.Pipeline.Name); err != nil {
		return fmt.Errorf("--draw %q: %w", o.draw, err)
	} else if ok {
		drawings, err := o.drawings(ctx, runner, res)
		if err != nil {
			return err
		}
		sec.Drawings = drawings
	}
	o.log.Info().Str("pipeline", res.Pipeline.Name).Int("files", len(sec.Files)).Int("plots", len(sec.Plots)).
		Int("drawings", len(sec.Drawings)).Str("dir", o.dir).Msg("wrote reports")
	o.sections = append(o.sections, sec)
	return nil
}

var slugClean = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// pointSlug names a point in a file name: "log_w-1_rounds-2".
func pointSlug(pt config.Point) string {
	s := strings.ReplaceAll(pt.String(), "=", "-")
	s = strings.ReplaceAll(s, " ", "_")
	return strings.Trim(slugClean.ReplaceAllString(s, ""), "_")
}

// drawings rebuilds each verified point whose layered circuit has at most
// maxGates gates and draws it into DIR/circuits/.
func (o *runOutput) drawings(ctx context.Context, runner *run.Runner, res *run.Result) ([]report.Drawing, error) {
	var out []report.Drawing
	p := res.Pipeline
	for _, row := range res.Rows {
		if !row.Verified || row.Stats.Gates == 0 || row.Stats.Gates > o.maxGates {
			continue
		}
		ins, err := runner.Inspect(ctx, p, row.Point, row.Layerer)
		if err != nil {
			return nil, fmt.Errorf("drawing %s: %w", describePoint(p, row.Point), err)
		}
		l := ins.Layered[0]
		name := p.Name
		if s := pointSlug(row.Point); s != "" {
			name += "." + s
		}
		rel := filepath.Join("circuits", name+"."+row.Layerer+".svg")
		title := drawTitle(p, row.Point, row.Layerer)
		if err := drawFile(o.dir, rel, l.Circuit, title); err != nil {
			return nil, err
		}
		out = append(out, report.Drawing{Title: title, File: rel, Levels: levelRows(l.Circuit)})
	}
	return out, nil
}

// finish writes report.html (for the pipelines that ran, saying how the
// run ended: status is "ok", "failed" or "stopped: why") and the
// manifest, and removes the progress bar.
func (o *runOutput) finish(status string) error {
	defer o.bar.Finish()
	if o.dir == "" || o.manifest == nil {
		return nil
	}
	if len(o.sections) > 0 {
		path, err := report.WriteHTML(o.dir, o.sections, status)
		if err != nil {
			return err
		}
		o.manifest.Files = append(o.manifest.Files, "report.html")
		o.log.Info().Str("file", path).Msg("wrote report.html")
	}
	o.manifest.Status, o.manifest.Finished = status, time.Now().UTC().Round(time.Second)
	if peak, ok := selfPeak(); ok {
		o.manifest.HostPeakRSS = peak
	}
	o.manifest.HostMemoryLimit, o.manifest.HostMemoryFrom = o.memLimit, o.memFrom
	o.recordProcesses()
	return report.WriteManifest(o.dir, o.manifest)
}

// recordProcesses puts the run's plugin processes so far in the manifest.
func (o *runOutput) recordProcesses() {
	if o.processes != nil {
		o.manifest.PluginProcesses = o.processes()
	}
}

// writeSummary prints the closing line of a run.
func (o *runOutput) writeSummary(w io.Writer, pipelines, failed int, took time.Duration) {
	s := o.summary
	fmt.Fprintf(w, "\n%d pipelines, %d points, %d rows: %s, %d/%d met their expectations, %d failed pipelines, %s\n",
		pipelines, s.Points, s.Rows, s.VerifiedText(), s.Met, s.Expected, failed, took.Round(time.Millisecond))
}
