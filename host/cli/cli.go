// Package cli is the tcforge command line: run pipelines, list plugins,
// serve a bundled plugin (internal).
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"text/tabwriter"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/tcforge/tcforge/host/builtin"
	"github.com/tcforge/tcforge/host/config"
	"github.com/tcforge/tcforge/host/draw"
	"github.com/tcforge/tcforge/host/progress"
	"github.com/tcforge/tcforge/host/registry"
	"github.com/tcforge/tcforge/host/report"
	"github.com/tcforge/tcforge/host/run"
	"github.com/tcforge/tcforge/sdk"
)

// Env is what the command line runs against: its streams and how to start
// bundled plugins. Tests substitute SelfCommand.
type Env struct {
	Stdout, Stderr io.Writer
	// SelfCommand serves a bundled plugin (default: re-execute this binary).
	SelfCommand func(name string) (*exec.Cmd, error)
	// Builtins are the bundled plugins (default: builtin.Plugins()).
	Builtins map[string]sdk.Plugin
}

// exitStatus is an error that carries the process exit status Main returns
// (plugin processes that exit are wire.ExitError).
type exitStatus struct{ Code int }

// Error reports the exit status.
func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

// Main runs the command line with args (without the program name) and
// returns the process exit status.
func Main(ctx context.Context, env Env, args []string) int {
	if env.Builtins == nil {
		env.Builtins = builtin.Plugins()
	}
	cmd := newRoot(&env)
	cmd.SetArgs(args)
	cmd.SetOut(env.Stdout)
	cmd.SetErr(env.Stderr)
	err := cmd.ExecuteContext(ctx)
	var ee exitStatus
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.Code
	default:
		fmt.Fprintln(env.Stderr, "Error:", err)
		return 2
	}
}

type globals struct {
	logLevel   string
	logFormat  string
	pluginDirs []string
	inProcess  bool
	lockPath   string
	timeout    time.Duration
	maxEdges   int64 // run's --max-edges
	jobs       int   // run's --jobs

	// run's --export and --export-dense-max
	export    string
	exportMax int64
	shard     string // run's --shard I/N (shard.go)
}

