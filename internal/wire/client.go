package wire

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-plugin"
	"github.com/rs/zerolog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/tcforge/tcforge/internal/wire/proto"
)

// exitGrace is how long a call that lost its connection waits for the
// plugin process to be reported dead before blaming the transport.
const exitGrace = 2 * time.Second

// Client is the host's handle on one plugin in a running plugin process
// (its own, or one it shares with other plugins: LaunchGroup). Its methods
// are safe for concurrent use.
type Client struct {
	*proc
	name string // the plugin's name, for errors
	// route names the plugin in each call's metadata ("" when the
	// process serves it alone).
	route string
	rpc   proto.PluginClient
	desc  []byte         // the plugin's description, JSON
	log   zerolog.Logger // for the per-call timings, at debug level

	// callTimeout bounds each call (0: none); see SetCallTimeout.
	callTimeout time.Duration
}

// proc is one plugin process, which serves one plugin or a group.
type proc struct {
	pc     *plugin.Client
	cmd    *exec.Cmd
	exe    string   // the executable's path as given (cmd.Path may be a private copy's)
	names  []string // the plugins it serves
	closed atomic.Bool
	quiet  *atomic.Bool // see hcLogger.quiet
	stderr *output      // what the process wrote to its standard error
	stop   sync.Once

	// memLimit is the memory bound (0: none) and overMemory the resident
	// size the process was killed at for exceeding it; see SetMemoryLimit.
	memLimit   int64
	memOnce    sync.Once
	overMemory atomic.Int64
	// timedOut is the timeout that killed the process, if one did.
	timedOut atomic.Pointer[TimeoutError]
	// dir is the blob directory made for the process (removed by Close);
	// blobDir is dir if the plugins speak blob files, else "". sockDir is
	// the directory of its socket: dir, or a short one of its own.
	dir, blobDir, sockDir string
	// flat is set if the plugins read the flat encodings and blobs cross
	// as files (see Flat).
	flat bool
	// start is how long the start took; tls, the kind of TLS set up.
	start time.Duration
	tls   string
	// mapped, if set, maps the answers' blob files (SetMapped).
	mapped *Mapped
}

// TimeoutError reports a call that did not answer within the client's
// call timeout; the plugin process was killed.
type TimeoutError struct {
	Plugin  string
	Call    string
	Timeout time.Duration
}

// Error implements error.
func (e *TimeoutError) Error() string {
	return fmt.Sprintf("plugin %q: %s did not answer within %s; the plugin process was killed", e.Plugin, e.Call, e.Timeout)
}

// SetCallTimeout bounds every later call: one that has not answered after
// d is abandoned, the plugin process is killed (a plugin stuck in a loop
// would otherwise keep a core busy) and the call fails with a
// *TimeoutError. Zero means no bound. Call it before using the plugin.
func (c *Client) SetCallTimeout(d time.Duration) { c.callTimeout = d }

// ExitError reports a call to a plugin whose process has exited: it died
// during the call (a panic outside the plugin's funcs, os.Exit, a signal),
// or before it. Launch returns one (Call "startup") for a plugin that
// exited before the handshake.
type ExitError struct {
	Plugin string // the plugin's name
	Call   string // the call that found the process gone: "Build", …
	Status string // how the process ended, e.g. "exit status 3"
	Before bool   // the process was gone before the call started
	// Output is what the process wrote to its standard error (see
	// Detail), with the Go runtime's crash report if it crashed.
	Output string
	// Shared names the other plugins of its process, if it shared one
	// (LaunchGroup): whichever of them ended it, it ended under all.
	Shared []string
}

// Error implements error.
func (e *ExitError) Error() string {
	when := "during"
	if e.Before {
		when = "before"
	}
	shared := ""
	if len(e.Shared) > 0 {
		shared = fmt.Sprintf(" (its process, shared with %s)", strings.Join(e.Shared, ", "))
	}
	msg := fmt.Sprintf("plugin %q exited%s %s %s: %s", e.Plugin, shared, when, e.Call, e.Status)
	if cause := crashCause(e.Output, e.Call == "startup"); cause != "" {
		msg += ": " + cause
	}
	return msg
}

// pid is the process ID of cmd, 0 if it has none.
func pid(cmd *exec.Cmd) int {
	if cmd.Process == nil {
		return 0
	}
	return cmd.Process.Pid
}

