package forward

import (
	"fmt"
	"slices"
	"sync"

	"github.com/tcforge/tcforge/sdk/model"
)

// Program is a model prepared for forward passes (see Compile). It is
// read-only after Compile and safe for concurrent Runs.
//
// The residual stream of a token is split into dynamic dimensions — those
// any sublayer or input bit writes — held per token and per sample, and
// static ones, which only the base embedding sets and which therefore stay
// what the embedding says until a sublayer without a residual connection
// replaces the stream. Products of weight matrices with the static part are
// computed once, here; a forward pass touches only the dynamic part. When
// Q and K read static dimensions only (and no norm), attention scores are
// the same for every sample and block and are computed once as a sparse
// T×T matrix; otherwise they are computed per sample.
type Program struct {
	m     *model.Model
	T, d  int
	nIn   int
	dyn   []int32 // dynamic index → dimension
	dynOf []int32 // dimension → dynamic index, or −1
	nd    int
	init  csr // per token: initial dynamic entries (dyn index, value)
	in    csr // per input bit: dynamic entries added when the bit is 1
	inTok []int32
	st    csr       // per token: static entries (dimension, value)
	stSq  []float64 // per token: Σ of squared static entries
	subs  []*sublayer
	// bounds[b] is the number of sublayers run at block boundary b
	// (Watch).
	bounds []int
	scores map[[2]string]*scoreMat
	sels   map[*scoreMat]*scoreMat
	// scoreRows caches, per (Q, K) tensor pair, the rows both use and
	// whether those read a dynamic dimension.
	scoreRows map[[2]string]scoreRows
	projs     map[string]*proj              // projections shared by sublayers with the same weights
	norms     map[model.RMSNorm]*normParams // norm parameters by weight and ε
	outTok    []int32
	outDyn    []int32   // dynamic index read, or −1 for a static dimension
	outStat   []float64 // the static value read (while the static part lives)
	outThr    []float64
	stLive    bool          // the static part survives the last sublayer
	delta     bool          // some sublayer needs a separate output buffer
	fuse      bool          // some attention sublayer and the FFN after it run fused (fusable)
	maxV      int           // largest Σ of V rows of one attention sublayer
	maxVBuf   int           // the same without the rows read in place from the stream (proj.alias)
	stock     *stockProgram // set for a model of stock encoder layers (stock.go)
	// need[t] is the last sublayer whose output at token t the readout
	// depends on (−1: none); nil when every token's is needed throughout.
	// A sublayer skips the tokens it is not needed at (see neededUntil).
	need []int32
	// idle holds the workers of finished passes (*worker[F]) for the next
	// pass, which would otherwise allocate their buffers — hundreds of MB
	// for a large model — while the last pass's wait for the collector.
	idleMu sync.Mutex
	idle   []any
}

// csr is a compressed sparse row list of (index, value) entries.
type csr struct {
	ptr []int32
	idx []int32
	val []float64
}

func (c *csr) row(i int) ([]int32, []float64) {
	a, b := c.ptr[i], c.ptr[i+1]
	return c.idx[a:b], c.val[a:b]
}

// proj is a weight matrix applied to every token's (normalised) stream,
// restricted to a list of output rows.
type proj struct {
	n     int
	dyn   csr // per output row: (dyn index, weight × norm weight)
	stat  csr // per token: (output row, static product); ptr nil if none
	isDyn []bool
	// alias, if set, says each row is exactly one dynamic dimension (weight
	// 1, no norm, no static part): row r is x[alias[r]].
	alias []int32
}

// scoreMat is a lane-independent attention score matrix: row i holds the
// nonzero scores s_ij in increasing j.
type scoreMat struct {
	ptr []int32
	col []int32
	s   []float64
}

type scoreRows struct {
	rows []int32
	dyn  bool
}

// head is one attention head of a sublayer.
type head struct {
	v    int // index of its V projection in the sublayer
	o    csr // per V row: (dyn index, weight)
	sc   *scoreMat
	sel  *scoreMat // hard mode: the selected keys (scores within HardTol of 1)
	q, k *proj     // scores per sample (sc == nil)
}