func newRoot(env *Env) *cobra.Command {
	g := &globals{}
	root := &cobra.Command{
		Use:           "tcforge",
		Short:         "Compile hash constructions into layered threshold circuits and transformer weights",
		Long:          "tcforge compiles cryptographic hash constructions (Keccak/SHA-3 sponges, Merkle–Damgård chains, Merkle trees)\ninto layered threshold circuits with pluggable backends, verifies every artifact, and reports depth/width laws.",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	pf := root.PersistentFlags()
	pf.StringVar(&g.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	pf.StringVar(&g.logFormat, "log-format", "auto", "log format: auto (console on a terminal, JSON otherwise), console, json")
	pf.StringArrayVar(&g.pluginDirs, "plugin-dir", nil, "directory searched for tcforge-plugin-NAME executables (repeatable; also $"+registry.PathEnv+" and ~/.tcforge/plugins)")
	pf.DurationVar(&g.timeout, "timeout", 30*time.Minute, "give up on a plugin call after this long and kill the plugin (0: never)")
	pf.StringVar(&g.lockPath, "lock", registry.LockFile, "plugin lock file pinning external plugins' SHA-256 (see \"tcforge plugins lock\"); ignored if absent")
	pf.BoolVar(&g.inProcess, "in-process", false, "call bundled plugins in-process instead of in subprocesses (debugging and measuring)")
	root.AddCommand(newRunCmd(env, g), newPluginsCmd(env, g), newPluginCmd(env), newInspectCmd(env, g), newMergeCmd(env, g))
	return root
}

func (g *globals) logger(w io.Writer) (zerolog.Logger, error) {
	lvl, err := zerolog.ParseLevel(g.logLevel)
	if err != nil {
		return zerolog.Nop(), fmt.Errorf("--log-level: %w", err)
	}
	format := g.logFormat
	if format == "auto" {
		format = "json"
		if isTTY(w) {
			format = "console"
		}
	}
	var out io.Writer
	switch format {
	case "json":
		out = w
	case "console":
		out = zerolog.ConsoleWriter{Out: w, TimeFormat: time.TimeOnly}
	default:
		return zerolog.Nop(), fmt.Errorf("--log-format must be auto, console or json, got %q", g.logFormat)
	}
	return zerolog.New(out).Level(lvl).With().Timestamp().Logger(), nil
}

func (g *globals) registry(env *Env, log zerolog.Logger) *registry.Registry {
	return registry.New(registry.Options{
		Builtins:    env.Builtins,
		Dirs:        registry.DefaultDirs(g.pluginDirs...),
		SelfCommand: env.SelfCommand,
		InProcess:   g.inProcess,
		Log:         log,
		LockPath:    g.lockPath,
		CallTimeout: g.timeout,
	})
}

func isTTY(w io.Writer) bool {
	if t, ok := w.(interface{ IsTerminal() bool }); ok {
		return t.IsTerminal() // the progress bar's log writer
	}
	f, ok := w.(*os.File)
	return ok && isatty.IsTerminal(f.Fd())
}

func newRunCmd(env *Env, g *globals) *cobra.Command {
	var (
		out     string
		samples int
		seed    uint64
		ro      = &runOutput{}
		prog    string
	)
	cmd := &cobra.Command{
		Use:   "run [flags] FILE...",
		Short: "Run the pipelines of HCL files: build, layer, verify, compare with expectations",
		Long: "Run every pipeline block of the given HCL files. Each matrix point is built by the construction plugin,\n" +
			"verified against the construction's reference, layered by each layerer, verified against the logic circuit\n" +
			"and compared with the pipeline's expect blocks. Exits non-zero if any point fails.",
		Example: "  tcforge run --out out configs/paper/keccak.hcl",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			on, err := progress.Enabled(progress.Mode(prog), env.Stderr)
			if err != nil {
				return fmt.Errorf("--progress: %w", err)
			}
			// Logs go through the bar's writer, which keeps them off the bar's line.
			ro.bar = progress.New(env.Stderr, on, 0)
			defer ro.bar.Finish() // also when the run fails or is interrupted
			renv := *env
			renv.Stderr = ro.bar.Writer()
			env := &renv
			log, err := g.logger(env.Stderr)
			if err != nil {
				return err
			}
			ro.dir, ro.log = out, log
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer stop()
			go func() {
				<-ctx.Done()
				stop() // a second Ctrl-C kills at once
			}()
			return runFiles(ctx, env, g, log, args, out, samples, seed, ro)
		},
	}
	cmd.Flags().StringVar(&prog, "progress", "auto", "progress bar on stderr: auto (on a terminal, not in CI), always, never")
	cmd.Flags().BoolVar(&ro.png, "png", true, "with --out, also write the plots as PNG")
	cmd.Flags().StringVar(&ro.draw, "draw", "", "with --out, draw the layered circuits (DIR/circuits/*.svg) of the pipelines matching this glob (--draw alone: all), points of at most --draw-max-gates gates")
	cmd.Flags().Lookup("draw").NoOptDefVal = "*"
	cmd.Flags().IntVar(&ro.maxGates, "draw-max-gates", draw.MaxGates, "largest circuit --draw draws")
	cmd.Flags().StringVar(&out, "out", "", "directory for result files: DIR/<pipeline>.csv, .json, .md, DIR/plots/*.svg|png, DIR/report.html")
	cmd.Flags().IntVar(&g.jobs, "jobs", runtime.NumCPU(), "points of a pipeline run at once")
	cmd.Flags().Int64Var(&g.maxEdges, "max-edges", 50_000_000, "refuse points whose construction estimates more logic-circuit edges than this (0: no limit)")
	cmd.Flags().IntVar(&samples, "samples", 0, "random inputs per point for verification (overrides each pipeline's samples)")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "seed of the random verification inputs")
	cmd.Flags().StringVar(&g.export, "export", "", "write every verified model to DIR as safetensors + JSON config (DIR/<pipeline>.<point>.<layerer>.<arch>.{safetensors,json}; docs/mappers.md)")
	cmd.Flags().StringVar(&g.shard, "shard", "", "run shard I of N (0 ≤ I < N) of every pipeline's points, by a hash of pipeline name and point, and with --out write DIR/"+ShardFile+" for tcforge merge (docs/clusters.md)")
	cmd.Flags().Int64Var(&g.exportMax, "export-dense-max", 256<<20, "with --export, write a model's tensors dense when its dense float32 form takes at most this many bytes, else CSR (0: always CSR)")
	return cmd
}

