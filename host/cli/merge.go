package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tcforge/tcforge/host/config"
	"github.com/tcforge/tcforge/host/progress"
	"github.com/tcforge/tcforge/host/report"
	"github.com/tcforge/tcforge/host/run"
)

func newMergeCmd(env *Env, g *globals) *cobra.Command {
	var (
		out string
		ro  = &runOutput{}
	)
	cmd := &cobra.Command{
		Use:   "merge [flags] DIR...",
		Short: "Combine the outputs of `tcforge run --shard I/N` into the reports one run would have written",
		Long: "Read DIR/" + ShardFile + " of every shard of a sharded run (tcforge run --shard I/N --out DIR) and write the\n" +
			"CSV, JSON, Markdown, plots and report.html a single run of the same files would have written (the\n" +
			"same bytes apart from timings). Every shard 0…N−1 must be given once, all of the same files, seed and\n" +
			"samples; the missing ones are named. A shard stopped by a signal (a scheduler's time limit or cancel)\n" +
			"holds the points it finished: the merged reports are then incomplete, name it, and the exit status is 1.\n" +
			"See docs/clusters.md.",
		Example: "  tcforge merge --out out shards/0 shards/1 shards/2",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			log, err := g.logger(env.Stderr)
			if err != nil {
				return err
			}
			ro.dir, ro.log, ro.bar = out, log, progress.New(env.Stderr, false, 0)
			return mergeShards(cmd.Context(), env, args, ro)
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "directory for the merged result files (as tcforge run --out)")
	cmd.Flags().BoolVar(&ro.png, "png", true, "with --out, also write the plots as PNG")
	return cmd
}

// mergeShards checks that dirs hold one complete set of shards and writes
// the merged reports.
func mergeShards(ctx context.Context, env *Env, dirs []string, ro *runOutput) error {
	start := time.Now()
	var shards []*shardManifest
	var noShard []string // dirs without a shard file: their tasks did not finish
	for _, d := range dirs {
		m, err := readShard(d)
		if errors.Is(err, fs.ErrNotExist) {
			noShard = append(noShard, d)
			continue
		}
		if err != nil {
			return err
		}
		shards = append(shards, m)
	}
	if len(shards) == 0 {
		return fmt.Errorf("no shard to merge: %s holds no %s (did tcforge run --shard I/N --out DIR finish there?)", strings.Join(dirs, ", "), ShardFile)
	}
	first := shards[0]
	byIndex := make([]*shardManifest, first.Of)
	for k, m := range shards {
		switch {
		case m.Of != first.Of:
			return fmt.Errorf("%s is shard %d/%d, %s is of %d", m.dir, m.Shard, m.Of, first.dir, first.Of)
		case m.sourcesDigest() != first.sourcesDigest():
			return fmt.Errorf("%s ran other pipeline files (or other contents) than %s", m.dir, first.dir)
		case m.Seed != first.Seed || m.Samples != first.Samples:
			return fmt.Errorf("%s ran with --seed %d --samples %d, %s with %d and %d", m.dir, m.Seed, m.Samples, first.dir, first.Seed, first.Samples)
		case byIndex[m.Shard] != nil:
			return fmt.Errorf("shard %d/%d given twice (%s)", m.Shard, m.Of, shards[k].dir)
		}
		byIndex[m.Shard] = m
	}
	// Every shard missing, by index, in one message: what to run again.
	var missing []string
	for i, m := range byIndex {
		if m == nil {
			missing = append(missing, fmt.Sprintf("shard %d/%d missing", i, first.Of))
		}
	}
	if len(missing) > 0 {
		why := ""
		if len(noShard) > 0 {
			why = fmt.Sprintf(" (%s: no %s, its task did not finish: cancelled, killed or never started)", strings.Join(noShard, ", "), ShardFile)
		}
		return fmt.Errorf("%s%s; run them again", strings.Join(missing, ", "), why)
	}
	if len(noShard) > 0 {
		return fmt.Errorf("%s: no %s", strings.Join(noShard, ", "), ShardFile)
	}
	// Stopped shards (a signal: a time limit, a cancel) are merged with the
	// points they finished; the report is incomplete and names them.
	var stops []string
	for _, m := range byIndex {
		if m.Stopped != "" {
			stops = append(stops, fmt.Sprintf("shard %d/%d %s", m.Shard, m.Of, m.Stopped))
			ro.log.Warn().Int("shard", m.Shard).Int("of", m.Of).Str("dir", m.dir).Str("why", m.Stopped).
				Msg("shard stopped before it finished: its unfinished points are missing from the merged report; run it again")
		}
	}
	stopped := strings.Join(stops, ", ")
	// The pipelines, parsed from the sources the shards ran.
	var pipelines []*config.Pipeline
	for _, f := range first.Files {
		file, diags := config.Parse(f.Path, f.Source)
		if diags.HasErrors() {
			return fmt.Errorf("%s: %w", f.Path, diags)
		}
		pipelines = append(pipelines, file.Pipelines...)
	}
	configs := make([]string, len(first.Files))
	for i, f := range first.Files {
		configs[i] = f.Path
	}
	if err := ro.begin(configs, pipelines, start); err != nil {
		return err
	}
	defer ro.release()
	failed, merged := 0, 0
	for _, p := range pipelines {
		res, err := mergePipeline(p, byIndex)
		if err != nil {
			return err
		}
		if res == nil {
			continue // every shard that holds points of p stopped before it
		}
		merged++
		if !res.Complete {
			res.Stopped = stopped
		}
		if err := report.WriteTable(env.Stdout, res); err != nil {
			return err
		}
		if err := ro.pipeline(ctx, nil, res); err != nil {
			return err
		}
		if !res.OK() {
			failed++
		}
	}
	status := "ok"
	switch {
	case stopped != "":
		status = "stopped: " + stopped
	case failed > 0:
		status = "failed"
	}
	if err := ro.finish(status); err != nil {
		return err
	}
	ro.writeSummary(env.Stdout, merged, failed, time.Since(start))
	if stopped != "" {
		// Exit 1, as for a failed point: the sweep is not done.
		fmt.Fprintf(env.Stderr, "Error: incomplete: %s; run them again\n", stopped)
		return exitStatus{1}
	}
	if failed > 0 {
		return exitStatus{1}
	}
	return nil
}