// sublayer is one attention or FFN sublayer.
type sublayer struct {
	idx      int32 // its index in Program.subs
	attn     bool
	residual bool
	stIn     bool // the static part lives at the input
	norm     *normParams
	inPlace  bool
	// attention
	mode  model.AttnMode
	beta  float64
	vproj []*proj
	heads []*head
	// FFN
	gate, value *proj
	out         csr // per hidden unit: (dyn index, weight)
	// fuse: an attention sublayer the FFN after it runs with, token by
	// token (fusable, worker.block).
	fuse bool
}

// fusable reports whether attention sublayer s and FFN sublayer f after
// it can run token by token (worker.block) and give the bits they give
// one after the other: s adds to the stream in place (residual, no norm,
// writing no dimension it reads) heads whose scores are the same for
// every lane, each one value row read in place from the stream into one
// output dimension; f has no norm. Queries then read only the keys' values
// from the stream before s, which block keeps apart from the stream it
// writes.
func fusable(s, f *sublayer) bool {
	if !s.attn || f.attn || !s.inPlace || !s.residual || s.norm != nil || f.norm != nil || len(s.heads) == 0 || f.gate.n == 0 {
		return false
	}
	for _, h := range s.heads {
		pr := s.vproj[h.v]
		if h.sc == nil || s.mode == model.Hard && h.sel == nil || pr.n != 1 || pr.alias == nil || h.o.ptr[1] != 1 {
			return false
		}
	}
	return true
}

type normParams struct {
	g   []float64 // per dimension
	eps float64
}

// Compile validates m and prepares it for forward passes.
func Compile(m *model.Model) (*Program, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	if slices.ContainsFunc(m.Blocks, func(b model.Block) bool { return b.Layer != nil }) {
		sp, err := compileStock(m)
		if err != nil {
			return nil, err
		}
		return &Program{m: m, T: m.Tokens, d: m.DModel, nIn: sp.in.Rows, stock: sp}, nil
	}
	idx := m.TensorIndex()
	p := &Program{m: m, T: m.Tokens, d: m.DModel, scores: map[[2]string]*scoreMat{},
		projs: map[string]*proj{}, norms: map[model.RMSNorm]*normParams{}, sels: map[*scoreMat]*scoreMat{},
		scoreRows: map[[2]string]scoreRows{}}
	in := idx[m.Embed.Input]
	p.nIn = in.Rows
	p.inTok = m.Embed.InputToken

	// Dynamic dimensions: written by an input bit, an O or a W_out.
	isDyn := make([]bool, p.d)
	for _, c := range in.Col {
		isDyn[c] = true
	}
	for _, b := range m.Blocks {
		if a := b.Attn; a != nil {
			for _, h := range a.Heads {
				o := idx[h.O]
				for r := 0; r < o.Rows; r++ {
					if o.RowPtr[r+1] > o.RowPtr[r] {
						isDyn[r] = true
					}
				}
			}
		}
		if f := b.FFN; f != nil {
			o := idx[f.Out]
			for r := 0; r < o.Rows; r++ {
				if o.RowPtr[r+1] > o.RowPtr[r] {
					isDyn[r] = true
				}
			}
		}
	}
	p.dynOf = make([]int32, p.d)
	for c := range p.dynOf {
		p.dynOf[c] = -1
		if isDyn[c] {
			p.dynOf[c] = int32(len(p.dyn))
			p.dyn = append(p.dyn, int32(c))
		}
	}
	p.nd = len(p.dyn)

	// Base embedding → initial dynamic entries and the static part.
	base := idx[m.Embed.Base]
	p.init.ptr = make([]int32, p.T+1)
	p.st.ptr = make([]int32, p.T+1)
	p.stSq = make([]float64, p.T)
	for t := 0; t < p.T; t++ {
		cols, vals := base.Row(t)
		for k, c := range cols {
			v := float64(vals[k])
			if di := p.dynOf[c]; di >= 0 {
				p.init.idx = append(p.init.idx, di)
				p.init.val = append(p.init.val, v)
			} else {
				p.st.idx = append(p.st.idx, c)
				p.st.val = append(p.st.val, v)
				p.stSq[t] += v * v
			}
		}
		p.init.ptr[t+1] = int32(len(p.init.idx))
		p.st.ptr[t+1] = int32(len(p.st.idx))
	}
	p.in.ptr = make([]int32, p.nIn+1)
	for b := 0; b < p.nIn; b++ {
		cols, vals := in.Row(b)
		for k, c := range cols {
			p.in.idx = append(p.in.idx, p.dynOf[c])
			p.in.val = append(p.in.val, float64(vals[k]))
		}
		p.in.ptr[b+1] = int32(len(p.in.idx))
	}

	transposes := map[string]*model.Tensor{}
	tr := func(t *model.Tensor) *model.Tensor {
		if x, ok := transposes[t.Name]; ok {
			return x
		}
		x := t.Transpose()
		transposes[t.Name] = x
		return x
	}
	live := true
	p.bounds = []int{0}
	for bi, b := range m.Blocks {
		if a := b.Attn; a != nil {
			s, err := p.compileAttn(a, idx, tr, live)
			if err != nil {
				return nil, fmt.Errorf("block %d attention: %w", bi, err)
			}
			p.subs = append(p.subs, s)
			live = live && a.Residual
		}
		if f := b.FFN; f != nil {
			p.subs = append(p.subs, p.compileFFN(f, idx, tr, live))
			live = live && f.Residual
		}
		p.bounds = append(p.bounds, len(p.subs))
	}
	p.stLive = live

	r := m.Readout
	p.outTok, p.outDyn = r.Token, make([]int32, len(r.Token))
	p.outStat, p.outThr = make([]float64, len(r.Token)), make([]float64, len(r.Token))
	for k := range r.Token {
		p.outThr[k] = float64(r.Threshold[k])
		p.outDyn[k] = p.dynOf[r.Dim[k]]
		if p.outDyn[k] < 0 && live {
			cols, vals := p.st.row(int(r.Token[k]))
			for e, c := range cols {
				if c == r.Dim[k] {
					p.outStat[k] = vals[e]
				}
			}
		}
	}
	for i, s := range p.subs {
		s.idx = int32(i)
		if i+1 < len(p.subs) && fusable(s, p.subs[i+1]) {
			s.fuse, p.fuse = true, true
		}
	}
	p.need = p.neededUntil()
	return p, nil
}

