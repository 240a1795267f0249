// Package cli is the tcforge command line: run pipelines, list plugins,
// serve a bundled plugin (internal).
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"os/signal"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
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
	"github.com/tcforge/tcforge/python"
	"github.com/tcforge/tcforge/sdk"
)

// Env is what the command line runs against: its streams and how to start
// bundled plugins. Tests substitute SelfCommand.
type Env struct {
	Stdout, Stderr io.Writer
	// SelfCommand serves bundled plugins, one or a group (default:
	// re-execute this binary).
	SelfCommand func(names ...string) (*exec.Cmd, error)
	// Builtins are the bundled plugins (default: builtin.Plugins()).
	Builtins map[string]sdk.Plugin
	// Group are the bundled plugins that a run serves from one process
	// (registry.Options.Group; default, with Builtins nil: all of
	// builtin.Plugins()). --isolate-plugins gives each its own.
	Group []string
}

// exitStatus is an error that carries the process exit status Main returns
// (plugin processes that exit are wire.ExitError).
type exitStatus struct{ Code int }

// Error reports the exit status.
func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

// usageError is a mistake in the command line itself (an unknown command
// or flag, a missing FILE, a flag value out of range): reported with the
// reason and the command's usage, exit status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usageArgs makes the errors of an argument check usage errors.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return usageError{err}
		}
		return nil
	}
}

// usagef returns a usageError.
func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// Main runs the command line with args (without the program name) and
// returns the process exit status: 0 success, 1 a failed point or a
// configuration mistake, 2 a command-line mistake (with usage), 128+N
// when stopped by signal N (130 Ctrl-C, 143 SIGTERM, 141 standard output
// closed).
func Main(ctx context.Context, env Env, args []string) int {
	if env.Builtins == nil {
		env.Builtins = builtin.Plugins()
		env.Group = slices.Sorted(maps.Keys(env.Builtins))
	}
	// A write to a closed standard output (`tcforge … | head -2`) fails
	// with EPIPE instead of killing the process before it stops its
	// plugins; run stops on it (see stdoutGuard), the others finish.
	pipe := make(chan os.Signal, 1)
	signal.Notify(pipe, syscall.SIGPIPE)
	defer signal.Stop(pipe)
	cmd := newRoot(&env)
	if c, _, err := cmd.Find(args); err == nil && c.Name() == "run" && c.Parent() == cmd {
		// A run catches SIGTERM and Ctrl-C from its first moment (the
		// default action would end it with its plugins starting and no
		// mark written); stopOnSignals takes them over.
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
		defer signal.Stop(sigs)
		ctx = context.WithValue(ctx, earlySignals{}, sigs)
	}
	cmd.SetArgs(args)
	cmd.SetOut(env.Stdout)
	cmd.SetErr(env.Stderr)
	c, err := cmd.ExecuteContextC(ctx)
	var ee exitStatus
	var ue usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.Code
	case errors.As(err, &ue) || strings.HasPrefix(err.Error(), "unknown command "):
		fmt.Fprintf(env.Stderr, "Error: %v\n\n%s", err, c.UsageString())
		return 2
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
	isolate    bool // --isolate-plugins
	lockPath   string
	timeout    time.Duration
	startup    time.Duration // --start-timeout
	memoryMiB  int64         // --plugin-memory
	memorySet  bool          // --plugin-memory given (else defaultPluginMemory bounds it)
	maxEdges   int64         // run's --max-edges
	maxPoints  int64         // run's --max-points
	hostMiB    int64         // run's --memory
	hostBytes  int64         // the bound it gives (hostMemory)
	hostFrom   string        // and where that comes from
	jobs       int           // run's --jobs

	// run's --export and --export-dense-max
	export    string
	exportMax int64
	// run's --export-python and --export-module-timeout (python.ModuleWriter)
	exportPython  string
	moduleTimeout time.Duration
	shard         string // run's --shard I/N (shard.go)
}

