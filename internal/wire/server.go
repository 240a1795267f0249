package wire

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/rs/zerolog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/tcforge/tcforge/internal/wire/proto"
)

// Handler is what a plugin process serves: serve.Main implements it over a
// plugin value. Call runs one call of the plugin's funcs — method is
// "Check" (the host's name for Prepare), "Estimate", "Build", "Reference",
// "Layer" or "Map" — on the JSON-encoded parameters and the request's blob,
// and returns the answer's blob; it records its decode and encode times in
// t. Its error reaches the host as a *CallError.
type Handler interface {
	Describe() ([]byte, error)
	Call(ctx context.Context, method string, params, blob []byte, t *Times) ([]byte, error)
}

// PartsHandler is a Handler that can answer a call in parts (the blob is
// their concatenation, written one after the other: a flat circuit's
// arrays need no copy) and in the flat encodings flat allows. The server
// calls CallParts instead of Call where the Handler has it.
type PartsHandler interface {
	Handler
	CallParts(ctx context.Context, method string, params, blob []byte, flat Flat, t *Times) ([][]byte, error)
}

// Flat says which answers a PartsHandler may give in their flat
// encodings (binenc's flat layout).
type Flat struct {
	// Logic: a logic circuit (the host reads the flat encodings and the
	// answer crosses as a file).
	Logic bool
	// Layered: a layered circuit too (the host maps the file: Mapped).
	Layered bool
}

// Times are the parts of a call's run a Handler times: decoding its input
// artifact and encoding its answer (the rest is the plugin's work).
type Times struct {
	Decode, Encode time.Duration
}

// Since sets *d to the time elapsed since t0.
func (t *Times) Since(d *time.Duration, t0 time.Time) { *d = time.Since(t0) }

// Serve serves h as a plugin speaking protocol until the host stops it or
// dies (see watchParent). The process keeps a heap floor (heapFloor): an
// allocation that is never touched, so it costs address space, not
// memory, but it counts as live heap, and the collector's first goals
// start above it.
func Serve(h Handler, protocol int) {
	ServeGroup(map[string]Handler{"": h}, protocol)
}

// ServeGroup serves several plugins in one process, by name (the host's
// bundled plugins share a process so: see LaunchGroup): every call names
// the plugin it is for in its metadata. A group of one named "" serves
// every call, named or not, as Serve does.
func ServeGroup(hs map[string]Handler, protocol int) {
	watchParent()
	floor := make([]byte, heapFloorBytes(debug.SetMemoryLimit(-1)))
	plugin.Serve(serveConfig(hs, protocol))
	runtime.KeepAlive(floor)
}

// ServeConfig returns the go-plugin configuration Serve uses, for tests
// that serve a plugin with go-plugin themselves (speaking another protocol
// version, say).
//
// It captures os.Stderr as the log output when called: go-plugin redirects
// os.Stderr once serving, while the process's original stderr is what the
// host reads log lines from.
func ServeConfig(h Handler, protocol int) *plugin.ServeConfig {
	return serveConfig(map[string]Handler{"": h}, protocol)
}

// serveConfig is ServeConfig for the plugins of hs, by name.
func serveConfig(hs map[string]Handler, protocol int) *plugin.ServeConfig {
	stderr := os.Stderr
	log := newPluginLogger(stderr, os.Getenv(LogLevelEnv))
	blobDir := os.Getenv(BlobDirEnv)
	if blobDir != "" {
		if err := checkBlobDir(blobDir); err != nil {
			log.Warn().Err(err).Msg("blobs will be streamed")
			blobDir = ""
		}
	}
	return &plugin.ServeConfig{
		HandshakeConfig: Handshake(protocol),
		Plugins: plugin.PluginSet{pluginSetKey: &grpcPlugin{impls: hs, log: log, blobDir: blobDir,
			mapped: NewMapped(requestMapBudget(debug.SetMemoryLimit(-1)))}},
		// P-256 mutual TLS with the host (tls.go), or AutoMTLS.
		TLSProvider: func() (*tls.Config, error) { return pluginTLS(blobDir, os.Getenv(clientCertEnv)) },
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			opts = append(opts, grpc.MaxRecvMsgSize(maxMsgSize), grpc.MaxSendMsgSize(maxMsgSize),
				grpc.InitialWindowSize(windowSize), grpc.InitialConnWindowSize(windowSize))
			return plugin.DefaultGRPCServer(opts)
		},
		Logger: hclog.New(&hclog.LoggerOptions{
			Name:       "go-plugin",
			Level:      hclog.Warn,
			Output:     stderr,
			JSONFormat: true,
		}),
	}
}

// server serves Handlers over gRPC, by plugin name (a process serves one
// plugin, under the name "", or a group): every streamed method is one
// call of serve.
type server struct {
	proto.UnimplementedPluginServer
	impls map[string]Handler
	log   zerolog.Logger
	// blobDir is the host's directory for blob files, "" if none
	// (blobfile.go).
	blobDir string
	// mapped maps the requests' blob files (requestMapBudget).
	mapped *Mapped
}

