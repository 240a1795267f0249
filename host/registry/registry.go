// Package registry finds and starts tcforge plugins: the bundled ones
// (compiled into the tcforge binary and run by re-executing it, so they
// still cross a real process and RPC boundary) and external executables
// named tcforge-plugin-NAME on the plugin path, which override bundled
// plugins of the same name.
package registry

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/tcforge/tcforge/internal/wire"
	"github.com/tcforge/tcforge/sdk"
)

// ExecPrefix is the file-name prefix of external plugin executables.
const ExecPrefix = "tcforge-plugin-"

// PathEnv is the environment variable holding extra plugin directories
// (separated by the OS list separator).
const PathEnv = "TCFORGE_PLUGIN_PATH"

// Source says where a plugin comes from.
type Source struct {
	Bundled bool
	Path    string // executable of an external plugin
	// SHA256 is the hex SHA-256 of an external plugin's executable, as
	// it was started (set by Open; "" for a bundled plugin).
	SHA256 string
	// InProcess is set by Open for a bundled plugin called in this
	// process (Options.InProcess). Otherwise the plugin runs in its own
	// process and every artifact its funcs return has been decoded, and
	// so validated, by the SDK's client: the host need not validate it
	// again.
	InProcess bool
}

// String returns "bundled" or the executable path.
func (s Source) String() string {
	if s.Bundled {
		return "bundled"
	}
	return s.Path
}

// NotFoundError reports a plugin name that is neither bundled nor on the
// plugin path: a configuration mistake, unlike a plugin that fails to start.
type NotFoundError struct {
	Name       string
	Bundled    []string
	SearchPath string
	// NotExecutable is a file on the plugin path with the plugin's
	// executable name that is not executable (or not a regular file),
	// if there is one: the likely mistake.
	NotExecutable string
}

// Error implements error.
func (e *NotFoundError) Error() string {
	msg := fmt.Sprintf("no plugin named %q (bundled: %s; searched %s)", e.Name, strings.Join(e.Bundled, ", "), e.SearchPath)
	if e.NotExecutable != "" {
		msg += fmt.Sprintf("; %s exists but is not an executable file (chmod +x it)", e.NotExecutable)
	}
	return msg
}

// Options configure a Registry.
type Options struct {
	// Builtins are the bundled plugins by name.
	Builtins map[string]sdk.Plugin
	// Dirs are searched in order for tcforge-plugin-NAME executables.
	Dirs []string
	// SelfCommand returns the command that serves the bundled plugins
	// names, one or a group (default: this executable with "plugin serve
	// NAME...").
	SelfCommand func(names ...string) (*exec.Cmd, error)
	// Group are the bundled plugins that may share a process: those of
	// them a run starts together (Start) are served by one process, which
	// starts once instead of once per plugin (wire.LaunchGroup). They
	// share its fate too: a crash, a timeout or the memory bound ends it
	// under all of them. The others, and a plugin opened on its own, get
	// a process each.
	Group []string
	// InProcess calls bundled plugins directly, without a subprocess
	// (a debugging and measuring switch; external plugins still run apart).
	InProcess bool
	// Log receives plugin logs (with the plugin name attached).
	Log zerolog.Logger
	// LockPath names the plugin lock file (see LockFile). If the file
	// exists, it pins external plugins: one missing from it or whose
	// executable's SHA-256 differs is refused. Empty: no pinning.
	LockPath string
	// CallTimeout bounds each plugin call (0: none): a plugin that has not
	// answered by then is killed and the call fails, naming it.
	CallTimeout time.Duration
	// StartTimeout bounds a plugin process's start: the go-plugin
	// handshake and the first Describe (0: a minute). A plugin that has
	// not completed them by then is killed and reported as a
	// *StartTimeoutError.
	StartTimeout time.Duration
	// MemoryLimit bounds each plugin process's resident memory in bytes
	// (0: none; see wire.Client.SetMemoryLimit): one over it is killed
	// and its call fails with a *wire.MemoryError.
	MemoryLimit int64
	// MapBudget is how many bytes of bundled plugins' answers the host
	// may map from their blob files rather than read (wire.Mapped; 0:
	// none). The mappings are released when the registry closes, so
	// nothing those plugins returned may be used after Close.
	MapBudget int64
}

// StartTimeoutError reports a plugin process that did not complete its
// start-up handshake within Options.StartTimeout.
type StartTimeoutError struct {
	Plugin  string
	Timeout time.Duration
}

// Error implements error.
func (e *StartTimeoutError) Error() string {
	return fmt.Sprintf("plugin %q did not complete its start-up handshake within %v (--start-timeout)", e.Plugin, e.Timeout)
}

