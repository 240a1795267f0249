package tokensasstates

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/tcforge/tcforge/sdk/model"
)

// pinScale starts the model, picks the constant cv that pins LayerNorm's
// scale, and refuses a circuit whose sums float32 cannot carry exactly.
func (mp *mapping) pinScale() error {
	T, D, top, d, S, nF, nPart, dimBal, mu := mp.T, mp.D, mp.top, mp.d, mp.S, mp.nF, mp.nPart, mp.dimBal, mp.mu
	lv, bound, sumAbs, mass, budget := mp.lv, mp.bound, mp.sumAbs, mp.mass, mp.budget
	m := &model.Model{Arch: "tokens-as-states/stock", Tokens: T, DModel: d,
		Attrs: map[string]int64{"depth": int64(D), "levels_folded": int64(D - top), "slots": int64(S),
			"fetched": int64(nF), "position_dims": int64(nPart - 1)}}
	// ±cv pins LayerNorm's scale to 1 + δ, |δ| ≤ Σ data²/(4cv²): a step's
	// pre-activation K·s is then off by at most K·max|s|·δ, kept below
	// 1/40 (its margin is 1) by cv² ≥ 10·K·max|s|·Σ data², a power of two
	// (adders' carries: sums up to 2^(n+1)).
	dataSq := float64(nPart) + 1
	maxS := 1.0
	if dimBal >= 0 {
		mu = 0
	}
	for L := 1; L <= top; L++ {
		for _, cl := range lv[L].classes {
			maxS = max(maxS, budget(cl, mu))
		}
	}
	if dimBal >= 0 {
		m.Attrs["balance"] = 1
	}
	for L := 1; L <= top; L++ {
		var sq float64
		for _, b := range bound[L-1] {
			sq += b * b
		}
		for _, cb := range lv[L].combos {
			m := mass(L-1, cb.slot, cb.w)
			sq += m * m
		}
		if dimBal >= 0 { // the balance: minus the sum of the rest
			sq += sumAbs[L] * sumAbs[L]
		}
		dataSq = max(dataSq, float64(nPart)+1+sq)
	}
	cv := C
	for cv*cv < 10*Steep*maxS*dataSq {
		cv *= 2
	}
	m.Attrs["C"] = int64(cv)
	m.Attrs["max_sum"] = int64(maxS)
	if maxS > mp.maxSum() {
		return fmt.Errorf("tokens-as-states: a gate's Σ|w·x| + |θ| (x bounded by the steps its forms add up) reaches %d > %d: each LayerNorm output carries a relative float32 error of 2⁻²⁴, so a step's pre-activation K·Σ w·x would be uncertain by more than its margin (not exact in float32)%s", int64(maxS), int64(mp.maxSum()), mp.hint())
	}
	sigma0 := cv * math.Sqrt(2/float64(d))
	mp.m, mp.cv, mp.sigma0 = m, cv, sigma0
	return nil
}

// hint is what a refusal for the float32 budget adds: the layerer
// setting that narrows the additions, when a circuit has any (a SUMBIT
// cut into chunks leaves its carries' sums in the forms).
func (mp *mapping) hint() string {
	if mp.cfg.MaxSum > 0 {
		return ""
	}
	return fmt.Sprintf("; max_weight = %d on the layerer (fusion, reifier) cuts modular additions into 8-bit chunks, which keeps the gates of SHA-256, MD5, SHA-1, BLAKE2s and BLAKE3 within it, and is what a layerer block that leaves max_weight unset gets under this mapper", MaxWeight)
}

// embedding writes the position embedding (base) and the input map.
func (mp *mapping) embedding() {
	c, m, T, d, cv, anyFetch, indDim, part, dimR, slot, tok, dimBal := mp.c, mp.m, mp.T, mp.d, mp.cv, mp.anyFetch, mp.indDim, mp.part, mp.dimR, mp.slot, mp.tok, mp.dimBal
	base := newTensor("embed.pos", T, d)
	for z := range T {
		base.add(z, dimPlus, cv)
		base.add(z, dimMinus, -cv)
		if anyFetch {
			a := 2 * math.Pi * float64(z) / float64(T)
			base.add(z, dimCos, math.Cos(a))
			base.add(z, dimSin, math.Sin(a))
		}
		if k := indDim[part[z]]; k >= 0 {
			base.add(z, k, 1)
		}
	}
	in := newTensor("embed.input", c.NumInputs, d)
	m.Embed = model.Embedding{Base: base.name, Input: in.name, InputToken: make([]int32, c.NumInputs)}
	for i := range c.NumInputs {
		in.add(i, dimR+int(slot[0][i]), 1)
		m.Embed.InputToken[i] = tok[0][i]
	}
	if dimBal >= 0 {
		base.balanceRows(dimBal)
		in.balanceRows(dimBal)
	}
	mp.tensors = append(mp.tensors, base, in)
}

