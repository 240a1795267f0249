package sdk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/rs/zerolog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tcforge/tcforge/sdk/binenc"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/proto"
)

// The go-plugin handshake cookie: a plugin executable serves only when its
// environment holds MagicCookieKey=MagicCookieValue, which the host sets.
// It is a safety check against running a plugin by hand, not a secret.
const (
	MagicCookieKey   = "TCFORGE_PLUGIN"
	MagicCookieValue = "b6c8f0e2-tcforge-plugin-4d1a"
)

// LogLevelEnv is the environment variable through which Launch tells a
// plugin process the host's log level (a zerolog level name), so the plugin
// does not format log lines the host would drop.
const LogLevelEnv = "TCFORGE_PLUGIN_LOG_LEVEL"

const (
	// pluginSetKey is the name under which the plugin is dispensed.
	pluginSetKey = "tcforge"
	// chunkSize is the largest blob chunk in one frame.
	chunkSize = 1 << 20
	// maxMsgSize bounds one gRPC message either way: a chunk plus framing
	// fits many times over; a Describe answer is tiny.
	maxMsgSize = 16 << 20
	// maxBlobSize bounds the size a stream header may announce.
	maxBlobSize = 1 << 36
	// logLineSize is the longest plugin log line the host parses whole.
	logLineSize = 1 << 20
	// maxPrealloc bounds the buffer allocated up front for an announced size.
	maxPrealloc = 256 << 20
	// windowSize is gRPC's flow-control window on both ends: artifacts are
	// tens of MB streamed over a local socket, and the 64 KiB default
	// would make every few chunks wait for a window update.
	windowSize = 16 << 20
	// hclogTimeFormat is the @timestamp layout go-plugin's host side parses.
	hclogTimeFormat = "2006-01-02T15:04:05.000000Z07:00"
)

// Handshake returns the go-plugin handshake every tcforge host and plugin
// use: the magic cookie and ProtocolVersion. External tools that launch or
// serve tcforge plugins with go-plugin directly need it.
func Handshake() plugin.HandshakeConfig {
	return plugin.HandshakeConfig{
		ProtocolVersion:  ProtocolVersion,
		MagicCookieKey:   MagicCookieKey,
		MagicCookieValue: MagicCookieValue,
	}
}

// Serve runs p as a tcforge plugin: it is the whole main of a plugin
// executable, started by a host with Launch. It serves go-plugin gRPC until
// the host stops it, then exits the process. p must be a *Construction, a
// *Layerer or a *Mapper.
//
// Panics in p's funcs are recovered per call and reported to the host as
// errors ("plugin panicked: …"); the process keeps serving. Log from the
// funcs with Logger(ctx); the lines reach the host's log with the plugin's
// name attached.
func Serve(p Plugin) {
	plugin.Serve(ServeConfig(p))
}

// ServeConfig returns the go-plugin configuration Serve uses, for tools and
// tests that serve a plugin with go-plugin themselves.
//
// It captures os.Stderr as the log output when called: go-plugin redirects
// os.Stderr once serving, while the process's original stderr is what the
// host reads log lines from.
func ServeConfig(p Plugin) *plugin.ServeConfig {
	if p == nil {
		panic("sdk: Serve called with a nil Plugin")
	}
	stderr := os.Stderr
	log := newPluginLogger(stderr, os.Getenv(LogLevelEnv))
	return &plugin.ServeConfig{
		HandshakeConfig: Handshake(),
		Plugins:         plugin.PluginSet{pluginSetKey: &grpcPlugin{impl: p, log: log}},
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

// Logger returns the logger a plugin func should log with, as in
// sdk.Logger(ctx).Info().Int("rounds", r).Msg("building"): inside a served
// plugin, its lines go to the host's log with the plugin's name and the
// call attached. Outside one (a bundled plugin called in process), it is
// the logger attached to ctx with zerolog's Logger.WithContext, or a
// disabled logger. It is a pointer so that calls chain; it belongs to the
// call, so the func may keep it or update it.
func Logger(ctx context.Context) *zerolog.Logger {
	if l, ok := ctx.Value(loggerKey{}).(*zerolog.Logger); ok {
		return l
	}
	l := *zerolog.Ctx(ctx) // a copy: zerolog's fallbacks are shared
	return &l
}

// loggerKey is the context key of a served call's logger.
type loggerKey struct{}

// grpcPlugin is the go-plugin face of a tcforge plugin: the server side
// serves impl, the client side returns the generated gRPC client.
type grpcPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	impl Plugin
	log  zerolog.Logger
}

// GRPCServer implements plugin.GRPCPlugin.
func (g *grpcPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	proto.RegisterPluginServer(s, &server{impl: g.impl, log: g.log})
	return nil
}

// GRPCClient implements plugin.GRPCPlugin.
func (g *grpcPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return proto.NewPluginClient(c), nil
}

// server serves one plugin value over gRPC.
type server struct {
	proto.UnimplementedPluginServer
	impl Plugin
	log  zerolog.Logger
}

// callContext attaches the per-call logger to ctx.
func (s *server) callContext(ctx context.Context, method string) context.Context {
	l := s.log.With().Str("call", method).Logger()
	return context.WithValue(l.WithContext(ctx), loggerKey{}, &l)
}

// safely runs fn, turning a panic into an error.
func safely(ctx context.Context, method string, fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			log := Logger(ctx)
			log.Error().Str("panic", fmt.Sprint(r)).Msgf("%s panicked", method)
			log.Debug().Str("stack", string(debug.Stack())).Msg("panic stack")
			err = fmt.Errorf("plugin panicked: %v", r)
		}
	}()
	return fn()
}

