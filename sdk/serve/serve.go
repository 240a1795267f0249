// Package serve is the main of a tcforge plugin executable: Main serves one
// plugin value over the host's wire (go-plugin, gRPC, chunked streaming).
// It is kept apart from package sdk, as go/analysis keeps singlechecker
// apart from analysis, so that the declarations an author (or the host)
// imports from sdk compile without the wire:
//
//	func main() { serve.Main(keccak.Plugin) }
package serve

import (
	"context"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/tcforge/tcforge/internal/wire"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/model"
)

// Main runs p as a tcforge plugin: it is the whole main of a plugin
// executable, which the host starts. It checks p with Validate (an invalid
// declaration is printed to stderr and the process exits with status 2),
// then serves until the host stops it and exits the process.
//
// Every call decodes the host's parameters, runs p's Prepare on them, and
// hands the resulting Pass to the call's func. Panics in p's funcs are
// recovered per call and reported to the host as errors ("plugin panicked:
// …"); the process keeps serving. Log with Pass.Log: the lines reach the
// host's log with the plugin's name attached.
func Main(p sdk.Plugin) {
	if err := sdk.Validate(p); err != nil {
		fmt.Fprintf(os.Stderr, "tcforge plugin: invalid declaration: %v\n", err)
		os.Exit(2)
	}
	wire.Serve(handler{p}, sdk.ProtocolVersion)
}

// Group runs several plugins in one process, as Main runs one: every call
// names the plugin it is for. The tcforge host serves the bundled plugins
// a run needs so, starting one process instead of one per plugin. Each
// plugin is checked with Validate, and their names must differ (else the
// process exits with status 2).
func Group(ps ...sdk.Plugin) {
	hs := make(map[string]wire.Handler, len(ps))
	for _, p := range ps {
		if err := sdk.Validate(p); err != nil {
			fmt.Fprintf(os.Stderr, "tcforge plugin: invalid declaration: %v\n", err)
			os.Exit(2)
		}
		name := p.Describe().Name
		if _, dup := hs[name]; dup || len(ps) < 2 {
			fmt.Fprintf(os.Stderr, "tcforge plugin: a group needs two or more plugins of distinct names, got %d (%q twice?)\n", len(ps), name)
			os.Exit(2)
		}
		hs[name] = handler{p}
	}
	wire.ServeGroup(hs, sdk.ProtocolVersion)
}

// handler serves one plugin value: the one generic path of every call
// (decode the parameters, prepare, decode the input artifact, call, check
// the answer is there, encode it).
type handler struct{ pl sdk.Plugin }

// Describe implements wire.Handler.
func (h handler) Describe() ([]byte, error) { return json.Marshal(h.pl.Describe()) }

// Call implements wire.Handler.
func (h handler) Call(ctx context.Context, method string, pj, in []byte, t *wire.Times) ([]byte, error) {
	out, err := h.CallParts(ctx, method, pj, in, wire.Flat{}, t)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// CallParts implements wire.PartsHandler: a circuit answer is in its flat
// encoding (MarshalFlat, its arrays written from where they lie) where
// flat allows it: a logic circuit where the host reads flat encodings, a
// layered one where it also maps the answer.
func (h handler) CallParts(ctx context.Context, method string, pj, in []byte, flat wire.Flat, t *wire.Times) ([][]byte, error) {
	out, err := h.call(ctx, method, pj, in, flat, t)
	if pe, ok := sdk.AsParamError(err); ok {
		return nil, &wire.CallError{Msg: err.Error(), Param: pe.Param, ParamMsg: pe.Msg}
	}
	return out, err
}

func (h handler) call(ctx context.Context, method string, pj, in []byte, flat wire.Flat, t *wire.Times) ([][]byte, error) {
	d := h.pl.Describe()
	p, err := sdk.ParseParams(d.Params, pj)
	if err != nil {
		return nil, err
	}
	pass, err := sdk.PassOf(ctx, h.pl, p)
	if err != nil {
		return nil, err
	}
	missing := fmt.Errorf("%s plugin %q has no %s", d.Kind, d.Name, method)
	switch pl := h.pl.(type) {
	case *sdk.Construction:
		switch method {
		case "Check":
			// The answer carries the estimate, when there is one, so
			// that the host's size check needs no call of its own (an
			// estimate that fails is left to the Estimate call, which
			// reports it).
			if pl.Estimate != nil {
				if size, err := pl.Estimate(ctx, pass); err == nil {
					b, err := json.Marshal(size)
					return [][]byte{b}, err
				}
			}
			return [][]byte{nil}, nil
		case "Estimate":
			if pl.Estimate == nil {
				return nil, missing
			}
			size, err := pl.Estimate(ctx, pass)
			if err != nil {
				return nil, err
			}
			b, err := json.Marshal(size)
			return [][]byte{b}, err
		case "Build":
			return answer(t, flat.Logic, "Build returned no circuit", in, nil, func(struct{}) (*circuit.Circuit, error) { return pl.Build(ctx, pass) })
		case "Reference":
			return answer(t, false, "Reference returned nothing", in, wire.DecodeVecs, func(in []bitvec.Vec) (*vecList, error) {
				out, err := pl.Reference(ctx, pass, in)
				return (*vecList)(&out), err
			})
		}
	case *sdk.Layerer:
		switch method {
		case "Check":
			return [][]byte{nil}, nil
		case "Layer":
			return answer(t, flat.Layered, "Layer returned no circuit", in, circuit.DecodeView, func(c *circuit.Circuit) (*layered.Circuit, error) { return pl.Layer(ctx, pass, c) })
		}
	case *sdk.Mapper:
		switch method {
		case "Check":
			return [][]byte{nil}, nil
		case "Map":
			return answer(t, false, "Map returned no model", in, layered.DecodeView, func(c *layered.Circuit) (*model.Model, error) { return pl.Map(ctx, pass, c) })
		}
	}
	return nil, missing
}

// answer decodes the request's artifact with decode (none if nil), runs
// f on it, checks that f returned something (else the error none), and
// encodes what it returned (flat, if flat and it has a flat encoding),
// timing the decoding and the encoding in t. The request blob is decode's
// to keep (DecodeView takes its arrays in place).
func answer[In any, Out interface {
	comparable
	encoding.BinaryMarshaler
}](t *wire.Times, flat bool, none string, blob []byte, decode func([]byte) (In, error), f func(In) (Out, error)) ([][]byte, error) {
	var in In
	if decode != nil {
		t0 := time.Now()
		var err error
		if in, err = decode(blob); err != nil {
			return nil, err
		}
		t.Since(&t.Decode, t0)
	}
	out, err := f(in)
	if err != nil {
		return nil, err
	}
	var zero Out
	if out == zero {
		return nil, errors.New(none)
	}
	defer t.Since(&t.Encode, time.Now())
	if fm, ok := any(out).(flatMarshaler); ok && flat {
		return fm.MarshalFlat(), nil
	}
	b, err := out.MarshalBinary()
	return [][]byte{b}, err
}

// flatMarshaler is an artifact with a flat encoding (binenc's flat
// layout), given as parts.
type flatMarshaler interface{ MarshalFlat() [][]byte }

// vecList is Reference's answer on the wire.
type vecList []bitvec.Vec

// MarshalBinary implements encoding.BinaryMarshaler.
func (v *vecList) MarshalBinary() ([]byte, error) { return wire.EncodeVecs(*v), nil }
