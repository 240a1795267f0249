package forward

import (
	"fmt"
	"slices"
)

// Watch names residual-stream values a pass reads at block boundaries, for
// locating where a model departs from what its labels say it holds
// (labelcheck.Locate). Boundary 0 is the stream after the embedding,
// boundary b (1 ≤ b ≤ blocks) the stream after b blocks, as model.Labels
// counts them.
type Watch struct {
	// Token[b][k] and Dim[b][k] name value k read at boundary b; a
	// boundary past len(Token) reads nothing.
	Token, Dim [][]int32
}

// check reports a watch naming a boundary, token or dimension the model
// does not have.
func (wt *Watch) check(T, d, blocks int) error {
	if len(wt.Token) != len(wt.Dim) || len(wt.Token) > blocks+1 {
		return fmt.Errorf("model: watch of %d token lists and %d dimension lists, for %d boundaries", len(wt.Token), len(wt.Dim), blocks+1)
	}
	for b := range wt.Token {
		if len(wt.Token[b]) != len(wt.Dim[b]) {
			return fmt.Errorf("model: watch at boundary %d: %d tokens, %d dimensions", b, len(wt.Token[b]), len(wt.Dim[b]))
		}
		for k, t := range wt.Token[b] {
			if t < 0 || int(t) >= T || wt.Dim[b][k] < 0 || int(wt.Dim[b][k]) >= d {
				return fmt.Errorf("model: watch at boundary %d: token %d, dimension %d outside the model's %d × %d", b, t, wt.Dim[b][k], T, d)
			}
		}
	}
	return nil
}

// newWatched returns Result.Watched for n samples.
func (wt *Watch) newWatched(n int) [][][]float64 {
	out := make([][][]float64, n)
	for s := range out {
		out[s] = make([][]float64, len(wt.Token))
		for b, toks := range wt.Token {
			out[s][b] = make([]float64, len(toks))
		}
	}
	return out
}

// boundaries returns, for each number of sublayers run (0 … len(subs)),
// the block boundaries reached then: bounds[i] lists the boundaries after
// i sublayers.
func (p *Program) boundaries() [][]int {
	out := make([][]int, len(p.subs)+1)
	for b, n := range p.bounds {
		out[n] = append(out[n], b)
	}
	return out
}

// watch records the watched values at boundary b of the worker's lanes
// (samples lo …) into watched.
func (w *worker[F]) watch(wt *Watch, b, lo int, watched [][][]float64) {
	if b >= len(wt.Token) {
		return
	}
	p := w.p
	for l := 0; l < w.n; l++ {
		out := watched[lo+l][b]
		for k, t := range wt.Token[b] {
			d := wt.Dim[b][k]
			switch di := p.dynOf[d]; {
			case di >= 0:
				out[k] = float64(w.x[(int(t)*p.nd+int(di))*w.L+l])
			case w.live:
				cols, vals := p.st.row(int(t))
				out[k] = 0
				if i := slices.Index(cols, d); i >= 0 {
					out[k] = vals[i]
				}
			default:
				out[k] = 0
			}
		}
	}
}

// watch records the watched values at boundary b of one stock sample.
func (st *stockState[F]) watch(wt *Watch, b int, out [][]float64) {
	if b >= len(wt.Token) {
		return
	}
	for k, t := range wt.Token[b] {
		out[b][k] = float64(st.x[int(t)*st.p.d+int(wt.Dim[b][k])])
	}
}