// client describes plugin name (route: the name its calls carry, "" for
// none) of the process p and returns its Client, checking that it speaks
// protocol and, if name is not empty, is named name.
func (p *proc) client(ctx context.Context, name, route string, rpc proto.PluginClient, protocol int, log zerolog.Logger) (*Client, error) {
	label := name
	if label == "" {
		label = filepath.Base(p.exe)
	}
	c := &Client{proc: p, name: label, route: route, rpc: rpc, log: log}
	t0 := time.Now()
	desc, descName, descProtocol, files, flat, err := c.describe(ctx)
	if err != nil {
		return nil, err
	}
	// start: process start, go-plugin handshake (a key and certificate
	// made on each side) and the gRPC dial; describe: the first call,
	// which also completes the TLS handshake.
	log.Debug().Str("plugin", label).Dur("start", p.start).Dur("describe", time.Since(t0)).Bool("blob_files", files && p.dir != "").
		Str("tls", p.tls).Int("pid", pid(p.cmd)).Strs("shared_with", c.mates()).Msg("plugin launched")
	if files {
		p.blobDir = p.dir
		p.flat = flat && p.dir != ""
	}
	if descProtocol != protocol {
		return nil, fmt.Errorf("plugin %q speaks tcforge plugin protocol %d, this host speaks %d: rebuild the plugin against a matching tcforge SDK", label, descProtocol, protocol)
	}
	if name != "" && descName != name {
		return nil, fmt.Errorf("plugin %q: the executable %s describes itself as %q", name, p.exe, descName)
	}
	if name == "" && descName != "" {
		c.name = descName
	}
	c.desc = desc
	return c, nil
}

// mates returns the other plugins c's process serves (nil if it serves c
// alone).
func (c *Client) mates() []string {
	var out []string
	for _, n := range c.names {
		if n != c.name {
			out = append(out, n)
		}
	}
	return out
}

// outgoing returns ctx carrying the name of c's plugin, for a process
// serving a group.
func (c *Client) outgoing(ctx context.Context) context.Context {
	if c.route == "" {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, mdPlugin, c.route)
}

// describe calls Describe and returns the raw answer, with the two fields
// Launch checks and whether the plugin speaks blob files and reads the
// flat encodings.
func (c *Client) describe(ctx context.Context) ([]byte, string, int, bool, bool, error) {
	var md metadata.MD
	resp, err := c.rpc.Describe(c.outgoing(ctx), &proto.DescribeRequest{}, describeFiles(&md))
	if err != nil {
		return nil, "", 0, false, false, c.transportError(ctx, "Describe", err)
	}
	var head struct {
		Name     string `json:"name"`
		Protocol int    `json:"protocol"`
	}
	if err := json.Unmarshal(resp.GetDescription(), &head); err != nil {
		return nil, "", 0, false, false, fmt.Errorf("plugin %q: Describe: decoding the description: %w", c.name, err)
	}
	return resp.GetDescription(), head.Name, head.Protocol, acceptsFiles(md), acceptsFlat(md), nil
}

// SetMapped makes the plugin's answers that cross as files mapped
// through m (as long as it has budget left) rather than read, and asks
// the plugin for layered circuits in their flat encoding, which the host
// then takes in place. Only for a plugin trusted as the host's own code
// (see Mapped); the host must not use what it received through m after
// m.Release. Call it before using the plugin; for plugins sharing a
// process, the first call sets it.
func (c *Client) SetMapped(m *Mapped) {
	if c.blobDir != "" && c.flat && c.mapped == nil {
		c.mapped = m
	}
}

// Flat reports whether a circuit sent to the plugin may be in its flat
// encoding (MarshalFlat in sdk/layered and sdk/circuit): the plugin reads
// it and blobs cross as files. The host reads flat answers whenever blobs
// cross as files.
func (c *Client) Flat() bool { return c.flat }

// Description returns the plugin's description (JSON, as sdk.Description
// marshals it), as it gave it at launch.
func (c *Client) Description() []byte { return c.desc }

// Name returns the plugin's name.
func (c *Client) Name() string { return c.name }

// Exited reports whether the plugin process has exited.
func (c *Client) Exited() bool { return c.pc.Exited() }

// Close stops the plugin process (gracefully, then by force after
// killGrace: a frozen plugin does not hold it up). Calls after Close fail.
//
// A plugin sharing its process with others (LaunchGroup) stops them too.
func (c *Client) Close() { c.close() }

// close stops the process, once; other callers wait for that.
func (p *proc) close() {
	p.closed.Store(true)
	p.quiet.Store(true)
	p.stop.Do(func() {
		stopProcess(p.pc, p.cmd)
		if p.dir != "" {
			os.RemoveAll(p.dir)
		}
		if p.sockDir != "" && p.sockDir != p.dir {
			os.RemoveAll(p.sockDir)
		}
	})
}

// PID returns the plugin process's ID.
func (c *Client) PID() int { return pid(c.cmd) }

