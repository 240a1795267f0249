package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"time"

	"github.com/rs/zerolog"

	"github.com/tcforge/tcforge/internal/interrupt"
	"github.com/tcforge/tcforge/internal/wire"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/model"
)

// Launch starts the plugin executable cmd (see wire.Launch; pin, for an
// external executable, runs a private copy of it, hashed, and refuses one
// whose SHA-256 is not pin.Want) and returns its
// client and the plugin as a *sdk.Construction, *sdk.Layerer or *sdk.Mapper
// (by its kind) whose funcs call the plugin process, so the host uses
// bundled and external plugins through one interface. The declaration the
// plugin describes must pass sdk.Validate. Errors from the funcs name the
// plugin and the call; a process that died shows up as a *wire.ExitError.
func Launch(ctx context.Context, name string, cmd *exec.Cmd, pin *wire.Pin, log zerolog.Logger) (*wire.Client, sdk.Plugin, error) {
	c, err := wire.Launch(ctx, name, cmd, sdk.ProtocolVersion, pin, log)
	if err != nil {
		return nil, nil, err
	}
	pl, err := validPlugin(c)
	if err != nil {
		c.Close()
		return nil, nil, fmt.Errorf("plugin %q: %w", c.Name(), err)
	}
	return c, pl, nil
}

// validPlugin returns the plugin value whose funcs call c (remotePlugin),
// its declaration checked by sdk.Validate.
func validPlugin(c *wire.Client) (sdk.Plugin, error) {
	pl, err := remotePlugin(c)
	if err == nil {
		err = sdk.Validate(pl)
	}
	return pl, err
}

// decodeDescription decodes a Description from JSON, giving parameter
// defaults the Go types Params uses (int64 for Int, float64 for Number).
func decodeDescription(data []byte) (sdk.Description, error) {
	var d sdk.Description
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&d); err != nil {
		return sdk.Description{}, fmt.Errorf("decoding the description: %w", err)
	}
	for i := range d.Params {
		n, ok := d.Params[i].Default.(json.Number)
		if !ok {
			continue
		}
		if i64, err := n.Int64(); err == nil && d.Params[i].Type == sdk.Int {
			d.Params[i].Default = i64
		} else if f, err := n.Float64(); err == nil {
			d.Params[i].Default = f
		} else {
			return sdk.Description{}, fmt.Errorf("parameter %q: bad default %q", d.Params[i].Name, n)
		}
	}
	return d, nil
}

// remote calls one plugin process.
type remote struct{ c *wire.Client }

// remotePlugin returns the plugin value of c's kind whose funcs call it.
func remotePlugin(c *wire.Client) (sdk.Plugin, error) {
	d, err := decodeDescription(c.Description())
	if err != nil {
		return nil, fmt.Errorf("plugin %q: Describe: %w", c.Name(), err)
	}
	r := remote{c}
	switch d.Kind {
	case sdk.KindConstruction:
		con := &sdk.Construction{Name: d.Name, Version: d.Version, Doc: d.Doc, Params: d.Params, Prepare: r.prepare, Build: r.build, Reference: r.reference}
		if d.Estimates {
			con.Estimate = r.estimate
		}
		return con, nil
	case sdk.KindLayerer:
		return &sdk.Layerer{Name: d.Name, Version: d.Version, Doc: d.Doc, Params: d.Params, Prepare: r.prepare, Layer: r.layer}, nil
	case sdk.KindMapper:
		return &sdk.Mapper{Name: d.Name, Version: d.Version, Doc: d.Doc, Params: d.Params, Prepare: r.prepare, Map: r.mapModel, MaxWeight: d.MaxWeight}, nil
	}
	return nil, fmt.Errorf("plugin %q: unknown plugin kind %q", c.Name(), d.Kind)
}

// call runs method with pass's parameters; a parameter the plugin blamed
// becomes an *sdk.ParamError in the error's chain.
func (r remote) call(ctx context.Context, method string, pass *sdk.Pass, in [][]byte, t *wire.CallTimes) ([]byte, error) {
	pj, err := pass.Params.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("plugin %q: %s: encoding parameters: %w", r.c.Name(), method, err)
	}
	out, err := r.c.Call(ctx, method, pj, in, t)
	var ce *wire.CallError
	if errors.As(err, &ce) && ce.Param != "" {
		ce.Cause = &sdk.ParamError{Param: ce.Param, Msg: ce.ParamMsg}
	}
	return out, err
}

// prepare is Prepare over RPC: the plugin resolves and checks the
// parameters on its side (and again on every later call). A construction
// answers with its estimate, if it has one (sdk/serve), which the host
// keeps as the pass's prepared value for estimate; nothing else is kept.
func (r remote) prepare(ctx context.Context, pass *sdk.Pass) (any, error) {
	out, err := r.call(ctx, "Check", pass, nil, nil)
	if err != nil || len(out) == 0 {
		return nil, err
	}
	s, err := r.size("Check", out)
	if err != nil {
		return nil, err
	}
	return &s, nil
}