func (p *Program) normOf(n *model.RMSNorm, idx map[string]*model.Tensor) *normParams {
	if n == nil {
		return nil
	}
	if np, ok := p.norms[*n]; ok {
		return np
	}
	np := &normParams{g: make([]float64, p.d), eps: n.Eps}
	p.norms[*n] = np
	w := idx[n.Weight]
	cols, vals := w.Row(0)
	for k, c := range cols {
		np.g[c] = float64(vals[k])
	}
	return np
}

// nonzeroRows lists the rows of t with entries.
func nonzeroRows(t *model.Tensor) []bool {
	nz := make([]bool, t.Rows)
	for r := range nz {
		nz[r] = t.RowPtr[r+1] > t.RowPtr[r]
	}
	return nz
}

// cachedProject is project, shared between sublayers that apply the same
// weights (key names the tensors that chose rows) under the same norm.
func (p *Program) cachedProject(key string, t, tt *model.Tensor, rows []int32, norm *normParams, live bool) *proj {
	k := fmt.Sprintf("%s\x00%s\x00%p\x00%v", t.Name, key, norm, live)
	if pr, ok := p.projs[k]; ok {
		return pr
	}
	pr := p.project(t, tt, rows, norm, live)
	p.projs[k] = pr
	return pr
}

// hasDyn reports whether rows of t read a dynamic dimension.
func (p *Program) hasDyn(t *model.Tensor, rows []int32) bool {
	for _, r := range rows {
		cols, _ := t.Row(int(r))
		for _, c := range cols {
			if p.dynOf[c] >= 0 {
				return true
			}
		}
	}
	return false
}