// route returns the Handler a call is for, by the plugin name in its
// metadata md (mdPlugin), and that name; a process serving one plugin
// serves every call.
func (s *server) route(md metadata.MD) (Handler, string, error) {
	if h, ok := s.impls[""]; ok {
		return h, "", nil
	}
	names := md.Get(mdPlugin)
	if len(names) != 1 {
		return nil, "", status.Errorf(codes.InvalidArgument, "this process serves a group of plugins: a call must name one (%d names)", len(names))
	}
	h, ok := s.impls[names[0]]
	if !ok {
		return nil, "", status.Errorf(codes.NotFound, "this process serves no plugin named %q", names[0])
	}
	return h, names[0], nil
}

// callContext attaches the per-call logger to ctx (zerolog.Ctx finds it),
// with the plugin's name in a process serving a group.
func (s *server) callContext(ctx context.Context, name, method string) context.Context {
	lc := s.log.With()
	if name != "" {
		lc = lc.Str(groupPluginField, name)
	}
	l := lc.Str("call", method).Logger()
	return l.WithContext(ctx)
}

// safely runs fn, turning a panic into an error that names where it
// happened: "plugin panicked: boom (at adder/adder.go:42 in
// github.com/…/adder.build)".
func safely(ctx context.Context, method string, fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			site := panicSite()
			log := zerolog.Ctx(ctx)
			log.Error().Str("panic", fmt.Sprint(r)).Str("at", site).Msgf("%s panicked", method)
			log.Debug().Str("stack", string(debug.Stack())).Msg("panic stack")
			err = fmt.Errorf("plugin panicked: %v", r)
			if site != "" {
				err = fmt.Errorf("plugin panicked: %v (at %s)", r, site)
			}
		}
	}()
	return fn()
}

// panicSite returns, called from a deferred recover, the frame that
// panicked — the first below the panic outside the runtime (an index out
// of range panics in runtime.goPanicIndex, called from the plugin's line)
// — as "dir/file.go:line in function", or "" if none is found.
func panicSite() string {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(1, pcs)])
	panicking := false
	for {
		f, more := frames.Next()
		switch {
		case f.Function == "runtime.gopanic" || f.Function == "runtime.panicmem" || f.Function == "runtime.sigpanic":
			panicking = true
		case panicking && !strings.HasPrefix(f.Function, "runtime."):
			return fmt.Sprintf("%s/%s:%d in %s", filepath.Base(filepath.Dir(f.File)), filepath.Base(f.File), f.Line, f.Function)
		}
		if !more {
			return ""
		}
	}
}

// Describe implements proto.PluginServer.
func (s *server) Describe(ctx context.Context, _ *proto.DescribeRequest) (*proto.DescribeResponse, error) {
	in, _ := metadata.FromIncomingContext(ctx)
	impl, name, err := s.route(in)
	if err != nil {
		return nil, err
	}
	if s.blobDir != "" {
		// Tell the host that blobs may cross as files, and circuits in
		// their flat encodings.
		md := metadata.Pairs(mdBlobFiles, blobFilesVersion)
		if _, ok := impl.(PartsHandler); ok {
			md.Append(mdFlat, flatVersion)
		}
		_ = grpc.SetHeader(ctx, md)
	}
	var data []byte
	err = safely(s.callContext(ctx, name, "Describe"), "Describe", func() error {
		var err error
		data, err = impl.Describe()
		return err
	})
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return &proto.DescribeResponse{Description: data}, nil
}

// Build implements proto.PluginServer.
func (s *server) Build(stream proto.Plugin_BuildServer) error { return s.serve(stream, "Build") }

// Reference implements proto.PluginServer.
func (s *server) Reference(stream proto.Plugin_ReferenceServer) error {
	return s.serve(stream, "Reference")
}

// Check implements proto.PluginServer.
func (s *server) Check(stream proto.Plugin_CheckServer) error { return s.serve(stream, "Check") }

// Estimate implements proto.PluginServer.
func (s *server) Estimate(stream proto.Plugin_EstimateServer) error {
	return s.serve(stream, "Estimate")
}

// Layer implements proto.PluginServer.
func (s *server) Layer(stream proto.Plugin_LayerServer) error { return s.serve(stream, "Layer") }

// Map implements proto.PluginServer.
func (s *server) Map(stream proto.Plugin_MapServer) error { return s.serve(stream, "Map") }