// estimate is Construction.Estimate over RPC: the estimate the Check call
// of prepare brought, else an Estimate call.
func (r remote) estimate(ctx context.Context, pass *sdk.Pass) (sdk.Size, error) {
	if s, ok := pass.Prepared.(*sdk.Size); ok {
		return *s, nil
	}
	out, err := r.call(ctx, "Estimate", pass, nil, nil)
	if err != nil {
		return sdk.Size{}, err
	}
	return r.size("Estimate", out)
}

// size decodes the estimate in method's answer out.
func (r remote) size(method string, out []byte) (sdk.Size, error) {
	var s sdk.Size
	if err := json.Unmarshal(out, &s); err != nil {
		return sdk.Size{}, fmt.Errorf("plugin %q: %s: decoding the estimate: %w", r.c.Name(), method, err)
	}
	return s, nil
}

// build is Construction.Build over RPC.
func (r remote) build(ctx context.Context, pass *sdk.Pass) (*circuit.Circuit, error) {
	var t wire.CallTimes
	out, err := r.call(ctx, "Build", pass, nil, &t)
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	// out is ours: a flat blob's arrays are taken in place. Decoding a
	// large answer takes seconds: a signal does not wait for it.
	circ, err := interrupt.Do(ctx, func() (*circuit.Circuit, error) { return circuit.DecodeView(out) })
	if err != nil {
		return nil, fmt.Errorf("plugin %q: Build: %w", r.c.Name(), err)
	}
	t.Decode = time.Since(t0)
	r.c.LogCall("Build", &t)
	return circ, nil
}

// reference is Construction.Reference over RPC.
func (r remote) reference(ctx context.Context, pass *sdk.Pass, inputs []bitvec.Vec) ([]bitvec.Vec, error) {
	out, err := r.call(ctx, "Reference", pass, [][]byte{wire.EncodeVecs(inputs)}, nil)
	if err != nil {
		return nil, err
	}
	vs, err := wire.DecodeVecs(out)
	if err != nil {
		return nil, fmt.Errorf("plugin %q: Reference: %w", r.c.Name(), err)
	}
	return vs, nil
}

// layer is Layerer.Layer over RPC.
func (r remote) layer(ctx context.Context, pass *sdk.Pass, circ *circuit.Circuit) (*layered.Circuit, error) {
	if circ == nil {
		return nil, fmt.Errorf("plugin %q: Layer: no circuit", r.c.Name())
	}
	var t wire.CallTimes
	t0 := time.Now()
	in, err := interrupt.Do(ctx, func() ([][]byte, error) { return encode(circ, r.c.Flat()) })
	if err != nil {
		return nil, fmt.Errorf("plugin %q: Layer: encoding the circuit: %w", r.c.Name(), err)
	}
	t.Encode = time.Since(t0)
	out, err := r.call(ctx, "Layer", pass, in, &t)
	if err != nil {
		return nil, err
	}
	t0 = time.Now()
	// out is ours: a flat blob's arrays are taken in place.
	lc, err := interrupt.Do(ctx, func() (*layered.Circuit, error) { return layered.DecodeView(out) })
	if err != nil {
		return nil, fmt.Errorf("plugin %q: Layer: %w", r.c.Name(), err)
	}
	t.Decode = time.Since(t0)
	r.c.LogCall("Layer", &t)
	return lc, nil
}

// encode returns a logic circuit's blob as parts: its flat encoding (its
// own arrays, no copy) if flat, else its packed one.
func encode(c *circuit.Circuit, flat bool) ([][]byte, error) {
	if flat {
		return c.MarshalFlat(), nil
	}
	b, err := c.MarshalBinary()
	return [][]byte{b}, err
}

// mapModel is Mapper.Map over RPC.
func (r remote) mapModel(ctx context.Context, pass *sdk.Pass, lc *layered.Circuit) (*model.Model, error) {
	if lc == nil {
		return nil, fmt.Errorf("plugin %q: Map: no circuit", r.c.Name())
	}
	var t wire.CallTimes
	t0 := time.Now()
	// Packed: the plugin reads the blob into fresh memory, where a flat
	// one (every repeated row in full) costs more than it saves.
	in, err := interrupt.Do(ctx, lc.MarshalBinary)
	if err != nil {
		return nil, fmt.Errorf("plugin %q: Map: encoding the circuit: %w", r.c.Name(), err)
	}
	t.Encode = time.Since(t0)
	out, err := r.call(ctx, "Map", pass, [][]byte{in}, &t)
	if err != nil {
		return nil, err
	}
	t0 = time.Now()
	// A model of hundreds of MB takes seconds to decode (a 467 MB one
	// 11.9 s): a signal does not wait for it.
	m, err := interrupt.Do(ctx, func() (*model.Model, error) {
		var m model.Model
		return &m, m.UnmarshalBinary(out)
	})
	if err != nil {
		return nil, fmt.Errorf("plugin %q: Map: %w", r.c.Name(), err)
	}
	t.Decode = time.Since(t0)
	r.c.LogCall("Map", &t)
	return m, nil
}
