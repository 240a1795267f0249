package forward

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/tcforge/tcforge/sdk/model"

	"github.com/tcforge/tcforge/sdk/bitvec"
)

// Float is the element type of a forward pass.
type Float interface{ ~float32 | ~float64 }

// Options tune a forward pass.
type Options struct {
	// Float64 runs the pass in float64 (default float32).
	Float64 bool
	// Beta, if > 0, replaces the inverse temperature of every softmax
	// attention sublayer (the weights are unchanged).
	Beta float64
	// Workers is the number of samples batches run at once (default
	// GOMAXPROCS).
	Workers int
	// Lanes is the largest number of samples one worker carries through the
	// model together (default: the samples spread over the workers, at
	// most 32). Memory grows with Workers × Lanes.
	Lanes int
	// KeepValues keeps every readout value in Result.Values.
	KeepValues bool
	// ProbeBeta derives Result.Beta, the smallest softmax β at which the
	// pass's stream is provably unchanged (see BetaBound).
	ProbeBeta bool
	// Watch, if set, reads residual values at block boundaries into
	// Result.Watched (every token is computed at every sublayer, and no
	// blocks are fused: the same bits, more work).
	Watch *Watch
	// MaxBytes, if > 0, bounds the pass's buffers (workers ×
	// WorkerBytes(lanes)): fewer lanes, then fewer workers, are used to
	// fit it, so a large model streams its samples through a few at a
	// time; a pass that does not fit at one sample is refused with a
	// *MemoryError before anything is allocated.
	MaxBytes int64

	ctx context.Context // RunContext's
}

// Result is the outcome of a forward pass over a list of samples.
type Result struct {
	// Outputs[s] holds the output bits of sample s.
	Outputs []bitvec.Vec
	// Values[s][k] is the raw readout value of output k of sample s (with
	// Options.KeepValues).
	Values [][]float64
	// MinMargin is the smallest |value − threshold| over every readout of
	// every sample (NaN if some value is NaN).
	MinMargin float64
	// WorstSample and WorstOutput locate MinMargin.
	WorstSample, WorstOutput int
	// Beta is the probe's bound (with Options.ProbeBeta).
	Beta *BetaBound
	// Watched[s][b][k] is value k of Options.Watch at boundary b of
	// sample s.
	Watched [][][]float64
	// SiLUExps counts the lanes whose SiLU the pass evaluated exactly
	// (inside the range where it is not relu in F): an exponential each.
	SiLUExps int64

	phases Phases // PassInfo.Phases
}

// Forward compiles m and runs it on inputs.
func Forward(m *model.Model, inputs []bitvec.Vec, opt Options) (*Result, error) {
	p, err := Compile(m)
	if err != nil {
		return nil, err
	}
	return p.Run(inputs, opt)
}

// Model returns the compiled model.
func (p *Program) Model() *model.Model { return p.m }

// Run evaluates the model on every input vector (bit b of inputs[s] is
// input bit b of sample s).
func (p *Program) Run(inputs []bitvec.Vec, opt Options) (*Result, error) {
	for s, v := range inputs {
		if len(v)*64 < p.nIn {
			return nil, fmt.Errorf("model: sample %d has %d bits, the model reads %d", s, len(v)*64, p.nIn)
		}
	}
	if opt.Beta < 0 || math.IsNaN(opt.Beta) || math.IsInf(opt.Beta, 0) {
		return nil, fmt.Errorf("model: bad β override %v", opt.Beta)
	}
	if opt.ctx == nil {
		opt.ctx = context.Background()
	}
	if opt.Watch != nil {
		if err := opt.Watch.check(p.T, p.d, len(p.m.Blocks)); err != nil {
			return nil, err
		}
	}
	if err := opt.ctx.Err(); err != nil {
		return nil, err
	}
	if p.stock != nil {
		workers, _, err := p.fit(len(inputs), opt)
		if err != nil {
			return nil, err
		}
		if opt.Float64 {
			return stockRun[float64](p.stock, inputs, workers, opt)
		}
		return stockRun[float32](p.stock, inputs, workers, opt)
	}
	if opt.Float64 {
		return run[float64](p, inputs, opt)
	}
	return run[float32](p, inputs, opt)
}