// serve runs one streamed call: it reads the request (header and blob),
// runs the handler with panics recovered, and answers with the result blob
// and an empty trailer, or with a trailer carrying the handler's error.
// Malformed framing is a gRPC error.
func (s *server) serve(stream grpc.BidiStreamingServer[proto.Frame, proto.Frame], method string) error {
	t0 := time.Now()
	md, _ := metadata.FromIncomingContext(stream.Context())
	impl, name, err := s.route(md)
	if err != nil {
		return err
	}
	// A layerer's logic circuit is decoded in place (DecodeView); a
	// mapper's packed layered circuit is expanded out of its blob, which
	// a mapping would hold for nothing.
	var mapped *Mapped
	if method == "Layer" {
		mapped = s.mapped
	}
	take := func(ref blobRef, size uint64) ([]byte, error) {
		return readBlobFile(stream.Context(), s.blobDir, ref, size, mapped)
	}
	params, in, _, err := recvBlob(stream, false, func() (blobRef, bool, error) { return blobRefFrom(md) }, take)
	if err != nil {
		if _, ok := status.FromError(err); ok {
			return err
		}
		return status.Errorf(codes.InvalidArgument, "%s request: %v", method, err)
	}
	ctx := s.callContext(stream.Context(), name, method)
	t1 := time.Now()
	var out [][]byte
	var times Times
	files := s.blobDir != "" && acceptsFiles(md)
	var flat Flat
	err = safely(ctx, method, func() error {
		var err error
		if ph, ok := impl.(PartsHandler); ok {
			flat.Logic = files && acceptsFlat(md)
			flat.Layered = flat.Logic && acceptsFlatLayered(md)
			out, err = ph.CallParts(ctx, method, params, in, flat, &times)
			return err
		}
		var blob []byte
		blob, err = impl.Call(ctx, method, params, in, &times)
		out = [][]byte{blob}
		return err
	})
	if err != nil {
		return stream.Send(&proto.Frame{Body: &proto.Frame_Trailer{Trailer: &proto.Trailer{Error: toProtoError(err)}}})
	}
	t2 := time.Now()
	inFile := false
	size := blobSize(out)
	if files && size >= blobFileMin {
		// Into the host's answer file if it gave one (it seals and maps
		// it: answer.go), else a blob file; a failed write or header
		// leaves the chunks.
		if af := md.Get(mdAnswerFile); len(af) == 1 {
			if ref, err := writeAnswerFile(af[0], out); err == nil {
				inFile = stream.SetHeader(ref.md()) == nil
			}
		}
		if !inFile {
			if ref, err := writeBlobFile(s.blobDir, out); err == nil {
				if stream.SetHeader(ref.md()) == nil {
					inFile = true
				} else {
					os.Remove(filepath.Join(s.blobDir, ref.name))
				}
			}
		}
	}
	err = sendBlob(stream, nil, out, true, inFile)
	zerolog.Ctx(ctx).Debug().Int("in_bytes", len(in)).Int("out_bytes", size).Bool("out_file", inFile).Bool("flat", flat.Logic).Bool("flat_layered", flat.Layered).
		Dur("recv", t1.Sub(t0)).Dur("run", t2.Sub(t1)).Dur("decode", times.Decode).Dur("encode", times.Encode).
		Dur("send", time.Since(t2)).Msg("call done")
	return err
}

// newPluginLogger returns the plugin process's base logger: zerolog JSON,
// rewritten into the hclog JSON shape go-plugin's host side parses, at the
// level the host asked for (info if none).
func newPluginLogger(w io.Writer, level string) zerolog.Logger {
	lvl, err := zerolog.ParseLevel(level)
	if err != nil || level == "" {
		lvl = zerolog.InfoLevel
	}
	return zerolog.New(&hclogJSONWriter{w: w}).Level(lvl)
}

// hclogJSONWriter turns zerolog's JSON events into hclog JSON lines: the
// level, message and time keys become "@level", "@message" and
// "@timestamp" (stamped here, in the layout go-plugin parses); other fields
// pass through. zerolog's package-level field names are left alone.
type hclogJSONWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// Write implements io.Writer; p is one zerolog event.
func (h *hclogJSONWriter) Write(p []byte) (int, error) {
	line, ok := toHCLogJSON(p, time.Now())
	h.mu.Lock()
	defer h.mu.Unlock()
	if !ok {
		if _, err := h.w.Write(p); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	if _, err := h.w.Write(line); err != nil {
		return 0, err
	}
	return len(p), nil
}

// toHCLogJSON rewrites one zerolog JSON event; ok is false if p is not a
// JSON object.
func toHCLogJSON(p []byte, now time.Time) ([]byte, bool) {
	dec := json.NewDecoder(bytes.NewReader(p))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, false
	}
	level, _ := m[zerolog.LevelFieldName].(string)
	delete(m, zerolog.LevelFieldName)
	switch level {
	case "trace", "debug", "info", "warn", "error":
	case "fatal", "panic":
		level = "error"
	default:
		level = "info"
	}
	m["@level"] = level
	msg, _ := m[zerolog.MessageFieldName].(string)
	delete(m, zerolog.MessageFieldName)
	m["@message"] = msg
	delete(m, zerolog.TimestampFieldName)
	m["@timestamp"] = now.Format(hclogTimeFormat)
	out, err := json.Marshal(m)
	if err != nil {
		return nil, false
	}
	return append(out, '\n'), true
}