// Describe implements proto.PluginServer.
func (s *server) Describe(ctx context.Context, _ *proto.DescribeRequest) (*proto.DescribeResponse, error) {
	var d Description
	err := safely(s.callContext(ctx, "Describe"), "Describe", func() error {
		d = s.impl.Describe()
		return nil
	})
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	data, err := json.Marshal(d)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "encoding the description: %v", err)
	}
	return &proto.DescribeResponse{Description: data}, nil
}

// Build implements proto.PluginServer.
func (s *server) Build(stream proto.Plugin_BuildServer) error {
	return s.serve(stream, "Build", func(ctx context.Context, pj, _ []byte, t *serveTimes) ([]byte, error) {
		c, ok := s.impl.(*Construction)
		if !ok || c.Build == nil {
			return nil, fmt.Errorf("%s plugin %q has no Build", s.kind(), s.impl.Describe().Name)
		}
		p, err := DecodeParams(c.Params, pj)
		if err != nil {
			return nil, err
		}
		circ, err := c.Build(ctx, p)
		if err != nil {
			return nil, err
		}
		if circ == nil {
			return nil, errors.New("Build returned no circuit")
		}
		defer t.since(&t.encode, time.Now())
		return circ.MarshalBinary()
	})
}

// Reference implements proto.PluginServer.
func (s *server) Reference(stream proto.Plugin_ReferenceServer) error {
	return s.serve(stream, "Reference", func(ctx context.Context, pj, in []byte, t *serveTimes) ([]byte, error) {
		c, ok := s.impl.(*Construction)
		if !ok || c.Reference == nil {
			return nil, fmt.Errorf("%s plugin %q has no Reference", s.kind(), s.impl.Describe().Name)
		}
		p, err := DecodeParams(c.Params, pj)
		if err != nil {
			return nil, err
		}
		inputs, err := decodeVecs(in)
		if err != nil {
			return nil, err
		}
		out, err := c.Reference(ctx, p, inputs)
		if err != nil {
			return nil, err
		}
		return encodeVecs(out), nil
	})
}

// Check implements proto.PluginServer.
func (s *server) Check(stream proto.Plugin_CheckServer) error {
	return s.serve(stream, "Check", func(ctx context.Context, pj, _ []byte, _ *serveTimes) ([]byte, error) {
		p, err := DecodeParams(s.impl.Describe().Params, pj)
		if err != nil {
			return nil, err
		}
		if _, err := CheckParams(ctx, s.impl, p.Values()); err != nil {
			return nil, err
		}
		return nil, nil
	})
}

// Estimate implements proto.PluginServer.
func (s *server) Estimate(stream proto.Plugin_EstimateServer) error {
	return s.serve(stream, "Estimate", func(ctx context.Context, pj, _ []byte, _ *serveTimes) ([]byte, error) {
		c, ok := s.impl.(*Construction)
		if !ok || c.Estimate == nil {
			return nil, fmt.Errorf("%s plugin %q has no Estimate", s.kind(), s.impl.Describe().Name)
		}
		p, err := DecodeParams(c.Params, pj)
		if err != nil {
			return nil, err
		}
		size, err := c.Estimate(ctx, p)
		if err != nil {
			return nil, err
		}
		return json.Marshal(size)
	})
}