// mergePipeline gathers pipeline p's rows from every shard, in point order,
// checking each point is where its hash puts it and is there once.
func mergePipeline(p *config.Pipeline, shards []*shardManifest) (*run.Result, error) {
	points := p.Points()
	perPoint := make([][]run.Row, len(points))
	res := &run.Result{Pipeline: p, Vars: p.Vars(), Complete: true}
	found := false
	for _, m := range shards {
		if m.Stopped != "" && !slices.ContainsFunc(m.Pipelines, func(sp shardPipeline) bool { return sp.Name == p.Name }) {
			res.Complete = false // stopped before p
		}
		for _, sp := range m.Pipelines {
			if sp.Name != p.Name {
				continue
			}
			if found && !slices.Equal(res.Plugins, sp.Plugins) {
				return nil, fmt.Errorf("pipeline %q: shard %d/%d ran other plugins (%v) than another shard (%v): its rows would not say which produced them", p.Name, m.Shard, m.Of, sp.Plugins, res.Plugins)
			}
			found = true
			res.Plugins = sp.Plugins
			res.ExpectNames, res.PredictNames = sp.ExpectNames, sp.PredictNames
			res.Complete = res.Complete && sp.Complete
			for _, sr := range sp.Rows {
				if sr.Point < 0 || sr.Point >= len(points) {
					return nil, fmt.Errorf("shard %d/%d: pipeline %q has no point %d", m.Shard, m.Of, p.Name, sr.Point)
				}
				pt := points[sr.Point]
				if s := shardOf(p.Name, pt, m.Of); s != m.Shard {
					return nil, fmt.Errorf("shard %d/%d holds point %q of pipeline %q, which belongs to shard %d", m.Shard, m.Of, pt, p.Name, s)
				}
				row := run.Row{Point: pt, Layerer: sr.Layerer, Stats: sr.Stats, Logic: sr.Logic, Verified: sr.Verified,
					Expect: sr.Expect, Actual: sr.Actual, Predict: sr.Predict, ExpectOK: sr.ExpectOK, Err: textErr(sr.Err),
					BuildTime: sr.BuildTime, LayerTime: sr.LayerTime, VerifyTime: sr.VerifyTime}
				for _, sm := range sr.Models {
					mr := sm.ModelRow
					mr.Err = textErr(sm.Err)
					row.Models = append(row.Models, mr)
				}
				perPoint[sr.Point] = append(perPoint[sr.Point], row)
			}
		}
	}
	if !found && !res.Complete {
		return nil, nil
	}
	if !found {
		return nil, fmt.Errorf("pipeline %q: no shard ran it", p.Name)
	}
	for i, rows := range perPoint {
		switch {
		case len(rows) == 0 && res.Complete:
			return nil, fmt.Errorf("pipeline %q: point %d (%s) is in no shard", p.Name, i, points[i])
		case len(rows) > len(p.Layerers):
			return nil, fmt.Errorf("pipeline %q: point %d (%s) is in more than one shard", p.Name, i, points[i])
		}
		res.Rows = append(res.Rows, rows...)
	}
	return res, nil
}