// project compiles matrix t (its transpose tt) restricted to rows for
// inputs normalised by norm (nil: none), with the static part live or not.
func (p *Program) project(t, tt *model.Tensor, rows []int32, norm *normParams, live bool) *proj {
	pr := &proj{n: len(rows), isDyn: make([]bool, len(rows))}
	g := func(c int32) float64 {
		if norm == nil {
			return 1
		}
		return norm.g[c]
	}
	rowOf := make([]int32, t.Rows)
	for r := range rowOf {
		rowOf[r] = -1
	}
	pr.dyn.ptr = make([]int32, len(rows)+1)
	for u, r := range rows {
		rowOf[r] = int32(u)
		cols, vals := t.Row(int(r))
		for k, c := range cols {
			if di := p.dynOf[c]; di >= 0 {
				if w := float64(vals[k]) * g(c); w != 0 {
					pr.dyn.idx = append(pr.dyn.idx, di)
					pr.dyn.val = append(pr.dyn.val, w)
				}
			}
		}
		pr.dyn.ptr[u+1] = int32(len(pr.dyn.idx))
		pr.isDyn[u] = pr.dyn.ptr[u+1] > pr.dyn.ptr[u]
	}
	defer func() {
		if norm != nil || len(pr.stat.idx) != 0 {
			return
		}
		alias := make([]int32, pr.n)
		for u := 0; u < pr.n; u++ {
			a, b := pr.dyn.ptr[u], pr.dyn.ptr[u+1]
			if b-a != 1 || pr.dyn.val[a] != 1 {
				return
			}
			alias[u] = pr.dyn.idx[a]
		}
		pr.alias = alias
	}()
	if !live || len(p.st.idx) == 0 {
		return pr
	}
	// Static products, token by token, through the transpose.
	acc := make([]float64, len(rows))
	seen := make([]bool, len(rows))
	var touched []int32
	pr.stat.ptr = make([]int32, p.T+1)
	for tok := 0; tok < p.T; tok++ {
		dims, xs := p.st.row(tok)
		for e, c := range dims {
			rs, ws := tt.Row(int(c))
			for k, r := range rs {
				u := rowOf[r]
				if u < 0 {
					continue
				}
				if !seen[u] {
					seen[u] = true
					touched = append(touched, u)
				}
				acc[u] += float64(ws[k]) * g(c) * xs[e]
			}
		}
		slices.Sort(touched)
		for _, u := range touched {
			if acc[u] != 0 {
				pr.stat.idx = append(pr.stat.idx, u)
				pr.stat.val = append(pr.stat.val, acc[u])
			}
			acc[u], seen[u] = 0, false
		}
		touched = touched[:0]
		pr.stat.ptr[tok+1] = int32(len(pr.stat.idx))
	}
	return pr
}

func (p *Program) compileFFN(f *model.FFN, idx map[string]*model.Tensor, tr func(*model.Tensor) *model.Tensor, live bool) *sublayer {
	s := &sublayer{residual: f.Residual, stIn: live, norm: p.normOf(f.Norm, idx)}
	gate, value, out := idx[f.Gate], idx[f.Value], idx[f.Out]
	outT := tr(out)
	gnz, vnz := nonzeroRows(gate), nonzeroRows(value)
	var hidden []int32
	for u := 0; u < gate.Rows; u++ {
		// A unit contributes only if its gate, value and output are all nonzero.
		if gnz[u] && vnz[u] && outT.RowPtr[u+1] > outT.RowPtr[u] {
			hidden = append(hidden, int32(u))
		}
	}
	key := f.Gate + "\x00" + f.Value + "\x00" + f.Out
	s.gate = p.cachedProject(key, gate, tr(gate), hidden, s.norm, live)
	s.value = p.cachedProject(key, value, tr(value), hidden, s.norm, live)
	s.out.ptr = make([]int32, len(hidden)+1)
	for k, u := range hidden {
		rs, ws := outT.Row(int(u))
		for e, r := range rs {
			s.out.idx = append(s.out.idx, p.dynOf[r])
			s.out.val = append(s.out.val, float64(ws[e]))
		}
		s.out.ptr[k+1] = int32(len(s.out.idx))
	}
	return s
}