func newRoot(env *Env) *cobra.Command {
	g := &globals{}
	root := &cobra.Command{
		Use:           "tcforge",
		Short:         "Compile hash constructions into layered threshold circuits and transformer weights",
		Long:          rootLong,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	pf := root.PersistentFlags()
	pf.StringVar(&g.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	pf.StringVar(&g.logFormat, "log-format", "auto", "log format: auto (console on a terminal, JSON otherwise), console, json")
	pf.StringArrayVar(&g.pluginDirs, "plugin-dir", nil, "directory searched for tcforge-plugin-NAME executables (repeatable; also $"+registry.PathEnv+" and ~/.tcforge/plugins)")
	pf.DurationVar(&g.timeout, "timeout", 30*time.Minute, "give up on a plugin call after this long and kill the plugin (0: never)")
	pf.DurationVar(&g.startup, "start-timeout", 10*time.Second, "give up on a plugin that has not completed its start-up handshake after this long and kill it (0: a minute)")
	pf.Int64Var(&g.memoryMiB, "plugin-memory", 8192, "kill a plugin process whose resident memory exceeds this many MiB, failing its call (0: no bound; Linux; by default at most half of RLIMIT_AS and of the cgroup's memory limit)")
	pf.StringVar(&g.lockPath, "lock", registry.LockFile, "plugin lock file pinning external plugins' SHA-256 (see \"tcforge plugins lock\"); ignored if absent")
	pf.BoolVar(&g.inProcess, "in-process", false, "call bundled plugins in-process instead of in subprocesses (debugging and measuring)")
	pf.BoolVar(&g.isolate, "isolate-plugins", false, "run every plugin in a process of its own (bundled plugins otherwise share one: a crash or timeout of one then ends the others' calls too)")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		g.memorySet = cmd.Flags().Changed("plugin-memory")
		return g.validate()
	}
	root.AddCommand(newRunCmd(env, g), newPluginsCmd(env, g), newPluginCmd(env), newInspectCmd(env, g), newMergeCmd(env, g), newSlurmCmd(env), newKubernetesCmd(env))
	return root
}

// logLevels are the values --log-level takes.
var logLevels = []string{"trace", "debug", "info", "warn", "error", "disabled"}

// validate rejects global flag values out of range, before anything runs.
func (g *globals) validate() error {
	if !slices.Contains(logLevels, g.logLevel) {
		return usagef("--log-level must be one of %s, got %q", strings.Join(logLevels, ", "), g.logLevel)
	}
	if !slices.Contains([]string{"auto", "console", "json"}, g.logFormat) {
		return usagef("--log-format must be auto, console or json, got %q", g.logFormat)
	}
	if g.timeout < 0 {
		return usagef("--timeout must be a duration of at least 0 (0: no limit), got %s", g.timeout)
	}
	if g.memoryMiB < 0 {
		return usagef("--plugin-memory must be at least 0 (MiB; 0: no bound), got %d", g.memoryMiB)
	}
	if g.memoryMiB > maxMiB {
		return usagef("--plugin-memory must be at most %d (MiB), got %d", maxMiB, g.memoryMiB)
	}
	if g.startup < 0 {
		return usagef("--start-timeout must be a duration of at least 0 (0: a minute), got %s", g.startup)
	}
	return nil
}

// atMost rejects the value v of flag --name if it is above max (a count
// of MiB whose bytes would overflow, say); unit says what v counts.
func atMost(name string, v, max int64, unit string) error {
	if v > max {
		return usagef("--%s must be at most %d%s, got %d", name, max, unit, v)
	}
	return nil
}

// atLeast rejects the value v of flag --name if it is below min; meaning
// explains a special value (", 0: no limit").
func atLeast(name string, v, min int64, meaning string) error {
	if v < min {
		return usagef("--%s must be at least %d%s, got %d", name, min, meaning, v)
	}
	return nil
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

// group returns the bundled plugins that share a process (Env.Group),
// none with --isolate-plugins.
func (g *globals) group(env *Env) []string {
	if g.isolate {
		return nil
	}
	return env.Group
}

// pluginMemory is the plugin processes' memory bound in bytes:
// --plugin-memory if given, else its default, within what the machine
// gives (defaultPluginMemory).
func (g *globals) pluginMemory() int64 {
	if g.memorySet {
		return g.memoryMiB << 20
	}
	return defaultPluginMemory()
}

func (g *globals) registry(env *Env, log zerolog.Logger) *registry.Registry {
	return registry.New(registry.Options{
		Builtins:     env.Builtins,
		Dirs:         registry.DefaultDirs(g.pluginDirs...),
		SelfCommand:  env.SelfCommand,
		InProcess:    g.inProcess,
		Group:        g.group(env),
		Log:          log,
		LockPath:     g.lockPath,
		CallTimeout:  g.timeout,
		StartTimeout: g.startup,
		MemoryLimit:  g.pluginMemory(),
		MapBudget:    mapBudget(g.hostBytes),
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
		// cpuProfile is --cpuprofile's file.
		cpuProfile string
	)
	cmd := &cobra.Command{
		Use:   "run [flags] FILE...",
		Short: "Run the pipelines of HCL files: build, layer, verify, compare with expectations",
		Long: "Run every pipeline block of the given HCL files. Each matrix point is built by the construction plugin,\n" +
			"verified against the construction's reference, layered by each layerer, verified against the logic circuit\n" +
			"and compared with the pipeline's expect blocks. Exits non-zero if any point fails.\n\n" +
			"Exit status: 0 every point verified and met its expectations; 1 one did not, or a configuration mistake;\n" +
			"2 a command-line mistake; 130 interrupted (Ctrl-C), 143 terminated (SIGTERM), 141 standard output closed:\n" +
			"the finished points are written, marked incomplete, with report.html.",
		Example: "  tcforge run --out out configs/paper/keccak.hcl",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("missing FILE: run needs at least one pipeline file")
			}
			return nil
		},
		PreRunE: func(cmd *cobra.Command, args []string) error {
			fl := cmd.Flags()
			if fl.Changed("samples") {
				if err := atLeast("samples", int64(samples), 1, ""); err != nil {
					return err
				}
			}
			for _, err := range []error{
				atLeast("jobs", int64(g.jobs), 1, ""),
				atLeast("max-edges", g.maxEdges, 0, " (0: no limit)"),
				atLeast("max-points", g.maxPoints, 0, " (0: no limit)"),
				atLeast("memory", g.hostMiB, 0, " (MiB; 0: automatic)"),
				atMost("memory", g.hostMiB, maxMiB, " (MiB)"),
				atLeast("draw-max-gates", int64(ro.maxGates), 0, ""),
				atLeast("export-dense-max", g.exportMax, 0, " (0: always CSR)"),
			} {
				if err != nil {
					return err
				}
			}
			if _, err := progress.Enabled(progress.Mode(prog), io.Discard); err != nil {
				return usagef("--progress: %w", err)
			}
			if _, err := path.Match(ro.draw, ""); err != nil {
				return usagef("--draw %q: %w", ro.draw, err)
			}
			if out != "" {
				if err := checkOutDir("--out", out); err != nil {
					return usageError{err}
				}
			}
			if g.export != "" {
				// Before the mapping work, not at its end.
				if err := checkOutDir("--export", g.export); err != nil {
					return usageError{err}
				}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			on, err := progress.Enabled(progress.Mode(prog), env.Stderr)
			if err != nil {
				return fmt.Errorf("--progress: %w", err)
			}
			// Logs go through the bar's writer, which keeps them off the bar's line.
			ro.bar = progress.New(env.Stderr, on, 0)
			defer ro.bar.Finish() // also when the run fails or is interrupted
			ctx, stopWith, stop := stopOnSignals(cmd.Context())
			defer stop()
			renv := *env
			renv.Stderr = ro.bar.Writer()
			renv.Stdout = &stdoutGuard{w: env.Stdout, stop: stopWith}
			env := &renv
			log, err := g.logger(env.Stderr)
			if err != nil {
				return err
			}
			ro.dir, ro.log = out, log
			g.hostBytes, g.hostFrom = hostMemory(g.hostMiB)
			ro.memLimit, ro.memFrom = g.hostBytes, g.hostFrom
			defer boundMemory(ctx, g.hostBytes, stopWith)()
			log.Debug().Int64("mib", g.hostBytes>>20).Str("from", g.hostFrom).Msg("the host's memory bound")
			if cpuProfile != "" {
				stopProfile, err := startCPUProfile(cpuProfile)
				if err != nil {
					return err
				}
				defer stopProfile()
			}
			return runFiles(ctx, env, g, log, args, out, samples, seed, ro)
		},
	}
	cmd.Flags().StringVar(&cpuProfile, "cpuprofile", "", "write the host process's CPU profile to FILE (with --in-process it covers the plugins too; go tool pprof FILE)")
	cmd.Flags().StringVar(&prog, "progress", "auto", "progress bar on stderr: auto (on a terminal, not in CI), always, never")
	cmd.Flags().BoolVar(&ro.png, "png", true, "with --out, also write the plots as PNG")
	cmd.Flags().StringVar(&ro.draw, "draw", "", "with --out, draw the layered circuits (DIR/circuits/*.svg) of the pipelines matching this glob (--draw alone: all), points of at most --draw-max-gates gates")
	cmd.Flags().Lookup("draw").NoOptDefVal = "*"
	cmd.Flags().IntVar(&ro.maxGates, "draw-max-gates", draw.MaxGates, "largest circuit --draw draws")
	cmd.Flags().StringVar(&out, "out", "", "directory for result files: DIR/<pipeline>.csv, .json, .md, DIR/plots/*.svg|png, DIR/report.html, DIR/"+report.ManifestFile+" (checked before anything runs)")
	cmd.Flags().IntVar(&g.jobs, "jobs", runtime.NumCPU(), "points of a pipeline run at once (at least 1)")
	cmd.Flags().Int64Var(&g.maxEdges, "max-edges", 50_000_000, "refuse points whose construction estimates more logic-circuit edges than this (0: no limit)")
	cmd.Flags().Int64Var(&g.hostMiB, "memory", 0, "the host's own memory bound in MiB (0: $GOMEMLIMIT if set, else half the least of the physical memory, RLIMIT_AS and the cgroup's memory limit): model checks stream their samples to stay within half of it or are refused before they start, and the run stops, writing what finished, if the host grows past it (docs/robustness.md)")
	cmd.Flags().Int64Var(&g.maxPoints, "max-points", 100_000, "refuse a run of more matrix points than this in all, before any is made (0: no limit)")
	cmd.Flags().IntVar(&samples, "samples", 0, "random inputs per point for verification, at least 1 (overrides each pipeline's samples)")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "seed of the random verification inputs")
	cmd.Flags().StringVar(&g.export, "export", "", "write every verified model to DIR as safetensors + JSON config (DIR/<pipeline>.<point>.<layerer>.<arch>.{safetensors,json}; docs/mappers.md)")
	cmd.Flags().StringVar(&g.shard, "shard", "", "run shard I of N (0 ≤ I < N) of every pipeline's points, by a hash of pipeline name and point, and with --out write DIR/"+ShardFile+" for tcforge merge (docs/clusters.md)")
	cmd.Flags().Int64Var(&g.exportMax, "export-dense-max", 256<<20, "with --export, write a model's tensors dense when its dense float32 form takes at most this many bytes, else CSR (0: always CSR)")
	cmd.Flags().StringVar(&g.exportPython, "export-python", python.DefaultPython, "with --export, the Python interpreter (with PyTorch) that writes each stock model's byte module beside it, DIR/NAME.pt (TorchScript) and DIR/NAME.onnx (docs/export.md); where it or torch is missing the run logs one line and goes on (\"none\": write none)")
	cmd.Flags().DurationVar(&g.moduleTimeout, "export-module-timeout", python.DefaultModuleTimeout, "with --export, stop writing one model's byte module after this long (the model stays exported; the run goes on)")
	return cmd
}

// checkOutDir checks that the directory dir of flag (--out, --export) can
// be written before anything runs: an existing directory we can create
// files in, or a path whose nearest existing ancestor is one. It creates
// nothing that stays.
func checkOutDir(flag, dir string) error {
	at := dir
	for {
		fi, err := os.Stat(at)
		switch {
		case err == nil && !fi.IsDir() && at == dir:
			return fmt.Errorf("%s %s: is a file, not a directory", flag, dir)
		case err == nil && !fi.IsDir():
			return fmt.Errorf("%s %s: %s is a file, not a directory", flag, dir, at)
		case err == nil:
			f, err := os.CreateTemp(at, ".tcforge-probe-*")
			if err != nil {
				var pe *fs.PathError
				if errors.As(err, &pe) {
					err = pe.Err
				}
				return fmt.Errorf("%s %s: cannot create files in %s: %w", flag, dir, at, err)
			}
			f.Close()
			return os.Remove(f.Name())
		case !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
			return fmt.Errorf("%s %s: %w", flag, dir, err)
		}
		parent := filepath.Dir(at)
		if parent == at {
			return fmt.Errorf("%s %s: no existing parent directory", flag, dir)
		}
		at = parent
	}
}

// pluginProcesses returns the plugin processes reg started, for the
// manifest.
func pluginProcesses(reg *registry.Registry) []report.PluginProcess {
	var out []report.PluginProcess
	for _, p := range reg.Processes() {
		out = append(out, report.PluginProcess{Plugins: p.Plugins, Shared: len(p.Plugins) > 1, PID: p.PID, Restart: p.Restart, Ended: p.Ended})
	}
	return out
}

// stopCause is why a run stopped early: a signal, or standard output
// closed. code is the exit status: 128 + the signal's number, as a shell
// reports a process the signal killed.
type stopCause struct {
	code int
	why  string
}

func (c stopCause) Error() string { return c.why }

// stopped returns why ctx was cancelled: a stopCause, or Ctrl-C for a
// context cancelled from outside (as tests do).
func stopped(ctx context.Context) stopCause {
	var c stopCause
	if errors.As(context.Cause(ctx), &c) {
		return c
	}
	return stopCause{code: 128 + int(syscall.SIGINT), why: "interrupted"}
}

// earlySignals is the context key of the channel Main catches a run's
// signals on before the run command starts (stopOnSignals reads it).
type earlySignals struct{}

// stopOnSignals returns a context cancelled on Ctrl-C (SIGINT) or
// SIGTERM, each handled alike: the run stops and writes the finished
// points. A second signal kills at once (the default action is restored
// after the first). stopWith cancels the context with a cause (standard
// output closed, see stdoutGuard); stop releases the signals.
func stopOnSignals(parent context.Context) (ctx context.Context, stopWith func(stopCause), stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sigs, ok := parent.Value(earlySignals{}).(chan os.Signal)
	if !ok {
		sigs = make(chan os.Signal, 1)
		signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	}
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			signal.Reset(os.Interrupt, syscall.SIGTERM) // a second one kills at once
			c := stopCause{code: 128 + int(syscall.SIGINT), why: "interrupted"}
			if s == syscall.SIGTERM {
				c = stopCause{code: 128 + int(syscall.SIGTERM), why: "terminated (SIGTERM)"}
			}
			cancel(c)
		case <-done:
		}
	}()
	return ctx, func(c stopCause) { cancel(c) }, func() {
		close(done)
		signal.Stop(sigs)
		cancel(nil)
	}
}

