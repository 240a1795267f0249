package cli

import (
	"context"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"regexp"
	"strings"
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
	sec, err := report.WriteReports(o.dir, res, o.png)
	if err != nil {
		return err
	}
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
		if err := drawFile(filepath.Join(o.dir, rel), l.Circuit, title); err != nil {
			return nil, err
		}
		out = append(out, report.Drawing{Title: title, File: rel, Levels: levelRows(l.Circuit)})
	}
	return out, nil
}

// finish writes report.html and removes the progress bar.
func (o *runOutput) finish() error {
	defer o.bar.Finish()
	if o.dir == "" || len(o.sections) == 0 {
		return nil
	}
	path, err := report.WriteHTML(o.dir, o.sections)
	if err != nil {
		return err
	}
	o.log.Info().Str("file", path).Msg("wrote report.html")
	return nil
}

// writeSummary prints the closing line of a run.
func (o *runOutput) writeSummary(w io.Writer, pipelines, failed int, took time.Duration) {
	s := o.summary
	fmt.Fprintf(w, "\n%d pipelines, %d points, %d rows: %d verified, %d/%d met their expectations, %d failed pipelines, %s\n",
		pipelines, s.Points, s.Rows, s.Verified, s.Met, s.Expected, failed, took.Round(time.Millisecond))
}