func (p *Program) compileAttn(a *model.Attention, idx map[string]*model.Tensor, tr func(*model.Tensor) *model.Tensor, live bool) (*sublayer, error) {
	s := &sublayer{attn: true, residual: a.Residual, stIn: live, norm: p.normOf(a.Norm, idx), mode: a.Mode, beta: a.Beta}
	vIndex := map[string]int{}
	reads := map[int32]bool{}  // dyn dims read by V, Q, K
	writes := map[int32]bool{} // dyn dims written by O
	totalV, totalVBuf := 0, 0
	for _, h := range a.Heads {
		q, k, v, o := idx[h.Q], idx[h.K], idx[h.V], idx[h.O]
		oT := tr(o)
		// V rows that matter: nonzero in V and in O's column.
		vnz := nonzeroRows(v)
		var vrows []int32
		for r := 0; r < v.Rows; r++ {
			if vnz[r] && oT.RowPtr[r+1] > oT.RowPtr[r] {
				vrows = append(vrows, int32(r))
			}
		}
		if len(vrows) == 0 {
			continue // the head adds nothing
		}
		hp := &head{}
		key := h.V + "\x00" + fmt.Sprint(vrows)
		vi, ok := vIndex[key]
		if !ok {
			vi = len(s.vproj)
			vIndex[key] = vi
			pr := p.cachedProject(h.O, v, tr(v), vrows, s.norm, live)
			s.vproj = append(s.vproj, pr)
			totalV += pr.n
			if pr.alias == nil {
				totalVBuf += pr.n
			}
			for _, di := range pr.dyn.idx {
				reads[di] = true
			}
		}
		hp.v = vi
		hp.o.ptr = make([]int32, len(vrows)+1)
		for u, r := range vrows {
			rs, ws := oT.Row(int(r))
			for e, dr := range rs {
				di := p.dynOf[dr]
				hp.o.idx = append(hp.o.idx, di)
				hp.o.val = append(hp.o.val, float64(ws[e]))
				writes[di] = true
			}
			hp.o.ptr[u+1] = int32(len(hp.o.idx))
		}
		// Score rows: nonzero in both Q and K (once per pair of tensors).
		sr, ok := p.scoreRows[[2]string{h.Q, h.K}]
		if !ok {
			qnz, knz := nonzeroRows(q), nonzeroRows(k)
			for r := 0; r < q.Rows; r++ {
				if qnz[r] && knz[r] {
					sr.rows = append(sr.rows, int32(r))
				}
			}
			sr.dyn = p.hasDyn(q, sr.rows) || p.hasDyn(k, sr.rows)
			p.scoreRows[[2]string{h.Q, h.K}] = sr
		}
		srows := sr.rows
		static := s.norm == nil && !sr.dyn
		if static {
			sk := [2]string{h.Q, h.K}
			if !live {
				sk[0] += "\x00dead"
			}
			sc, ok := p.scores[sk]
			if !ok {
				sc = p.staticScores(p.project(q, tr(q), srows, nil, live), p.project(k, tr(k), srows, nil, live))
				p.scores[sk] = sc
			}
			hp.sc = sc
			if a.Mode == model.Hard {
				sel, ok := p.sels[sc]
				if !ok {
					sel = selectHard(sc)
					p.sels[sc] = sel
				}
				hp.sel = sel
			}
		} else {
			key := h.Q + "\x00" + h.K
			qp := p.cachedProject(key, q, tr(q), srows, s.norm, live)
			kp := p.cachedProject(key, k, tr(k), srows, s.norm, live)
			hp.q, hp.k = qp, kp
			for _, di := range qp.dyn.idx {
				reads[di] = true
			}
			for _, di := range kp.dyn.idx {
				reads[di] = true
			}
		}
		s.heads = append(s.heads, hp)
	}
	s.inPlace = s.residual && s.norm == nil
	for di := range writes {
		if reads[di] {
			s.inPlace = false
		}
	}
	if !s.inPlace {
		p.delta = true
	}
	p.maxV = max(p.maxV, totalV)
	p.maxVBuf = max(p.maxVBuf, totalVBuf)
	return s, nil
}