// Layer implements proto.PluginServer.
func (s *server) Layer(stream proto.Plugin_LayerServer) error {
	return s.serve(stream, "Layer", func(ctx context.Context, pj, in []byte, t *serveTimes) ([]byte, error) {
		l, ok := s.impl.(*Layerer)
		if !ok || l.Layer == nil {
			return nil, fmt.Errorf("%s plugin %q has no Layer", s.kind(), s.impl.Describe().Name)
		}
		p, err := DecodeParams(l.Params, pj)
		if err != nil {
			return nil, err
		}
		t0 := time.Now()
		var c circuit.Circuit
		if err := c.UnmarshalBinary(in); err != nil {
			return nil, err
		}
		t.since(&t.decode, t0)
		lc, err := l.Layer(ctx, &c, p)
		if err != nil {
			return nil, err
		}
		if lc == nil {
			return nil, errors.New("Layer returned no circuit")
		}
		defer t.since(&t.encode, time.Now())
		return lc.MarshalBinary()
	})
}

// Map implements proto.PluginServer.
func (s *server) Map(stream proto.Plugin_MapServer) error {
	return s.serve(stream, "Map", func(ctx context.Context, pj, in []byte, t *serveTimes) ([]byte, error) {
		m, ok := s.impl.(*Mapper)
		if !ok || m.Map == nil {
			return nil, fmt.Errorf("%s plugin %q has no Map", s.kind(), s.impl.Describe().Name)
		}
		p, err := DecodeParams(m.Params, pj)
		if err != nil {
			return nil, err
		}
		t0 := time.Now()
		var c layered.Circuit
		if err := c.UnmarshalBinary(in); err != nil {
			return nil, err
		}
		t.since(&t.decode, t0)
		mod, err := m.Map(ctx, &c, p)
		if err != nil {
			return nil, err
		}
		if mod == nil {
			return nil, errors.New("Map returned no model")
		}
		defer t.since(&t.encode, time.Now())
		return mod.MarshalBinary()
	})
}

// kind names the served plugin's kind for error messages.
func (s *server) kind() Kind {
	k := s.impl.Describe().Kind
	if k == "" {
		return "untyped"
	}
	return k
}

// serveTimes are the parts of a call's run a handler times: decoding its
// input artifact and encoding its answer (the rest is the plugin's work).
type serveTimes struct {
	decode, encode time.Duration
}

// since sets *d to the time elapsed since t0.
func (t *serveTimes) since(d *time.Duration, t0 time.Time) { *d = time.Since(t0) }

// serve runs one streamed call: it reads the request (header and blob),
// runs h with panics recovered, and answers with the result blob and an
// empty trailer, or with a trailer carrying h's error. Malformed framing is
// a gRPC error.
func (s *server) serve(stream grpc.BidiStreamingServer[proto.Frame, proto.Frame], method string, h func(ctx context.Context, params, blob []byte, t *serveTimes) ([]byte, error)) error {
	t0 := time.Now()
	params, in, _, err := recvBlob(stream, false)
	if err != nil {
		if _, ok := status.FromError(err); ok {
			return err
		}
		return status.Errorf(codes.InvalidArgument, "%s request: %v", method, err)
	}
	ctx := s.callContext(stream.Context(), method)
	t1 := time.Now()
	var out []byte
	var times serveTimes
	err = safely(ctx, method, func() error {
		var err error
		out, err = h(ctx, params, in, &times)
		return err
	})
	if err != nil {
		return stream.Send(&proto.Frame{Body: &proto.Frame_Trailer{Trailer: &proto.Trailer{Error: toProtoError(err)}}})
	}
	t2 := time.Now()
	err = sendBlob(stream, nil, out, true)
	Logger(ctx).Debug().Int("in_bytes", len(in)).Int("out_bytes", len(out)).
		Dur("recv", t1.Sub(t0)).Dur("run", t2.Sub(t1)).Dur("decode", times.decode).Dur("encode", times.encode).
		Dur("send", time.Since(t2)).Msg("call done")
	return err
}

// toProtoError encodes a plugin func's error for the trailer.
func toProtoError(err error) *proto.Error {
	e := &proto.Error{Message: err.Error()}
	if pe, ok := AsParamError(err); ok {
		e.ParamError = &proto.ParamError{Param: pe.Param, Msg: pe.Msg}
	}
	return e
}

// remoteError is an error that crossed the RPC boundary: its text, and the
// *ParamError it wrapped on the plugin side, if any.
type remoteError struct {
	msg     string
	wrapped error
}

func (e *remoteError) Error() string { return e.msg }
func (e *remoteError) Unwrap() error { return e.wrapped }

// fromProtoError decodes a trailer's error.
func fromProtoError(e *proto.Error) error {
	if pe := e.GetParamError(); pe != nil {
		p := &ParamError{Param: pe.GetParam(), Msg: pe.GetMsg()}
		if p.Error() == e.GetMessage() {
			return p
		}
		return &remoteError{msg: e.GetMessage(), wrapped: p}
	}
	return &remoteError{msg: e.GetMessage()}
}

// frameSender is either end's send side of a call stream.
type frameSender interface {
	Send(*proto.Frame) error
}

