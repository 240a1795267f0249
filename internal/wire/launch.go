package wire

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-plugin"
	"github.com/rs/zerolog"
	"google.golang.org/grpc"

	"github.com/tcforge/tcforge/internal/wire/proto"
)

// Launch starts the plugin executable cmd (a fresh, unstarted *exec.Cmd),
// performs the go-plugin handshake over gRPC with AutoMTLS, asks the plugin
// to describe itself, checks that it speaks protocol and, if name is
// not empty, that it is named name, and returns a Client for it.
//
// With pin (an external plugin's executable), a private copy of the
// executable runs, hashed on the way (see Pin): the hash is of what ran,
// and one the pin does not want is refused (ErrChecksum) before anything
// runs.
//
// The plugin process leads a process group of its own, which Close kills
// whole: children a plugin started (a shell script's, say) do not outlive
// it.
//
// The plugin's log lines are written to log with a "plugin" field naming
// it; its level is passed to the plugin (LogLevelEnv). Canceling ctx aborts
// the start. The caller must Close the client.
func Launch(ctx context.Context, name string, cmd *exec.Cmd, protocol int, pin *Pin, log zerolog.Logger) (*Client, error) {
	if cmd == nil {
		return nil, fmt.Errorf("plugin %q: no command to launch", name)
	}
	label := name
	if label == "" {
		label = filepath.Base(cmd.Path)
	}
	p, rpc, shown, err := launch(ctx, label, false, cmd, protocol, pin, log)
	if err != nil {
		return nil, err
	}
	c, err := p.client(ctx, name, "", rpc, protocol, log)
	if err != nil {
		p.close()
		return nil, err
	}
	if name == "" && c.name != "" {
		shown.Store(&c.name)
	}
	return c, nil
}

// LaunchGroup starts cmd, which serves the plugins names in one process
// (ServeGroup), as Launch does, and returns a Client for each, in order:
// every call names its plugin, and the process is started, and its
// start-up paid for, once. The plugins share its fate: closing one of the
// clients, a call's timeout, the memory bound or a crash ends the process
// under all of them (their errors say it is shared, and with whom).
func LaunchGroup(ctx context.Context, names []string, cmd *exec.Cmd, protocol int, log zerolog.Logger) ([]*Client, error) {
	if cmd == nil || len(names) == 0 {
		return nil, fmt.Errorf("plugins %q: no command to launch", names)
	}
	for _, n := range names {
		if n == "" {
			return nil, errors.New("a plugin group names a plugin \"\"")
		}
	}
	p, rpc, _, err := launch(ctx, strings.Join(names, ","), true, cmd, protocol, nil, log)
	if err != nil {
		return nil, err
	}
	p.names = slices.Clone(names)
	cs := make([]*Client, len(names))
	for i, n := range names {
		if cs[i], err = p.client(ctx, n, n, rpc, protocol, log); err != nil {
			p.close()
			return nil, err
		}
	}
	return cs, nil
}