// blocks writes one encoder layer a level of the stream.
func (mp *mapping) blocks() {
	T, hd, top := mp.T, mp.hd, mp.top
	A := 0.0 // query scale: a score gap of Gap, MHA's 1/sqrt(head_dim) folded in
	if T > 1 {
		A = Gap / (1 - math.Cos(2*math.Pi/float64(T))) * math.Sqrt(float64(hd))
	}
	for L := 1; L <= top; L++ {
		mp.block(L, A)
	}
}

// block writes level L's encoder layer (A: the query scale): the heads
// fetch its combinations (attention), the FFN computes its classes
// (ffn).
func (mp *mapping) block(L int, A float64) {
	m, d, sigma0, nhead, dimBal := mp.m, mp.d, mp.sigma0, mp.nhead, mp.dimBal
	p := fmt.Sprintf("layers.%d.", L-1)
	n1w, n1b := fill(newTensor(p+"norm1.weight", 1, d), sigma0), newTensor(p+"norm1.bias", 1, d)
	n2w, n2b := fill(newTensor(p+"norm2.weight", 1, d), sigma0), newTensor(p+"norm2.bias", 1, d)
	inW, inB := newTensor(p+"self_attn.in_proj_weight", 3*d, d), newTensor(p+"self_attn.in_proj_bias", 1, 3*d)
	outW, outB := newTensor(p+"self_attn.out_proj.weight", d, d), newTensor(p+"self_attn.out_proj.bias", 1, d)
	mp.attention(L, A, inW, outW)
	l1W, l1B, l2W, l2B := mp.ffn(L, p)
	if dimBal >= 0 {
		outW.balanceCols(dimBal)
		l2W.balanceCols(dimBal)
	}
	for _, t := range []*tensor{n1w, n1b, inW, inB, outW, outB, n2w, n2b, l1W, l1B, l2W, l2B} {
		t.freeze()
		mp.tensors = append(mp.tensors, t)
	}
	m.Blocks = append(m.Blocks, model.Block{Layer: &model.EncoderLayer{Heads: nhead, Eps: Eps,
		Norm1W: n1w.name, Norm1B: n1b.name, InProjW: inW.name, InProjB: inB.name,
		OutProjW: outW.name, OutProjB: outB.name, Norm2W: n2w.name, Norm2B: n2b.name,
		Linear1W: l1W.name, Linear1B: l1B.name, Linear2W: l2W.name, Linear2B: l2B.name}})
}

// attention writes level L's heads into the attention's projections
// (inW, outW; A: the query scale): a head fetches head_dim combinations
// of one offset r, its query pointing at token z − r.
func (mp *mapping) attention(L int, A float64, inW, outW *tensor) {
	T, d, lv, dimR, dimF, hd := mp.T, mp.d, mp.lv, mp.dimR, mp.dimF, mp.hd
	// Heads: each offset's combinations, head_dim at a time.
	combos := lv[L].combos
	byR := map[int][]int{}
	var rs []int
	for j, cb := range combos {
		if byR[cb.r] == nil {
			rs = append(rs, cb.r)
		}
		byR[cb.r] = append(byR[cb.r], j)
	}
	slices.Sort(rs)
	h := 0
	for _, r := range rs {
		js := byR[r]
		for len(js) > 0 {
			n := min(hd, len(js))
			a := 2 * math.Pi * float64(r) / float64(T)
			q, k, v := h*hd, d+h*hd, 2*d+h*hd
			// q = A·(cos, sin)(2π(z−r)/T) = A·rot(−r)(cos z, sin z).
			inW.add(q, dimCos, A*math.Cos(a))
			inW.add(q, dimSin, A*math.Sin(a))
			inW.add(q+1, dimCos, -A*math.Sin(a))
			inW.add(q+1, dimSin, A*math.Cos(a))
			inW.add(k, dimCos, 1)
			inW.add(k+1, dimSin, 1)
			for _, row := range []int{q, q + 1, k, k + 1} {
				inW.readLN(row)
			}
			for e, j := range js[:n] {
				for t, s := range combos[j].slot {
					inW.add(v+e, dimR+int(s), float64(combos[j].w[t]))
				}
				inW.readLN(v + e)
				outW.add(dimF+j, h*hd+e, 1)
			}
			js = js[n:]
			h++
		}
	}
}