func runFiles(ctx context.Context, env *Env, g *globals, log zerolog.Logger, paths []string, out string, samples int, seed uint64, ro *runOutput) error {
	start := time.Now()
	files, srcs, diags := config.ParseFiles(paths...)
	color := isTTY(env.Stderr)
	printDiags := func(d hcl.Diagnostics) {
		if len(d) > 0 {
			_ = config.WriteDiagnostics(env.Stderr, srcs, d, color)
		}
	}
	if diags.HasErrors() {
		printDiags(diags)
		return exitStatus{1}
	}
	printDiags(diags)
	reg := g.registry(env, log)
	defer reg.Close()
	runner := &run.Runner{Registry: reg, Log: log, Samples: samples, Seed: seed, Diagnostics: printDiags, MaxEdges: g.maxEdges, Jobs: g.jobs,
		Export: g.export, ExportDenseLimit: g.exportMax}
	var shard *shardRecord
	if g.shard != "" {
		spec, err := parseShard(g.shard)
		if err != nil {
			return err
		}
		if out == "" {
			return fmt.Errorf("--shard needs --out: the shard's rows go to DIR/%s for tcforge merge", ShardFile)
		}
		if shard, err = newShardRecord(spec, paths, seed, samples); err != nil {
			return err
		}
		runner.Shard = spec.keep
	}

	var pipelines []*config.Pipeline
	for _, f := range files {
		pipelines = append(pipelines, f.Pipelines...)
	}
	// Start every plugin the pipelines name at once, not one by one.
	var names []string
	for _, p := range pipelines {
		for _, b := range append(append([]*config.Block{p.Construction}, p.Layerers...), p.Mappers...) {
			names = append(names, b.Name)
		}
	}
	reg.Start(ctx, names)
	// Check everything before running anything: a config mistake changes nothing.
	var checked hcl.Diagnostics
	for _, p := range pipelines {
		checked = append(checked, runner.Check(ctx, p)...)
	}
	printDiags(checked)
	if checked.HasErrors() {
		return exitStatus{1}
	}
	ro.watch(runner, pipelines)
	failed := 0
	for _, p := range pipelines {
		res, err := runner.Run(ctx, p)
		if err != nil {
			log.Error().Err(err).Str("pipeline", p.Name).Msg("pipeline failed")
			failed++
		}
		if res == nil {
			continue
		}
		ro.bar.Finish() // the table goes where the bar may be
		if err := report.WriteTable(env.Stdout, res); err != nil {
			return err
		}
		if out != "" {
			path, err := report.WriteFiles(out, res)
			if err != nil {
				return err
			}
			log.Info().Str("file", path).Msg("wrote results")
		}
		if ctx.Err() != nil {
			// Interrupted: the finished points of this pipeline are
			// written; later pipelines do not start.
			if err := ro.pipeline(context.WithoutCancel(ctx), runner, res); err != nil {
				return err
			}
			log.Warn().Str("pipeline", p.Name).Int("rows", len(res.Rows)).Msg("interrupted: wrote the finished points; later pipelines did not run")
			ro.writeSummary(env.Stdout, len(pipelines), failed, time.Since(start))
			return exitStatus{130}
		}
		if err := ro.pipeline(ctx, runner, res); err != nil {
			return err
		}
		if shard != nil {
			shard.add(res)
		}
		// A shard may hold none of a pipeline's points.
		if err == nil && !res.OK() && !(shard != nil && res.Complete && len(res.Rows) == 0) {
			failed++
		}
	}
	if shard != nil {
		path, err := shard.write(out)
		if err != nil {
			return err
		}
		log.Info().Str("file", path).Msg("wrote the shard's rows for tcforge merge")
	}
	if err := ro.finish(); err != nil {
		return err
	}
	ro.writeSummary(env.Stdout, len(pipelines), failed, time.Since(start))
	if failed > 0 {
		return exitStatus{1}
	}
	return nil
}

func newPluginsCmd(env *Env, g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "plugins [NAME]",
		Short: "List installed plugins with their parameters",
		Long: "List every plugin (bundled and external) with kind, version, source and parameters (type, default, doc).\n" +
			"With NAME, show that plugin in full, with an HCL block using it. --json prints the schemas as JSON.",
		Example: "  tcforge plugins\n  tcforge plugins keccak\n  tcforge plugins --json",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			log, err := g.logger(env.Stderr)
			if err != nil {
				return err
			}
			reg := g.registry(env, log)
			defer reg.Close()
			names := reg.Names()
			if len(args) == 1 {
				names = args
			}
			bad := 0
			var schemas []pluginSchema
			for _, n := range names {
				p, src, err := reg.Open(cmd.Context(), n)
				if err != nil {
					fmt.Fprintf(env.Stderr, "%s: %v\n", n, err)
					bad++
					continue
				}
				switch {
				case asJSON:
					schemas = append(schemas, pluginSchema{Description: p.Describe(), Source: src.String(), Bundled: src.Bundled})
				case len(args) == 1:
					writePluginFull(env.Stdout, p.Describe(), src)
				default:
					writePlugin(env.Stdout, p.Describe(), src)
				}
			}
			if asJSON {
				if err := writePluginsJSON(env.Stdout, schemas); err != nil {
					return err
				}
			}
			if bad > 0 {
				return exitStatus{1}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the plugins' schemas as JSON")
	cmd.AddCommand(newLockCmd(env, g))
	return cmd
}

func writePlugin(w io.Writer, d sdk.Description, src registry.Source) {
	fmt.Fprintf(w, "%s (%s %s, %s)\n  %s\n", d.Name, d.Kind, d.Version, src, d.Doc)
	if len(d.Params) == 0 {
		fmt.Fprintf(w, "  no parameters\n\n")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, p := range d.Params {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", p.Name, p.Type, paramConstraints(p), p.Doc)
	}
	tw.Flush()
	fmt.Fprintln(w)
}

func newPluginCmd(env *Env) *cobra.Command {
	plugin := &cobra.Command{Use: "plugin", Short: "Internal plugin commands", Hidden: true}
	plugin.AddCommand(&cobra.Command{
		Use:   "serve NAME",
		Short: "Serve a bundled plugin over go-plugin gRPC (started by the host)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, ok := env.Builtins[args[0]]
			if !ok {
				return fmt.Errorf("no bundled plugin named %q", args[0])
			}
			sdk.Serve(p)
			return nil
		},
	})
	return plugin
}