// stdoutGuard is standard output for a run: when a write fails because
// the reader went away (`tcforge run … | head -2`), it stops the run as an
// interrupt does (exit status 141, as for SIGPIPE); the files of --out are
// still written.
type stdoutGuard struct {
	w    io.Writer
	stop func(stopCause)
}

// Write implements io.Writer.
func (g *stdoutGuard) Write(p []byte) (int, error) {
	n, err := g.w.Write(p)
	if err != nil {
		code := 128 + int(syscall.SIGPIPE)
		if !errors.Is(err, syscall.EPIPE) {
			code = 1
		}
		g.stop(stopCause{code: code, why: "standard output closed (" + err.Error() + ")"})
	}
	return n, err
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
	var pipelines []*config.Pipeline
	for _, f := range files {
		pipelines = append(pipelines, f.Pipelines...)
	}
	// Refuse a huge sweep before a single point is made.
	if d := config.CheckPointLimit(pipelines, g.maxPoints); d.HasErrors() {
		printDiags(d)
		return exitStatus{1}
	}
	// Every exported model gets a file name of its own, or nothing runs.
	if g.export != "" {
		if d := run.CheckExportNames(pipelines); d.HasErrors() {
			printDiags(d)
			return exitStatus{1}
		}
	}
	reg := g.registry(env, log)
	defer func() {
		log.Debug().Int64("mapped_mib", reg.Mapped()>>20).Int64("budget_mib", mapBudget(g.hostBytes)>>20).Msg("plugin answers mapped rather than read")
		reg.Close()
	}()
	ro.processes = func() []report.PluginProcess { return pluginProcesses(reg) }
	runner := &run.Runner{Registry: reg, Log: log, Samples: samples, Seed: seed, Diagnostics: printDiags, MaxEdges: g.maxEdges, Jobs: g.jobs, MemoryLimit: g.hostBytes,
		Export: g.export, ExportDenseLimit: g.exportMax, SaveDetail: ro.saveDetail}
	if g.export != "" { // "none" writes no module but removes a stale one
		mw := python.NewModuleWriter(g.exportPython, g.moduleTimeout, log)
		defer mw.Close()
		runner.Modules = mw
	}
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

	// Start every plugin the pipelines name at once, not one by one, and
	// check the pipelines while the processes start.
	var names []string
	for _, p := range pipelines {
		for _, b := range append(append([]*config.Block{p.Construction}, p.Layerers...), p.Mappers...) {
			names = append(names, b.Name)
		}
	}
	reg.Start(ctx, names)
	// Check everything before running anything: a config mistake changes
	// nothing. The pipelines are checked at once (their checks are mostly
	// waiting for plugin answers); the diagnostics keep the files' order.
	ro.checking(runner, pipelines)
	perPipeline := make([]hcl.Diagnostics, len(pipelines))
	var wg sync.WaitGroup
	for i, p := range pipelines {
		wg.Go(func() { perPipeline[i] = runner.Check(ctx, p) })
	}
	wg.Wait()
	var checked hcl.Diagnostics
	for _, d := range perPipeline {
		checked = append(checked, d...)
	}
	runner.Checking = nil
	if ctx.Err() != nil {
		stop := stopped(ctx)
		log.Warn().Str("why", stop.why).Msg("stopped during the check before the run: nothing was written")
		return exitStatus{stop.code}
	}
	printDiags(checked)
	if checked.HasErrors() {
		return exitStatus{1}
	}
	if err := ro.begin(paths, pipelines, start); err != nil {
		return err
	}
	defer ro.release()
	ro.watch(runner, pipelines)
	failed := 0
	var results []*run.Result // for the frontier table after the last pipeline
	for _, p := range pipelines {
		res, err := runner.Run(ctx, p)
		if err != nil && ctx.Err() == nil {
			log.Error().Err(err).Str("pipeline", p.Name).Msg("pipeline failed")
			failed++
		}
		if res == nil {
			continue
		}
		if ctx.Err() != nil && !res.Complete {
			res.Stopped = stopped(ctx).why
		}
		ro.bar.Finish() // the table goes where the bar may be
		if err := report.WriteTable(env.Stdout, res); err != nil && ctx.Err() == nil {
			return err
		}
		results = append(results, res)
		// Files are written even when stopped: the finished points.
		if err := ro.pipeline(context.WithoutCancel(ctx), runner, res); err != nil {
			return ro.abort(env.Stderr, err)
		}
		if ctx.Err() != nil {
			// Stopped: the finished points of this pipeline are written;
			// later pipelines do not start.
			stop := stopped(ctx)
			log.Warn().Str("pipeline", p.Name).Int("rows", len(res.Rows)).Str("why", stop.why).
				Msg("stopped: wrote the finished points; later pipelines did not run")
			if shard != nil {
				// Marked incomplete within a scheduler's KillWait, so that
				// merge names the shard (shard.go).
				shard.stop(res, stop.why)
				if path, err := shard.write(out); err != nil {
					log.Error().Err(err).Msg("writing the stopped shard's rows")
				} else {
					log.Warn().Str("file", path).Msg("wrote the shard's finished rows, marked incomplete, for tcforge merge")
				}
			}
			if err := ro.finish("stopped: " + stop.why); err != nil {
				return ro.abort(env.Stderr, err)
			}
			ro.writeSummary(env.Stdout, len(pipelines), failed, time.Since(start))
			return exitStatus{stop.code}
		}
		if shard != nil {
			shard.add(res)
		}
		// A shard may hold none of a pipeline's points.
		if err == nil && !res.OK() && !(shard != nil && res.Complete && len(res.Rows) == 0) {
			failed++
		}
	}
	status := "ok"
	if failed > 0 {
		status = "failed"
	}
	if shard != nil {
		path, err := shard.write(out)
		if err != nil {
			return ro.abort(env.Stderr, err)
		}
		log.Info().Str("file", path).Msg("wrote the shard's rows for tcforge merge")
	}
	if err := ro.finish(status); err != nil {
		return ro.abort(env.Stderr, err)
	}
	if err := report.WriteAllShapes(env.Stdout, results); err != nil {
		return err
	}
	ro.writeSummary(env.Stdout, len(pipelines), failed, time.Since(start))
	if failed > 0 {
		return exitStatus{1}
	}
	return nil
}
