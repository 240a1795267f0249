package forward

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/tcforge/tcforge/sdk/bitvec"
)

// MemoryError reports a forward pass whose buffers for a single sample
// on a single worker exceed Options.MaxBytes: it is refused before
// anything is allocated.
type MemoryError struct {
	Need, Limit int64 // bytes
}

// Error implements error.
func (e *MemoryError) Error() string {
	return fmt.Sprintf("the forward pass needs %d MiB for one sample at a time, over its memory budget of %d MiB", e.Need>>20, e.Limit>>20)
}

// WorkerBytes returns the bytes of the buffers one worker of a pass with
// options opt allocates to carry lanes samples through the model at once
// (the residual stream, its delta or the second stream of a fused block, the V projections, the probe's copy and means),
// the memory a pass needs beyond the Program itself: workers × WorkerBytes.
func (p *Program) WorkerBytes(lanes int, opt Options) int64 {
	f := int64(4)
	if opt.Float64 {
		f = 8
	}
	L := int64(lanes)
	if s := p.stock; s != nil {
		mf := 0
		for _, l := range s.layers {
			mf = max(mf, l.ffn)
		}
		T, d := int64(s.T), int64(s.d)
		return f * (6*T*d + T*int64(mf) + T)
	}
	T, nd := int64(p.T), int64(p.nd)
	hid := int64(0)
	for _, s := range p.subs {
		if !s.attn {
			hid = max(hid, int64(s.gate.n))
		}
	}
	n := T*nd*L + T*int64(p.maxVBuf)*L + 2*max(1, int64(p.maxV))*L + 2*hid*L + T*L + L
	if p.delta {
		n += T * nd * L
	}
	if p.fuse && !opt.ProbeBeta {
		n += T * nd * L // the stream a fused block writes (worker.block)
	}
	if opt.ProbeBeta {
		n += T*nd*L + int64(p.maxV)*L + 2*hid*L + 2*L
		n += (4*nd*L + 2*L) * 8 / f // float64 scratch
	}
	return f * n
}

// fit returns the workers and lanes a pass over n samples with options
// opt runs with: opt's (or the defaults), reduced — lanes first, then
// workers — until workers × WorkerBytes(lanes) fits opt.MaxBytes. A pass
// that does not fit even at one sample on one worker is refused.
func (p *Program) fit(n int, opt Options) (workers, lanes int, err error) {
	workers = opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	lanes = opt.Lanes
	if lanes <= 0 {
		lanes = min(32, (n+workers-1)/workers)
	}
	lanes = max(1, min(lanes, n))
	if p.stock != nil {
		lanes = 1 // a stock worker carries one sample
	}
	workers = max(1, min(workers, (n+lanes-1)/lanes))
	if opt.MaxBytes <= 0 {
		return workers, lanes, nil
	}
	for lanes > 1 && int64(workers)*p.WorkerBytes(lanes, opt) > opt.MaxBytes {
		lanes = (lanes + 1) / 2
	}
	for workers > 1 && int64(workers)*p.WorkerBytes(lanes, opt) > opt.MaxBytes {
		workers--
	}
	if need := int64(workers) * p.WorkerBytes(lanes, opt); need > opt.MaxBytes {
		return 0, 0, &MemoryError{Need: need, Limit: opt.MaxBytes}
	}
	return workers, lanes, nil
}

// RunContext is Run, stopped when ctx ends: each worker checks ctx before
// every sublayer of every batch (a block of the model at a time), so a
// pass over a large model stops within one sublayer's work; the error is
// then ctx's. Under a context of WithTrace it reports the finished pass.
func (p *Program) RunContext(ctx context.Context, inputs []bitvec.Vec, opt Options) (*Result, error) {
	opt.ctx = ctx
	done, _ := ctx.Value(traceKey{}).(func(PassInfo))
	if done == nil {
		return p.Run(inputs, opt)
	}
	t0 := time.Now()
	res, err := p.Run(inputs, opt)
	if err == nil {
		took := time.Since(t0)
		w := p.Work(len(inputs), opt)
		w.Exps += res.SiLUExps
		done(PassInfo{Samples: len(inputs), Float64: opt.Float64, ProbeBeta: opt.ProbeBeta, Beta: opt.Beta, Work: w, Took: took, Phases: res.phases})
	}
	return res, err
}