// Ended says how the plugin process ended ("exit status 3", "signal:
// killed"; a memory bound or a call's timeout that killed it is said
// so), or "" while it runs.
func (c *Client) Ended() string {
	if !c.pc.Exited() {
		return ""
	}
	if rss := c.overMemory.Load(); rss > 0 {
		return fmt.Sprintf("killed at %d MiB, over the memory bound of %d MiB", rss>>20, c.memLimit>>20)
	}
	if to := c.timedOut.Load(); to != nil {
		return fmt.Sprintf("killed: %s did not answer within %s", to.Call, to.Timeout)
	}
	return c.exitStatus()
}

// exitStatus says how the plugin process ended. Call it only once Exited.
func (c *Client) exitStatus() string {
	if st := c.cmd.ProcessState; st != nil {
		return st.String()
	}
	return "process gone"
}

// transportError explains an RPC that failed below the tcforge protocol:
// the caller's context ended, the process died, or the connection failed.
func (c *Client) transportError(ctx context.Context, method string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("plugin %q: %s: %w", c.name, method, ctx.Err())
	}
	if _, ok := ctx.Deadline(); ok && status.Code(err) == codes.DeadlineExceeded {
		// The plugin side saw the propagated deadline first.
		return fmt.Errorf("plugin %q: %s: %w", c.name, method, context.DeadlineExceeded)
	}
	if c.closed.Load() {
		if to := c.timedOut.Load(); to != nil {
			return c.killedBy(method, to)
		}
		return fmt.Errorf("plugin %q: %s: the client is closed: %w", c.name, method, err)
	}
	for deadline := time.Now().Add(exitGrace); ; {
		if c.pc.Exited() {
			if rss := c.overMemory.Load(); rss > 0 {
				return &MemoryError{Plugin: c.name, Call: method, Limit: c.memLimit, RSS: rss, Shared: c.mates()}
			}
			return &ExitError{Plugin: c.name, Call: method, Status: c.exitStatus(), Output: c.stderr.String(), Shared: c.mates()}
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("plugin %q: %s: %w", c.name, method, err)
}

// killedBy is the error of call method when the timeout to killed the
// process under it, or before it (points run at once): the same cause,
// or, in a shared process, another plugin's.
func (c *Client) killedBy(method string, to *TimeoutError) error {
	if to.Plugin != c.name {
		return fmt.Errorf("plugin %q: %s: the process it shares with plugin %q was killed: %w", c.name, method, to.Plugin, to)
	}
	return &TimeoutError{Plugin: c.name, Call: method, Timeout: c.callTimeout}
}

// CallTimes are the host-side timings of one call, logged at debug level
// with the plugin's own (recv, run, send) so that a call's cost splits
// into encoding, transfer either way, the plugin's work and decoding.
type CallTimes struct {
	Encode time.Duration // encoding the input artifact
	Send   time.Duration // opening the stream and sending the request
	Wait   time.Duration // from the request sent to the first answer frame: the plugin's work
	Recv   time.Duration // from the first answer frame to the trailer
	Decode time.Duration // decoding (and validating) the answer
	In     int           // request blob bytes
	Out    int           // answer blob bytes
}

// LogCall logs a call's host-side timings at debug level.
func (c *Client) LogCall(method string, t *CallTimes) {
	c.log.Debug().Str("plugin", c.name).Str("call", method).Int("in_bytes", t.In).Int("out_bytes", t.Out).
		Dur("encode", t.Encode).Dur("send", t.Send).Dur("wait", t.Wait).Dur("recv", t.Recv).Dur("decode", t.Decode).
		Msg("host call timings")
}

// Call runs one streamed call of method (see Handler): it sends params
// (JSON) and the blob in (given as consecutive parts), and returns the
// result blob, which is the caller's. If t is not nil, it
// records the send, wait and receive times there. An error the plugin
// reported wraps a *CallError; a process gone is an *ExitError, a call over
// the timeout a *TimeoutError.
func (c *Client) Call(ctx context.Context, method string, pj []byte, in [][]byte, t *CallTimes) ([]byte, error) {
	var open func(context.Context, ...grpc.CallOption) (grpc.BidiStreamingClient[proto.Frame, proto.Frame], error)
	switch method {
	case "Check":
		open = c.rpc.Check
	case "Estimate":
		open = c.rpc.Estimate
	case "Build":
		open = c.rpc.Build
	case "Reference":
		open = c.rpc.Reference
	case "Layer":
		open = c.rpc.Layer
	case "Map":
		open = c.rpc.Map
	default:
		return nil, fmt.Errorf("plugin %q: no call %q", c.name, method)
	}
	if c.closed.Load() {
		if to := c.timedOut.Load(); to != nil {
			return nil, c.killedBy(method, to)
		}
		return nil, fmt.Errorf("plugin %q: %s: the client is closed", c.name, method)
	}
	if c.pc.Exited() {
		return nil, &ExitError{Plugin: c.name, Call: method, Status: c.exitStatus(), Before: true, Output: c.stderr.String(), Shared: c.mates()}
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if c.callTimeout > 0 {
		var stop context.CancelFunc
		sctx, stop = context.WithTimeout(sctx, c.callTimeout)
		defer stop()
	}
	t0 := time.Now()
	var req *blobRef
	// Only circuits are decoded in place (DecodeView): mapping any other
	// answer would hold its memory for nothing. A mapped answer comes
	// through an answer file the host makes and seals (answer.go).
	var mapped *Mapped
	var answer *answerFile
	if c.blobDir != "" {
		if blobSize(in) >= blobFileMin {
			// A failed write leaves the chunks.
			if r, err := writeBlobFile(c.blobDir, in); err == nil {
				req = &r
				// The plugin removes it when it reads it; this, if it did not.
				defer os.Remove(filepath.Join(c.blobDir, r.name))
			}
		}
		if (method == "Build" || method == "Layer") && c.mapped.room() {
			if answer = newAnswerFile(); answer != nil {
				mapped = c.mapped
				defer answer.close()
			}
		}
		sctx = callFiles(sctx, req, answer, method == "Layer")
	}
	sctx = c.outgoing(sctx)
	stream, err := open(sctx)
	if err != nil {
		return nil, c.transportError(ctx, method, err)
	}
	// A send fails with io.EOF when the plugin has already answered (with
	// an error); the answer is then read below.
	if err := sendBlob(stream, pj, in, false, req != nil); err == nil {
		if err := stream.CloseSend(); err != nil {
			return nil, c.transportError(ctx, method, err)
		}
	}
	t1 := time.Now()
	var first time.Time
	respFile := func() (blobRef, bool, error) {
		md, err := stream.Header()
		if err != nil {
			return blobRef{}, false, err
		}
		return blobRefFrom(md)
	}
	if c.blobDir == "" {
		respFile = nil
	}
	// A blob file is read, never mapped: the plugin, or anyone, could
	// change it after its checksum was checked.
	take := func(ref blobRef, size uint64) ([]byte, error) {
		if ref.name == answerFileRef {
			return answer.take(ctx, size, ref.crc, mapped)
		}
		return readBlobFile(ctx, c.blobDir, ref, size, nil)
	}
	_, out, remote, err := recvBlob(&firstFrameTimer{r: stream, first: &first}, true, respFile, take)
	if t != nil {
		t.In, t.Out = blobSize(in), len(out)
		t.Send, t.Wait, t.Recv = t1.Sub(t0), first.Sub(t1), time.Since(first)
	}
	if err != nil {
		if c.callTimeout > 0 && ctx.Err() == nil && (sctx.Err() != nil || status.Code(err) == codes.DeadlineExceeded) {
			// The deadline that ended the call is ours unless the
			// caller's is the same or earlier (the server may notice a
			// propagated deadline before this side's timer fires).
			ours, _ := sctx.Deadline()
			if theirs, ok := ctx.Deadline(); !ok || ours.Before(theirs) {
				to := &TimeoutError{Plugin: c.name, Call: method, Timeout: c.callTimeout}
				c.timedOut.CompareAndSwap(nil, to)
				c.Close()
				return nil, to
			}
		}
		return nil, c.transportError(ctx, method, err)
	}
	if remote != nil {
		if err := ctx.Err(); err != nil {
			// The plugin answered the end of the caller's context (a
			// propagated deadline, say) before this side noticed it.
			return nil, fmt.Errorf("plugin %q: %s: %w", c.name, method, err)
		}
		if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
			// The same, before this side's timer even fired (a busy
			// machine): the deadline has passed by the clock.
			return nil, fmt.Errorf("plugin %q: %s: %w", c.name, method, context.DeadlineExceeded)
		}
		return nil, fmt.Errorf("plugin %q: %s: %w", c.name, method, fromProtoError(remote))
	}
	return out, nil
}

// firstFrameTimer is a frameReceiver that notes when the first frame arrived.
type firstFrameTimer struct {
	r     frameReceiver
	first *time.Time
}

// Recv implements frameReceiver.
func (f *firstFrameTimer) Recv() (*proto.Frame, error) {
	fr, err := f.r.Recv()
	if f.first.IsZero() {
		*f.first = time.Now()
	}
	return fr, err
}