// frameReceiver is either end's receive side of a call stream.
type frameReceiver interface {
	Recv() (*proto.Frame, error)
}

// sendBlob sends a header, blob in chunks of at most chunkSize and, if
// trailer, an empty trailer. It returns the first send error unchanged
// (io.EOF on a client stream means the server has already answered).
func sendBlob(s frameSender, params, blob []byte, trailer bool) error {
	err := s.Send(&proto.Frame{Body: &proto.Frame_Header{Header: &proto.Header{Params: params, Size: uint64(len(blob))}}})
	if err != nil {
		return err
	}
	for off := 0; off < len(blob); off += chunkSize {
		end := min(off+chunkSize, len(blob))
		if err := s.Send(&proto.Frame{Body: &proto.Frame_Chunk{Chunk: blob[off:end]}}); err != nil {
			return err
		}
	}
	if trailer {
		return s.Send(&proto.Frame{Body: &proto.Frame_Trailer{Trailer: &proto.Trailer{}}})
	}
	return nil
}

// recvBlob reads a header and the blob's chunks. A request (response =
// false) ends at io.EOF; a response ends with a trailer, whose error is
// returned as remote (then params and blob are nil). err reports transport
// errors (unchanged) and malformed framing.
func recvBlob(r frameReceiver, response bool) (params, blob []byte, remote *proto.Error, err error) {
	var size uint64
	header := false
	for {
		f, err := r.Recv()
		if errors.Is(err, io.EOF) {
			if response {
				return nil, nil, nil, errors.New("stream ended without a trailer")
			}
			if !header {
				return nil, nil, nil, errors.New("stream ended without a header")
			}
			break
		}
		if err != nil {
			return nil, nil, nil, err
		}
		switch b := f.GetBody().(type) {
		case *proto.Frame_Header:
			if header {
				return nil, nil, nil, errors.New("second header frame")
			}
			header = true
			params = b.Header.GetParams()
			size = b.Header.GetSize()
			if size > maxBlobSize {
				return nil, nil, nil, fmt.Errorf("announced blob of %d bytes exceeds the limit of %d", size, uint64(maxBlobSize))
			}
			blob = make([]byte, 0, min(size, maxPrealloc))
		case *proto.Frame_Chunk:
			if !header {
				return nil, nil, nil, errors.New("data frame before the header")
			}
			if uint64(len(blob))+uint64(len(b.Chunk)) > size {
				return nil, nil, nil, fmt.Errorf("blob exceeds its announced %d bytes", size)
			}
			blob = append(blob, b.Chunk...)
		case *proto.Frame_Trailer:
			if !response {
				return nil, nil, nil, errors.New("trailer frame in a request")
			}
			if e := b.Trailer.GetError(); e != nil {
				return nil, nil, e, nil
			}
			if !header {
				return nil, nil, nil, errors.New("trailer without a header")
			}
			if uint64(len(blob)) != size {
				return nil, nil, nil, fmt.Errorf("blob truncated: %d of %d bytes", len(blob), size)
			}
			return params, blob, nil, nil
		default:
			return nil, nil, nil, errors.New("empty frame")
		}
	}
	if uint64(len(blob)) != size {
		return nil, nil, nil, fmt.Errorf("blob truncated: %d of %d bytes", len(blob), size)
	}
	return params, blob, nil, nil
}

const (
	vecsMagic   = "TCBV"
	vecsVersion = 1
)

// encodeVecs encodes bit vectors: a count, then each vector's word count
// and words (little-endian).
func encodeVecs(vs []bitvec.Vec) []byte {
	n := 0
	for _, v := range vs {
		n += 4 + 8*len(v)
	}
	w := binenc.NewWriter(vecsMagic, vecsVersion, 4+n)
	w.U32(uint32(len(vs)))
	for _, v := range vs {
		w.U32(uint32(len(v)))
		for _, x := range v {
			w.I64(int64(x))
		}
	}
	return w.Bytes()
}

// decodeVecs decodes bit vectors written by encodeVecs.
func decodeVecs(data []byte) ([]bitvec.Vec, error) {
	r := binenc.NewReader(data, vecsMagic, vecsVersion)
	n := r.U32()
	out := make([]bitvec.Vec, 0, min(n, 1<<16))
	for i := uint32(0); i < n && r.Err() == nil; i++ {
		m := r.U32()
		v := make(bitvec.Vec, 0, min(m, 1<<16))
		for k := uint32(0); k < m && r.Err() == nil; k++ {
			v = append(v, uint64(r.I64()))
		}
		out = append(out, v)
	}
	if err := r.Done(); err != nil {
		return nil, fmt.Errorf("decoding bit vectors: %w", err)
	}
	return out, nil
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