// staticScores multiplies the static query and key projections: s_ij =
// q_i·k_j over the rows they share, through an inverted index of the keys.
func (p *Program) staticScores(qp, kp *proj) *scoreMat {
	sc := &scoreMat{ptr: make([]int32, p.T+1)}
	if qp.stat.ptr == nil || kp.stat.ptr == nil || qp.n == 0 {
		return sc
	}
	// Inverted index: row u → (token j, k_j[u]).
	inv := csr{ptr: make([]int32, qp.n+1)}
	for _, u := range kp.stat.idx {
		inv.ptr[u+1]++
	}
	for u := 0; u < qp.n; u++ {
		inv.ptr[u+1] += inv.ptr[u]
	}
	next := append([]int32(nil), inv.ptr[:qp.n]...)
	inv.idx = make([]int32, len(kp.stat.idx))
	inv.val = make([]float64, len(kp.stat.idx))
	for j := 0; j < p.T; j++ {
		us, vs := kp.stat.row(j)
		for e, u := range us {
			q := next[u]
			next[u]++
			inv.idx[q], inv.val[q] = int32(j), vs[e]
		}
	}
	acc := make([]float64, p.T)
	seen := make([]bool, p.T)
	var touched []int32
	for i := 0; i < p.T; i++ {
		us, qs := qp.stat.row(i)
		for e, u := range us {
			js, ks := inv.row(int(u))
			for f, j := range js {
				if !seen[j] {
					seen[j] = true
					touched = append(touched, j)
				}
				acc[j] += qs[e] * ks[f]
			}
		}
		if len(touched) > 1 {
			slices.Sort(touched)
		}
		for _, j := range touched {
			if acc[j] != 0 {
				sc.col = append(sc.col, j)
				sc.s = append(sc.s, acc[j])
			}
			acc[j], seen[j] = 0, false
		}
		touched = touched[:0]
		sc.ptr[i+1] = int32(len(sc.col))
	}
	return sc
}

// neededUntil returns, for every token t, the last sublayer whose output
// at t the readout depends on, or nil if that is the last sublayer for
// every token. The tokens whose outputs a sublayer s must compute exactly
// are needed(s): the readout's tokens for the last one; an FFN reads only
// its own token, so needed(s−1) = needed(s); an attention sublayer with
// lane-independent hard scores reads, for a query, the query itself and
// the keys it selects, so needed(s−1) adds those; any other attention
// (softmax sums every token's value, per-sample scores may select any)
// makes every token needed before it. The sets only grow going back, so
// one index per token holds them. Skipping a token at a sublayer where it
// is not needed leaves only values that nothing the readout depends on
// reads: the readout is the same, bit for bit.
func (p *Program) neededUntil() []int32 {
	S := int32(len(p.subs))
	last := make([]int32, p.T)
	for t := range last {
		last[t] = -1
	}
	for _, t := range p.outTok {
		last[t] = S - 1
	}
	for s := S - 1; s >= 0; s-- {
		sub := p.subs[s]
		if !sub.attn {
			continue
		}
		all := sub.mode != model.Hard
		for _, h := range sub.heads {
			all = all || h.sel == nil
		}
		if all {
			for t := range last {
				last[t] = max(last[t], s-1)
			}
			continue
		}
		for i := 0; i < p.T; i++ {
			if last[i] < s {
				continue
			}
			for _, h := range sub.heads {
				for _, j := range h.sel.col[h.sel.ptr[i]:h.sel.ptr[i+1]] {
					last[j] = max(last[j], s-1)
				}
			}
		}
	}
	for _, l := range last {
		if l < S-1 {
			return last
		}
	}
	return nil
}

// selectHard keeps the scores within HardTol of 1.
func selectHard(sc *scoreMat) *scoreMat {
	sel := &scoreMat{ptr: make([]int32, len(sc.ptr))}
	for i := 0; i+1 < len(sc.ptr); i++ {
		for e := sc.ptr[i]; e < sc.ptr[i+1]; e++ {
			if d := sc.s[e] - 1; d <= model.HardTol && d >= -model.HardTol {
				sel.col = append(sel.col, sc.col[e])
			}
		}
		sel.ptr[i+1] = int32(len(sel.col))
	}
	return sel
}