func run[F Float](p *Program, inputs []bitvec.Vec, opt Options) (*Result, error) {
	n := len(inputs)
	res := &Result{Outputs: make([]bitvec.Vec, n), MinMargin: math.Inf(1), WorstSample: -1, WorstOutput: -1}
	if opt.KeepValues {
		res.Values = make([][]float64, n)
	}
	var bounds [][]int
	if opt.Watch != nil {
		res.Watched = opt.Watch.newWatched(n)
		bounds = p.boundaries()
	}
	if n == 0 {
		return res, nil
	}
	workers, lanes, err := p.fit(n, opt)
	if err != nil {
		return nil, err
	}
	batches := (n + lanes - 1) / lanes
	t0 := time.Now()
	tp, perr := makeTyped[F](p, opt)
	if perr != nil {
		// The probe does not apply: the pass runs without it.
		res.Beta = &BetaBound{Reason: perr.Error()}
		opt.ProbeBeta = false
		tp, _ = makeTyped[F](p, opt)
	}
	if opt.ProbeBeta {
		res.Beta = &BetaBound{Supported: true, Saturated: true}
	}
	typed := time.Since(t0)
	var phases Phases // the workers'

	type margin struct {
		m    float64
		s, k int
	}
	var (
		mu    sync.Mutex
		worst = margin{m: math.Inf(1), s: -1, k: -1}
		errs  []error
	)
	next := make(chan int, batches)
	for b := 0; b < batches; b++ {
		next <- b
	}
	close(next)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("model: forward pass panicked: %v", r))
					mu.Unlock()
				}
			}()
			w := getWorker(p, tp, lanes, opt.ProbeBeta)
			defer putWorker(p, w)
			var ph Phases
			defer func() {
				mu.Lock()
				res.SiLUExps += w.exps
				phases.add(ph)
				mu.Unlock()
			}()
			defer func() {
				if !opt.ProbeBeta {
					return
				}
				mu.Lock()
				defer mu.Unlock()
				bb := res.Beta
				if w.pr.err != nil && bb.Supported {
					*bb = BetaBound{Reason: w.pr.err.Error()}
				}
				if bb.Supported {
					bb.Min = max(bb.Min, w.pr.beta)
					bb.Saturated = bb.Saturated && w.pr.sat
				}
			}()
			for b := range next {
				lo := b * lanes
				hi := min(n, lo+lanes)
				t := time.Now()
				w.load(inputs[lo:hi])
				if bounds != nil {
					for _, bd := range bounds[0] {
						w.watch(opt.Watch, bd, lo, res.Watched)
					}
				}
				for i := 0; i < len(tp.subs); i++ {
					if opt.ctx.Err() != nil {
						return
					}
					s := &tp.subs[i]
					t1 := time.Now()
					ph.Other += t1.Sub(t)
					if s.fuse && bounds == nil && w.block(s, &tp.subs[i+1]) {
						i++
					} else {
						w.sublayer(s)
					}
					if bounds != nil {
						for _, bd := range bounds[i+1] {
							w.watch(opt.Watch, bd, lo, res.Watched)
						}
					}
					t = time.Now()
					if s.sparse {
						ph.Sparse += t.Sub(t1)
					} else {
						ph.Other += t.Sub(t1)
					}
				}
				local := margin{m: math.Inf(1), s: -1, k: -1}
				for l := 0; l < hi-lo; l++ {
					out := bitvec.NewVec(len(p.outTok))
					var vals []float64
					if opt.KeepValues {
						vals = make([]float64, len(p.outTok))
					}
					for k := range p.outTok {
						v := w.readout(k, l)
						if vals != nil {
							vals[k] = v
						}
						if v >= p.outThr[k] {
							out.Set(k, 1)
						}
						mg := math.Abs(v - p.outThr[k])
						if math.IsNaN(mg) {
							if !math.IsNaN(local.m) {
								local = margin{m: mg, s: lo + l, k: k}
							}
						} else if mg < local.m {
							local = margin{m: mg, s: lo + l, k: k}
						}
					}
					res.Outputs[lo+l] = out
					if vals != nil {
						res.Values[lo+l] = vals
					}
				}
				mu.Lock()
				if math.IsNaN(local.m) && !math.IsNaN(worst.m) || local.m < worst.m {
					worst = local
				}
				mu.Unlock()
				ph.Other += time.Since(t)
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if err := opt.ctx.Err(); err != nil {
		return nil, err
	}
	res.MinMargin, res.WorstSample, res.WorstOutput = worst.m, worst.s, worst.k
	res.phases = phases.over(workers)
	res.phases.Exp += tp.expTook
	res.phases.Other += typed - tp.expTook
	return res, nil
}