// Registry opens plugins by name, starting each plugin process once and
// reusing it until Close.
type Registry struct {
	opts    Options
	mu      sync.Mutex
	clients map[string]*client

	lockOnce sync.Once
	lock     *Lock
	lockErr  error

	tempOnce sync.Once
	tempErr  error // see checkTemp

	// starts are the launches Start began; Close waits for them (after
	// cancelling them through stopStarts) so that no process a start
	// was making outlives the registry.
	starts     sync.WaitGroup
	startCtx   context.Context
	stopStarts context.CancelFunc

	// mapped maps the bundled plugins' answers (Options.MapBudget).
	mapped *wire.Mapped

	// procs are the processes started, in order (Processes), and
	// launchOf the record of each client's process.
	launchMu sync.Mutex
	procs    []Process
	launchOf map[*wire.Client]int
}

// Process is one plugin process a registry started.
type Process struct {
	// Plugins are the plugins it served: two or more shared it (a crash,
	// a timeout or the memory bound ended it under all of them).
	Plugins []string
	PID     int
	// Restart says it replaced a process of one of its plugins that had
	// ended (crashed, or killed at a call's timeout or the memory bound).
	Restart bool
	// Ended says how it ended, if it ended on its own or was killed
	// before the registry closed ("exit status 3"); "" otherwise.
	Ended string
}

// launched records the process of clients cs (one, or a group's), started
// to replace an ended one if restart.
func (r *Registry) launched(names []string, cs []*wire.Client, restart bool) {
	r.launchMu.Lock()
	defer r.launchMu.Unlock()
	if r.launchOf == nil {
		r.launchOf = map[*wire.Client]int{}
	}
	for _, c := range cs {
		r.launchOf[c] = len(r.procs)
	}
	r.procs = append(r.procs, Process{Plugins: slices.Clone(names), PID: cs[0].PID(), Restart: restart})
}

// ended records how c's process ended, if it has.
func (r *Registry) ended(c *wire.Client) {
	r.launchMu.Lock()
	defer r.launchMu.Unlock()
	if i, ok := r.launchOf[c]; ok && r.procs[i].Ended == "" {
		r.procs[i].Ended = c.Ended()
	}
}

// Processes returns the plugin processes the registry has started so
// far, in order, with how those that ended did.
func (r *Registry) Processes() []Process {
	r.mu.Lock()
	for _, e := range r.clients {
		if e.mu.TryLock() {
			if e.c != nil && e.c.Exited() {
				r.ended(e.c)
			}
			e.mu.Unlock()
		}
	}
	r.mu.Unlock()
	r.launchMu.Lock()
	defer r.launchMu.Unlock()
	out := slices.Clone(r.procs)
	for i := range out {
		out[i].Plugins = slices.Clone(out[i].Plugins)
	}
	return out
}

// checkTemp checks, once, that the temporary directory plugin processes
// make their sockets (and blob files) in takes files: without, every
// plugin failed to start with go-plugin's "plugin init error" and an exit
// status 0. It then removes the blob directories killed hosts left there
// (wire.SweepBlobDirs), once for all the plugins of the run.
func (r *Registry) checkTemp() error {
	r.tempOnce.Do(func() {
		dir, err := os.MkdirTemp("", "tcforge-probe-")
		if err != nil {
			r.tempErr = fmt.Errorf("the temporary directory %s takes no files (%w): plugin processes make their sockets there; set TMPDIR to a writable directory", os.TempDir(), errors.Unwrap(err))
			return
		}
		os.Remove(dir)
		wire.SweepBlobDirs()
	})
	return r.tempErr
}

// pinned returns the SHA-256 the lock file (read on first use) pins an
// external plugin to, nil when there is no lock file, or why the plugin
// may not run. Launch checks the private copy of the executable it runs
// against it (wire.Pin).
func (r *Registry) pinned(name, path string) ([]byte, error) {
	if r.opts.LockPath == "" {
		return nil, nil
	}
	r.lockOnce.Do(func() { r.lock, r.lockErr = ReadLock(r.opts.LockPath) })
	if r.lockErr != nil {
		return nil, r.lockErr
	}
	return r.lock.pinned(name, path)
}