// ffn writes level L's FFN (p: its tensors' name prefix): two units a
// class, two a cleared dimension of the level below and of the fetched
// copies, and on the top level one a part adding the per-token readout
// thresholds.
func (mp *mapping) ffn(L int, p string) (l1W, l1B, l2W, l2B *tensor) {
	d, lv, dimR, dimF, top := mp.d, mp.lv, mp.dimR, mp.dimF, mp.top
	corr, rep, basePart, uniform, indDim, nPart := mp.corr, mp.rep, mp.basePart, mp.uniform, mp.indDim, mp.nPart
	combos := lv[L].combos
	dim := func(x int32) int {
		if x >= 0 {
			return dimR + int(x)
		}
		return dimF + int(-x-1)
	}
	// FFN: two units a class, then two a cleared dimension.
	classes := lv[L].classes
	width := 2*len(classes) + 2*(lv[L].cleared+len(combos))
	if L == top {
		width += len(corr)
	}
	mp.F = max(mp.F, width)
	l1W, l1B = newTensor(p+"linear1.weight", width, d), newTensor(p+"linear1.bias", 1, width)
	l2W, l2B = newTensor(p+"linear2.weight", d, width), newTensor(p+"linear2.bias", 1, d)
	u := 0
	for _, cl := range classes {
		// h = K(s − θ + ½): the step is relu(h) − relu(h − 1), saturated
		// (h ≤ −K/2 or h ≥ K/2 ≥ 1 + K·error) so input errors die here.
		for k := range cl.dims {
			l1W.add(u, dim(cl.dims[k]), Steep*float64(cl.w[k]))
			l1W.add(u+1, dim(cl.dims[k]), Steep*float64(cl.w[k]))
		}
		b0 := steepBias(cl, rep[basePart])
		if !uniform(cl) {
			for q, k := range indDim {
				if k < 0 {
					continue
				}
				if dv := steepBias(cl, rep[q]) - b0; dv != 0 {
					l1W.add(u, k, dv)
					l1W.add(u+1, k, dv)
				}
			}
		}
		l1W.readLN(u)
		l1W.readLN(u + 1)
		l1B.add(0, u, b0)
		l1B.add(0, u+1, b0-1)
		for _, o := range cl.outs {
			l2W.add(dimR+int(o[0]), u, float64(o[1]))
			l2W.add(dimR+int(o[0]), u+1, -float64(o[1]))
		}
		u += 2
	}
	// Clear the level below and the fetched copies: x = relu(x) − relu(−x).
	clear := func(dim int) {
		l1W.add(u, dim, 1)
		l1W.add(u+1, dim, -1)
		l1W.readLN(u)
		l1W.readLN(u + 1)
		l2W.add(dim, u, -1)
		l2W.add(dim, u+1, 1)
		u += 2
	}
	for s := range lv[L].cleared {
		clear(dimR + s)
	}
	for j := range combos {
		clear(dimF + j)
	}
	if L == top {
		// Per-token readout thresholds: relu(indicator of part p) ≈ 1 on
		// p's tokens adds θ(item) − θ(p's item) to its slots.
		for p := range int32(nPart) {
			if corr[p] == nil {
				continue
			}
			l1W.add(u, indDim[p], 1)
			l1W.readLN(u)
			for j, v := range corr[p] {
				if v != 0 {
					l2W.add(dimR+j, u, v)
				}
			}
			u++
		}
	}
	return l1W, l1B, l2W, l2B
}

// padFFN pads every layer's FFN to the widest: every stock layer has the
// same dim_feedforward.
func (mp *mapping) padFFN() {
	tensors, F, m := mp.tensors, mp.F, mp.m
	for _, t := range tensors {
		switch {
		case strings.HasSuffix(t.name, "linear1.weight"):
			t.resize(F, t.cols)
		case strings.HasSuffix(t.name, "linear1.bias"), strings.HasSuffix(t.name, "linear2.weight"):
			t.resize(t.rows, F)
		}
	}
	m.Attrs["ffn_width"] = int64(F)
}

// readout writes the readout and the tensors and validates the model.
func (mp *mapping) readout() (*model.Model, error) {
	m, nOut, partsOf, parts, top, dimR, slot, readThr, tensors := mp.m, mp.nOut, mp.partsOf, mp.parts, mp.top, mp.dimR, mp.slot, mp.readThr, mp.tensors
	// Readout: output k is its value ≥ ½ (a gate), or, folded, its
	// pre-activation ≥ θ − ½.
	m.Readout = model.Readout{Token: make([]int32, nOut), Dim: make([]int32, nOut), Threshold: make([]float32, nOut)}
	for k := range nOut {
		q := partsOf[top][k][0]
		m.Readout.Token[k] = parts[top][q].tok
		m.Readout.Dim[k] = int32(dimR) + slot[top][q]
		m.Readout.Threshold[k] = float32(readThr[slot[top][q]])
	}
	for _, t := range tensors {
		m.Tensors = append(m.Tensors, t.build())
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("tokens-as-states: built an invalid model: %w", err)
	}
	return m, nil
}
