// Package point is the one point pipeline: build a construction's logic
// circuit and verify it against the construction's reference on random
// inputs, then layer it and verify each layered circuit against the logic
// circuit. The host's run and inspect commands and sdktest all go through
// it, so a plugin's own tests check what a run checks, the same way.
package point

import (
	"context"
	"fmt"
	"time"

	"github.com/tcforge/tcforge/internal/interrupt"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
)

// Logic is a construction's logic circuit, verified: the circuit, the
// random inputs it was checked on and its outputs on them (which every
// layered circuit is then checked against).
type Logic struct {
	Circuit    *circuit.Circuit
	Seed       uint64 // In is Samples(Seed, len(In), len(Circuit.Inputs))
	In, Out    []bitvec.Vec
	BuildTime  time.Duration // the Build call
	VerifyTime time.Duration // the Reference call and the comparison
}

// Build calls c's Build with pass, validates the circuit unless trusted
// (it was checked while decoding from a plugin process), draws n random
// inputs from seed and checks the circuit against c's Reference on them.
// An error from the plugin's funcs is returned as is (it may blame a
// parameter, see sdk.AsParamError); the others say what went wrong.
func Build(ctx context.Context, c *sdk.Construction, pass *sdk.Pass, seed uint64, n int, trusted bool) (*Logic, error) {
	t0 := time.Now()
	circ, err := c.Build(ctx, pass)
	if err != nil {
		return nil, err
	}
	if circ == nil {
		return nil, fmt.Errorf("construction %q returned no circuit", c.Name)
	}
	if !trusted {
		if err := circ.Validate(); err != nil {
			return nil, fmt.Errorf("construction %q returned an invalid circuit: %w", c.Name, err)
		}
	}
	lg := &Logic{Circuit: circ, Seed: seed, BuildTime: time.Since(t0)}
	lg.In = Samples(seed, n, len(circ.Inputs))
	t0 = time.Now()
	ref, err := c.Reference(ctx, pass, lg.In)
	if err != nil {
		return nil, err
	}
	// Evaluating a large circuit takes seconds: a signal does not wait.
	if lg.Out, err = interrupt.Do(ctx, func() ([]bitvec.Vec, error) { return verifyLogic(circ, seed, lg.In, ref) }); err != nil {
		return nil, fmt.Errorf("construction %q: %w", c.Name, err)
	}
	lg.VerifyTime = time.Since(t0)
	return lg, nil
}

// Layered is one layerer's circuit at a point and what it cost.
type Layered struct {
	Circuit    *layered.Circuit // nil if the layerer failed or returned an invalid circuit
	LayerTime  time.Duration    // the Layer call
	VerifyTime time.Duration    // the comparison with the logic circuit
}

// Layer calls l's Layer with pass on the logic circuit, validates the
// result unless trusted, and checks it against the logic circuit on the
// logic circuit's inputs. A layered circuit that is valid but computes
// something else is returned with the error, so its figures can be shown.
func Layer(ctx context.Context, l *sdk.Layerer, pass *sdk.Pass, lg *Logic, trusted bool) (Layered, error) {
	var out Layered
	t0 := time.Now()
	lc, err := l.Layer(ctx, pass, lg.Circuit)
	out.LayerTime = time.Since(t0)
	if err != nil {
		return out, err
	}
	if lc == nil {
		return out, fmt.Errorf("layerer %q returned no circuit", l.Name)
	}
	if !trusted {
		if err := lc.Validate(); err != nil {
			return out, fmt.Errorf("layerer %q returned an invalid layered circuit: %w", l.Name, err)
		}
	}
	out.Circuit = lc
	t0 = time.Now()
	_, err = interrupt.Do(ctx, func() (struct{}, error) {
		return struct{}{}, verifyLayered(lc, lg.Circuit, lg.Seed, lg.In, lg.Out)
	})
	out.VerifyTime = time.Since(t0)
	if err != nil {
		return out, fmt.Errorf("layerer %q: %w", l.Name, err)
	}
	return out, nil
}

// Check validates a layered circuit and checks it against the logic
// circuit, as Layer does with the circuit a layerer returns.
func Check(lc *layered.Circuit, lg *Logic) error {
	if err := lc.Validate(); err != nil {
		return err
	}
	return verifyLayered(lc, lg.Circuit, lg.Seed, lg.In, lg.Out)
}
