// Package wire is the transport between the tcforge host and its plugin
// processes: the go-plugin handshake, the gRPC service with its chunked
// streaming of large artifacts, errors that cross it, and the bridge that
// brings a plugin's log lines into the host's log. Plugin authors never see
// it: serve.Main (sdk/serve) serves a plugin through it, and the host's registry launches
// plugins through it. It speaks bytes; the sdk and the registry turn them
// into plugin calls and artifacts.
package wire

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/hashicorp/go-plugin"
	"github.com/rs/zerolog"
	"google.golang.org/grpc"

	"github.com/tcforge/tcforge/internal/binenc"
	"github.com/tcforge/tcforge/internal/wire/proto"
	"github.com/tcforge/tcforge/sdk/bitvec"
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
	// mdPlugin is the call metadata naming the plugin a call is for, in
	// a process serving a group of plugins (ServeGroup, LaunchGroup).
	mdPlugin = "tcforge-plugin"
	// groupPluginField is the log field naming the plugin a line of a
	// group's process comes from: the host's bridge makes it the line's
	// "plugin" field.
	groupPluginField = "tcforge_plugin"
	// hclogTimeFormat is the @timestamp layout go-plugin's host side parses.
	hclogTimeFormat = "2006-01-02T15:04:05.000000Z07:00"
)

// Handshake returns the go-plugin handshake every tcforge host and plugin
// use: the magic cookie and the plugin protocol version (sdk.ProtocolVersion).
func Handshake(protocol int) plugin.HandshakeConfig {
	return plugin.HandshakeConfig{
		ProtocolVersion:  uint(protocol),
		MagicCookieKey:   MagicCookieKey,
		MagicCookieValue: MagicCookieValue,
	}
}

// grpcPlugin is the go-plugin face of a tcforge plugin: the server side
// serves impl, the client side returns the generated gRPC client.
type grpcPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	impls   map[string]Handler // by plugin name; see server
	log     zerolog.Logger
	blobDir string  // the server's blob directory, "" if none
	mapped  *Mapped // maps the requests' blob files (plugin side)
}

// GRPCServer implements plugin.GRPCPlugin.
func (g *grpcPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	proto.RegisterPluginServer(s, &server{impls: g.impls, log: g.log, blobDir: g.blobDir, mapped: g.mapped})
	return nil
}

// GRPCClient implements plugin.GRPCPlugin.
func (g *grpcPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return proto.NewPluginClient(c), nil
}

// CallError is an error a plugin func returned, as it crosses the wire:
// its text and, when one parameter is to blame, that parameter and the
// reason (sdk.ParamError's fields). A Handler returns one to blame a
// parameter; a Client's calls return one for every error the plugin
// reported.
type CallError struct {
	Msg      string
	Param    string // "" when no parameter is to blame
	ParamMsg string
	// Cause is what the receiving side makes of the error (the host sets
	// an *sdk.ParamError here), for errors.As.
	Cause error
}

// Error implements error.
func (e *CallError) Error() string { return e.Msg }

// Unwrap returns Cause.
func (e *CallError) Unwrap() error { return e.Cause }

// toProtoError encodes a plugin func's error for the trailer.
func toProtoError(err error) *proto.Error {
	e := &proto.Error{Message: err.Error()}
	var ce *CallError
	if errors.As(err, &ce) && ce.Param != "" {
		e.ParamError = &proto.ParamError{Param: ce.Param, Msg: ce.ParamMsg}
	}
	return e
}

// fromProtoError decodes a trailer's error.
func fromProtoError(e *proto.Error) *CallError {
	ce := &CallError{Msg: e.GetMessage()}
	if pe := e.GetParamError(); pe != nil {
		ce.Param, ce.ParamMsg = pe.GetParam(), pe.GetMsg()
	}
	return ce
}

// frameSender is either end's send side of a call stream.
type frameSender interface {
	Send(*proto.Frame) error
}

// frameReceiver is either end's receive side of a call stream.
type frameReceiver interface {
	Recv() (*proto.Frame, error)
}

// sendBlob sends a header, the blob (given as consecutive parts) in
// chunks of at most chunkSize unless inFile (the receiver reads it from a
// blob file; see blobfile.go) and, if trailer, an empty trailer. It
// returns the first send error unchanged (io.EOF on a client stream means
// the server has already answered).
func sendBlob(s frameSender, params []byte, parts [][]byte, trailer, inFile bool) error {
	err := s.Send(&proto.Frame{Body: &proto.Frame_Header{Header: &proto.Header{Params: params, Size: uint64(blobSize(parts))}}})
	if err != nil {
		return err
	}
	var blob []byte
	if !inFile {
		blob = joinParts(parts)
	}
	for off := 0; off < len(blob) && !inFile; off += chunkSize {
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

// blobSize is the size of a blob given as parts.
func blobSize(parts [][]byte) int {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	return n
}

// joinParts returns the blob in one slice (the part itself if it is one).
func joinParts(parts [][]byte) []byte {
	if len(parts) == 1 {
		return parts[0]
	}
	out := make([]byte, 0, blobSize(parts))
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// recvBlob reads a header and the blob's chunks, or, if file (called when
// the header has arrived; nil: never) returns a reference, the blob take
// returns for it (a blob file read or mapped, the host's answer file). A
// request (response = false) ends at io.EOF; a response
// ends with a trailer, whose error is returned as remote (then params and
// blob are nil). err reports transport errors (unchanged), malformed
// framing and a bad blob file.
func recvBlob(r frameReceiver, response bool, file func() (blobRef, bool, error), take func(blobRef, uint64) ([]byte, error)) (params, blob []byte, remote *proto.Error, err error) {
	var size uint64
	header, inFile := false, false
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
			if file != nil {
				ref, ok, err := file()
				if err != nil {
					return nil, nil, nil, err
				}
				if ok {
					if blob, err = take(ref, size); err != nil {
						return nil, nil, nil, err
					}
					inFile = true
					continue
				}
			}
			blob = make([]byte, 0, min(size, maxPrealloc))
		case *proto.Frame_Chunk:
			if !header {
				return nil, nil, nil, errors.New("data frame before the header")
			}
			if inFile {
				return nil, nil, nil, errors.New("data frame after a blob file")
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

// EncodeVecs encodes bit vectors: a count, then each vector's word count
// and words (little-endian).
func EncodeVecs(vs []bitvec.Vec) []byte {
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

// DecodeVecs decodes bit vectors written by EncodeVecs.
func DecodeVecs(data []byte) ([]bitvec.Vec, error) {
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