// launch starts cmd and performs the handshake (see Launch): label names
// the process in its log lines and errors; group, that its plugins' log
// lines name themselves (groupPluginField).
func launch(ctx context.Context, label string, group bool, cmd *exec.Cmd, protocol int, pin *Pin, log zerolog.Logger) (*proc, proto.PluginClient, *atomic.Pointer[string], error) {
	shown := &atomic.Pointer[string]{}
	shown.Store(&label)
	quiet := &atomic.Bool{}
	stderr := &output{}
	exe := cmd.Path // what messages name, whatever runs

	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, LogLevelEnv+"="+effectiveLevel(log).String(), HostPIDEnv+"="+strconv.Itoa(os.Getpid()))
	// Large blobs cross as files in a directory of this plugin's
	// (blobfile.go); without one they are streamed.
	dir, derr := makeBlobDir()
	if derr != nil {
		log.Debug().Err(derr).Str("plugin", label).Msg("no blob directory; blobs will be streamed")
		dir = ""
	} else {
		cmd.Env = append(cmd.Env, BlobDirEnv+"="+dir)
	}
	// The plugin's socket goes there too (go-plugin's server honours
	// PLUGIN_UNIX_SOCKET_DIR): in a directory only this user can enter,
	// removed with it, not one more socket in the shared temporary
	// directory, where a killed plugin's stayed for good. Where that
	// directory's path is too long for a socket's (a long $TMPDIR), a
	// short private one of its own.
	sockDir, err := socketDir(dir)
	if err != nil {
		if dir != "" {
			os.RemoveAll(dir)
		}
		return nil, nil, nil, fmt.Errorf("plugin %q: %w", label, err)
	}
	cmd.Env = append(cmd.Env, plugin.EnvUnixSocketDir+"="+sockDir)
	removeDir := func() {
		if dir != "" {
			os.RemoveAll(dir)
		}
		if sockDir != dir {
			os.RemoveAll(sockDir)
		}
	}
	if pin != nil {
		release, err := pinExecutable(cmd, dir, pin)
		if err != nil {
			removeDir()
			return nil, nil, nil, fmt.Errorf("plugin %q: %w", label, err)
		}
		defer release() // the process has it, or never will
	}
	ownGroup(cmd)

	// Mutual TLS with P-256 keys, the plugin's certificate pinned through
	// the blob directory (tls.go); go-plugin's AutoMTLS (P-521) if that
	// cannot be set up here.
	tlsCfg, certEnv, terr := hostTLS(dir)
	if terr != nil {
		log.Debug().Err(terr).Str("plugin", label).Msg("no TLS key of our own; using go-plugin's AutoMTLS")
	} else {
		cmd.Env = append(cmd.Env, certEnv)
	}

	startTimeout := time.Minute
	if d, ok := ctx.Deadline(); ok {
		startTimeout = max(min(time.Until(d), startTimeout), time.Millisecond)
	}
	pc := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:     Handshake(protocol),
		Plugins:             plugin.PluginSet{pluginSetKey: &grpcPlugin{}},
		Cmd:                 cmd,
		AllowedProtocols:    []plugin.Protocol{plugin.ProtocolGRPC},
		AutoMTLS:            tlsCfg == nil,
		TLSConfig:           tlsCfg,
		StartTimeout:        startTimeout,
		PluginLogBufferSize: logLineSize,
		Logger:              &hcLogger{log: log, plugin: shown, exe: filepath.Base(exe), quiet: quiet, group: group},
		SyncStdout:          &lineLogger{log: log, plugin: shown, stream: "stdout", level: zerolog.InfoLevel},
		SyncStderr:          &lineLogger{log: log, plugin: shown, stream: "stderr", level: zerolog.WarnLevel},
		Stderr:              stderr,
		GRPCDialOptions: []grpc.DialOption{grpc.WithDefaultCallOptions(
			grpc.MaxCallRecvMsgSize(maxMsgSize), grpc.MaxCallSendMsgSize(maxMsgSize)),
			grpc.WithInitialWindowSize(windowSize), grpc.WithInitialConnWindowSize(windowSize)},
	})

	type started struct {
		rpc proto.PluginClient
		err error
	}
	done := make(chan started, 1)
	t0 := time.Now()
	go func() {
		cp, err := pc.Client()
		if err != nil {
			done <- started{err: err}
			return
		}
		raw, err := cp.Dispense(pluginSetKey)
		if err != nil {
			done <- started{err: err}
			return
		}
		rpc, ok := raw.(proto.PluginClient)
		if !ok {
			done <- started{err: fmt.Errorf("dispensed %T, not a tcforge plugin client", raw)}
			return
		}
		done <- started{rpc: rpc}
	}()
	var rpc proto.PluginClient
	select {
	case <-ctx.Done():
		quiet.Store(true) // the error returned says why it is killed
		go func() {
			<-done
			stopProcess(pc, cmd)
			removeDir()
		}()
		return nil, nil, nil, fmt.Errorf("plugin %q: starting: %w", label, ctx.Err())
	case s := <-done:
		if s.err != nil {
			quiet.Store(true)
			stopProcess(pc, cmd)
			removeDir()
			return nil, nil, nil, startError(label, cmd, protocol, s.err, stderr)
		}
		rpc = s.rpc
	}
	return &proc{pc: pc, cmd: cmd, exe: exe, quiet: quiet, dir: dir, sockDir: sockDir, stderr: stderr, start: time.Since(t0), tls: tlsKind(tlsCfg)}, rpc, shown, nil
}

// startError explains a failed start of cmd (killed by now): a protocol
// version mismatch in the handshake, a line on its standard output that is
// not the handshake (a *StartError), a process that exited on its own (an
// *ExitError with its standard error), or go-plugin's own error.
func startError(name string, cmd *exec.Cmd, protocol int, err error, stderr *output) error {
	const mismatch = "incompatible API version with plugin. Plugin version: "
	if _, rest, ok := strings.Cut(err.Error(), mismatch); ok {
		var v int
		if _, serr := fmt.Sscanf(rest, "%d", &v); serr == nil {
			return fmt.Errorf("plugin %q speaks tcforge plugin protocol %d, this host speaks %d: rebuild the plugin against a matching tcforge SDK: %w", name, v, protocol, err)
		}
	}
	const unrecognized = "Unrecognized remote plugin message: "
	if _, rest, ok := strings.Cut(err.Error(), unrecognized); ok {
		if line, _, _ := strings.Cut(rest, "\n"); line != "" {
			if r := []rune(line); len(r) > 120 {
				line = string(r[:120]) + "…"
			}
			return &StartError{Plugin: name, Full: err.Error(), Output: stderr.String(),
				Reason: fmt.Sprintf("wrote %q to its standard output before the start-up handshake (nothing may write there before serve.Main)", line)}
		}
	}
	if st := cmd.ProcessState; st != nil && st.Exited() {
		return &ExitError{Plugin: name, Call: "startup", Status: st.String(), Output: stderr.String()}
	}
	return fmt.Errorf("plugin %q: starting: %w", name, err)
}