// New returns a registry.
func New(opts Options) *Registry {
	if opts.SelfCommand == nil {
		opts.SelfCommand = func(names ...string) (*exec.Cmd, error) {
			self, err := os.Executable()
			if err != nil {
				return nil, fmt.Errorf("locating the tcforge executable: %w", err)
			}
			return exec.Command(self, append([]string{"plugin", "serve"}, names...)...), nil
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Registry{opts: opts, clients: map[string]*client{}, startCtx: ctx, stopStarts: cancel, mapped: wire.NewMapped(opts.MapBudget)}
}

// DefaultDirs returns the plugin directories from the environment variable
// and the per-user directory (~/.tcforge/plugins), plus extra in front.
func DefaultDirs(extra ...string) []string {
	dirs := append([]string(nil), extra...)
	if env := os.Getenv(PathEnv); env != "" {
		dirs = append(dirs, filepath.SplitList(env)...)
	}
	if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, ".tcforge", "plugins"))
	}
	return dirs
}

// external returns the path of an external plugin executable named name.
func (r *Registry) external(name string) (string, bool) {
	for _, d := range r.opts.Dirs {
		p := filepath.Join(d, ExecPrefix+name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, true
		}
	}
	return "", false
}

// notExecutable returns the first file on the plugin path named like
// plugin name's executable that external does not take (not executable,
// or a directory), or "".
func (r *Registry) notExecutable(name string) string {
	for _, d := range r.opts.Dirs {
		p := filepath.Join(d, ExecPrefix+name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// Names lists every plugin available (bundled and external), sorted.
func (r *Registry) Names() []string {
	seen := map[string]bool{}
	for n := range r.opts.Builtins {
		seen[n] = true
	}
	for _, d := range r.opts.Dirs {
		ents, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if n, ok := strings.CutPrefix(e.Name(), ExecPrefix); ok && n != "" {
				seen[n] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// Lookup tells where plugin name would be loaded from.
func (r *Registry) Lookup(name string) (Source, bool) {
	if p, ok := r.external(name); ok {
		return Source{Path: p}, true
	}
	if _, ok := r.opts.Builtins[name]; ok {
		return Source{Bundled: true}, true
	}
	return Source{}, false
}

// Open returns plugin name, starting its process on first use (or again if
// it has exited). The returned value's funcs cross the RPC boundary.
func (r *Registry) Open(ctx context.Context, name string) (sdk.Plugin, Source, error) {
	src, ok := r.Lookup(name)
	if !ok {
		return nil, Source{}, &NotFoundError{Name: name, Bundled: r.builtinNames(), SearchPath: r.searchPath(), NotExecutable: r.notExecutable(name)}
	}
	if src.Bundled && r.opts.InProcess {
		src.InProcess = true
		pl := r.opts.Builtins[name]
		if err := sdk.Validate(pl); err != nil {
			return nil, src, fmt.Errorf("plugin %q: %w", name, err)
		}
		return pl, src, nil
	}
	// One lock per plugin: different plugins start concurrently, callers
	// of the same one wait for its single launch.
	r.mu.Lock()
	e, ok := r.clients[name]
	if !ok {
		e = &client{}
		r.clients[name] = e
	}
	r.mu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.startErr != nil {
		// It failed to start: say so again rather than wait for it
		// again (a plugin that never completes its handshake would cost
		// --start-timeout at every pipeline using it).
		return nil, e.src, e.startErr
	}
	restart := false
	if e.c != nil {
		if !e.c.Exited() {
			return e.pl, e.src, nil
		}
		r.ended(e.c)
		e.c.Close()
		e.c, e.pl = nil, nil
		restart = true
	}
	if err := r.checkTemp(); err != nil {
		e.src, e.startErr = src, fmt.Errorf("starting plugin %q (%s): %w", name, src, err)
		return nil, src, e.startErr
	}
	var cmd *exec.Cmd
	var pin *wire.Pin
	if src.Bundled {
		var err error
		if cmd, err = r.opts.SelfCommand(name); err != nil {
			return nil, src, err
		}
	} else {
		want, err := r.pinned(name, src.Path)
		if err != nil {
			return nil, src, err
		}
		// The executable is opened once, copied where no one can change
		// it and hashed on the way; the copy is what runs (wire.Pin), so
		// the SHA-256 the lock checks and the row names is of what ran.
		pin = &wire.Pin{Want: want}
		cmd = exec.Command(src.Path)
	}
	lctx, cancel := r.launchContext(ctx, cmd)
	defer cancel()
	c, pl, err := Launch(lctx, name, cmd, pin, r.opts.Log)
	if pin != nil && pin.Got != nil {
		src.SHA256 = hex.EncodeToString(pin.Got)
	}
	if err != nil && r.startTimedOut(ctx, lctx) {
		e.src, e.startErr = src, &StartTimeoutError{Plugin: name, Timeout: r.opts.StartTimeout}
		return nil, src, e.startErr
	}
	if errors.Is(err, wire.ErrChecksum) {
		return nil, src, r.lock.mismatch(name, src.Path, src.SHA256)
	}
	if err != nil {
		err = fmt.Errorf("starting plugin %q (%s): %w", name, src, err)
		if ctx.Err() == nil {
			e.src, e.startErr = src, err
		}
		return nil, src, err
	}
	if _, ok := r.opts.Builtins[name]; ok && !src.Bundled {
		r.opts.Log.Warn().Str("plugin", name).Str("path", src.Path).Str("sha256", src.SHA256).
			Msg("an external plugin overrides the bundled one of the same name")
	}
	r.configure(c, src)
	r.launched([]string{name}, []*wire.Client{c}, restart)
	e.c, e.pl, e.src = c, pl, src
	return pl, src, nil
}

// configure sets what the options say of a client just started from src:
// its call timeout, its memory bound and, for a bundled plugin, the
// mapping of its answers.
func (r *Registry) configure(c *wire.Client, src Source) {
	c.SetCallTimeout(r.opts.CallTimeout)
	c.SetMemoryLimit(r.opts.MemoryLimit)
	if src.Bundled {
		c.SetMapped(r.mapped)
	}
}

// Mapped returns how many bytes of plugins' answers the registry has
// mapped rather than read (Options.MapBudget).
func (r *Registry) Mapped() int64 { return r.mapped.Mapped() }

// goMemLimit returns env with GOMEMLIMIT set to 7/8 of limit bytes, unless
// env sets it already: a Go plugin's garbage collector then works to keep
// its heap under the memory bound it would be killed at. Without it, a
// long-lived plugin's heap grows to twice what was live after the last
// collection before the next one; after a call that built a 4 GB circuit,
// garbage alone can carry the next such call over the bound.
func goMemLimit(env []string, limit int64) []string {
	for _, kv := range env {
		if strings.HasPrefix(kv, "GOMEMLIMIT=") {
			return env
		}
	}
	return append(env, fmt.Sprintf("GOMEMLIMIT=%d", limit/8*7))
}

// Start begins launching the named plugins (each process once), all at
// once, and returns without waiting for them: a run starts every plugin
// it will need as soon as its configs are parsed, and checks its
// pipelines while the processes start (an Open of a plugin being started
// waits for that start alone). Errors are left for Open to report when
// the plugin is used. Cancelling ctx, or Close, aborts the starts; Close
// waits for them.
//
// The plugins of Options.Group among names share one process.
func (r *Registry) Start(ctx context.Context, names []string) {
	seen := map[string]bool{}
	var alone, group []string
	for _, n := range names {
		if seen[n] {
			continue
		}
		seen[n] = true
		src, ok := r.Lookup(n)
		switch {
		case !ok || src.Bundled && r.opts.InProcess:
			// Nothing to start: Open reports it, or calls it in this process.
		case src.Bundled && slices.Contains(r.opts.Group, n):
			group = append(group, n)
		default:
			alone = append(alone, n)
		}
	}
	held, entries := r.holdGroup(group)
	for _, n := range group {
		if !slices.Contains(held, n) {
			alone = append(alone, n)
		}
	}
	if len(held) > 0 {
		r.starting(ctx, func(sctx context.Context) { r.launchGroup(sctx, held, entries) })
	}
	for _, n := range alone {
		r.starting(ctx, func(sctx context.Context) { _, _, _ = r.Open(sctx, n) })
	}
}

// starting runs start in a goroutine Close waits for, with a context that
// ctx and Close both end.
func (r *Registry) starting(ctx context.Context, start func(context.Context)) {
	r.starts.Go(func() {
		sctx, stop := context.WithCancel(ctx)
		defer stop()
		defer context.AfterFunc(r.startCtx, stop)()
		if sctx.Err() == nil {
			start(sctx)
		}
	})
}

// holdGroup locks the entries of the plugins of names that need a process
// (no live one, no failed start) and that no Open is starting, and returns
// their names and entries, sorted by name, if there are two or more (else
// it holds none). The caller launches them and unlocks the entries.
func (r *Registry) holdGroup(names []string) ([]string, []*client) {
	if len(names) < 2 {
		return nil, nil
	}
	names = slices.Sorted(slices.Values(names))
	var held []string
	var entries []*client
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range names {
		e, ok := r.clients[n]
		if !ok {
			e = &client{}
			r.clients[n] = e
		}
		if !e.mu.TryLock() {
			continue // an Open is starting it
		}
		if e.startErr != nil || e.c != nil && !e.c.Exited() {
			e.mu.Unlock()
			continue
		}
		held, entries = append(held, n), append(entries, e)
	}
	if len(held) < 2 {
		for _, e := range entries {
			e.mu.Unlock()
		}
		return nil, nil
	}
	return held, entries
}

// launchGroup starts one process serving the bundled plugins names and
// sets their entries (held locked by holdGroup, unlocked here) as Open
// would have: each plugin's client, or why it failed to start.
func (r *Registry) launchGroup(ctx context.Context, names []string, entries []*client) {
	defer func() {
		for _, e := range entries {
			e.mu.Unlock()
		}
	}()
	src := Source{Bundled: true}
	// A group that cannot start leaves its plugins to start alone when
	// opened (Open), each then saying for itself what goes wrong: only a
	// start that timed out is not tried again.
	cmd, err := r.opts.SelfCommand(names...)
	if err != nil || r.checkTemp() != nil {
		return
	}
	lctx, cancel := r.launchContext(ctx, cmd)
	defer cancel()
	cs, err := wire.LaunchGroup(lctx, names, cmd, sdk.ProtocolVersion, r.opts.Log)
	if err != nil {
		if r.startTimedOut(ctx, lctx) {
			for i, e := range entries {
				e.src, e.startErr = src, &StartTimeoutError{Plugin: names[i], Timeout: r.opts.StartTimeout}
			}
		} else if ctx.Err() == nil {
			r.opts.Log.Debug().Err(err).Strs("plugins", names).Msg("the plugin group did not start; its plugins start alone")
		}
		return
	}
	r.launched(names, cs, false)
	for i, e := range entries {
		c := cs[i]
		pl, err := validPlugin(c)
		if err != nil {
			e.src, e.startErr = src, fmt.Errorf("starting plugin %q (%s): %w", names[i], src, err)
			continue
		}
		r.configure(c, src)
		e.c, e.pl, e.src = c, pl, src
	}
}

// launchContext sets cmd's memory bound and returns the context bounding a
// launch (Options.StartTimeout).
func (r *Registry) launchContext(ctx context.Context, cmd *exec.Cmd) (context.Context, context.CancelFunc) {
	if r.opts.MemoryLimit > 0 {
		cmd.Env = goMemLimit(cmd.Environ(), r.opts.MemoryLimit)
	}
	if r.opts.StartTimeout > 0 {
		return context.WithTimeout(ctx, r.opts.StartTimeout)
	}
	return ctx, func() {}
}

// startTimedOut reports whether a failed launch under lctx (from
// launchContext(ctx)) failed because --start-timeout passed.
func (r *Registry) startTimedOut(ctx, lctx context.Context) bool {
	// go-plugin's own start timer (set from lctx's deadline) can fire before
	// lctx's timer has marked it done, on a loaded machine: the deadline
	// having passed is what counts.
	deadline, timed := lctx.Deadline()
	return ctx.Err() == nil && r.opts.StartTimeout > 0 && timed && (errors.Is(lctx.Err(), context.DeadlineExceeded) || !time.Now().Before(deadline))
}

// Externals returns every external plugin on the plugin path by name, with
// the executable that would be run (the first found in path order).
func (r *Registry) Externals() map[string]string {
	out := map[string]string{}
	for _, n := range r.Names() {
		if p, ok := r.external(n); ok {
			out[n] = p
		}
	}
	return out
}

func (r *Registry) builtinNames() []string {
	return slices.Sorted(maps.Keys(r.opts.Builtins))
}

func (r *Registry) searchPath() string {
	if len(r.opts.Dirs) == 0 {
		return "no plugin directories"
	}
	return strings.Join(r.opts.Dirs, string(os.PathListSeparator))
}

// client is one plugin's process, started at most once at a time.
type client struct {
	mu  sync.Mutex
	c   *wire.Client
	pl  sdk.Plugin // c's plugin value
	src Source     // where c was started from
	// startErr is why the plugin failed to start, if it did: it is not
	// started again.
	startErr error
}

// Close stops every plugin process, all at once (each stop may take up
// to about two seconds for a frozen plugin; see wire.Client.Close). It
// first aborts the starts Start began and waits for them. Last, it
// releases the mapped answers (Options.MapBudget): nothing a bundled
// plugin returned may be used after Close.
func (r *Registry) Close() {
	defer r.mapped.Release()
	r.stopStarts()
	r.starts.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	var wg sync.WaitGroup
	for n, e := range r.clients {
		wg.Go(func() {
			e.mu.Lock()
			defer e.mu.Unlock()
			if e.c != nil {
				e.c.Close()
			}
		})
		delete(r.clients, n)
	}
	wg.Wait()
}
