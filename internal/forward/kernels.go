package forward

import (
	"math"
	"unsafe"
)

// Inner loops of the forward pass, over the lanes (samples) of one row.
// They are unrolled by 8 with the accumulators in locals, which the Go
// compiler keeps in registers; bounds are checked once per block.

// f32 returns a pointer to xs[0] as a *float32 (F is float32).
func f32[F Float](xs []F) *float32 { return (*float32)(unsafe.Pointer(&xs[0])) }

// f64 returns a pointer to xs[0] as a *float64 (F is float64).
func f64[F Float](xs []F) *float64 { return (*float64)(unsafe.Pointer(&xs[0])) }

// avx32 reports whether the float32 assembly kernels apply: float32 and 32
// lanes.
func avx32[F Float](n int) bool {
	var x F
	return useAVX && unsafe.Sizeof(x) == 4 && n == 32
}

// avx64 reports whether the float64 assembly kernels apply: float64 and 32
// lanes.
func avx64[F Float](n int) bool {
	var x F
	return useAVX && unsafe.Sizeof(x) == 8 && n == 32
}

// avx512x32 reports whether the float32 AVX-512 kernels apply: float32 and
// 32 lanes.
func avx512x32[F Float](n int) bool {
	var x F
	return useAVX512 && unsafe.Sizeof(x) == 4 && n == 32
}

// avx512x64 reports whether the float64 AVX-512 kernels apply: float64 and
// 32 lanes.
func avx512x64[F Float](n int) bool {
	var x F
	return useAVX512 && unsafe.Sizeof(x) == 8 && n == 32
}

// axpy sets d[l] += w·x[l].
func axpy[F Float](d, x []F, w F) {
	x = x[:len(d)]
	if avx32[F](len(d)) {
		axpy32(f32(d), f32(x), float32(w))
		return
	}
	if avx64[F](len(d)) {
		axpy64(f64(d), f64(x), float64(w))
		return
	}
	i := 0
	for ; i+8 <= len(d); i += 8 {
		dd, xx := d[i:i+8:i+8], x[i:i+8:i+8]
		dd[0] += w * xx[0]
		dd[1] += w * xx[1]
		dd[2] += w * xx[2]
		dd[3] += w * xx[3]
		dd[4] += w * xx[4]
		dd[5] += w * xx[5]
		dd[6] += w * xx[6]
		dd[7] += w * xx[7]
	}
	for ; i < len(d); i++ {
		d[i] += w * x[i]
	}
}

// gather sets d[l] += Σ_e ws[e]·buf[cols[e]·stride + off + l] (ws nil:
// weight w for every e).
func gather[F Float](d, buf []F, stride, off int, cols []int32, ws []F, w F) {
	n := len(d)
	if avx512x32[F](n) && len(cols) > 0 {
		var wp *float32
		if ws != nil {
			wp = f32(ws[:len(cols)])
		}
		gather32z(f32(d), f32(buf), 4*stride, 4*off, &cols[0], len(cols), wp, float32(w))
		return
	}
	if avx512x64[F](n) && len(cols) > 0 {
		var wp *float64
		if ws != nil {
			wp = f64(ws[:len(cols)])
		}
		gather64z(f64(d), f64(buf), 8*stride, 8*off, &cols[0], len(cols), wp, float64(w))
		return
	}
	if avx32[F](n) && len(cols) > 0 {
		var wp *float32
		if ws != nil {
			wp = f32(ws[:len(cols)])
		}
		gather32(f32(d), f32(buf), 4*stride, 4*off, &cols[0], len(cols), wp, float32(w))
		return
	}
	if avx64[F](n) && len(cols) > 0 {
		var wp *float64
		if ws != nil {
			wp = f64(ws[:len(cols)])
		}
		gather64(f64(d), f64(buf), 8*stride, 8*off, &cols[0], len(cols), wp, float64(w))
		return
	}
	i := 0
	for ; i+8 <= n; i += 8 {
		dd := d[i : i+8 : i+8]
		a0, a1, a2, a3, a4, a5, a6, a7 := dd[0], dd[1], dd[2], dd[3], dd[4], dd[5], dd[6], dd[7]
		for e, j := range cols {
			x := buf[int(j)*stride+off+i:][:8:8]
			wt := w
			if ws != nil {
				wt = ws[e]
			}
			a0 += wt * x[0]
			a1 += wt * x[1]
			a2 += wt * x[2]
			a3 += wt * x[3]
			a4 += wt * x[4]
			a5 += wt * x[5]
			a6 += wt * x[6]
			a7 += wt * x[7]
		}
		dd[0], dd[1], dd[2], dd[3], dd[4], dd[5], dd[6], dd[7] = a0, a1, a2, a3, a4, a5, a6, a7
	}
	for ; i < n; i++ {
		a := d[i]
		for e, j := range cols {
			wt := w
			if ws != nil {
				wt = ws[e]
			}
			a += wt * buf[int(j)*stride+off+i]
		}
		d[i] = a
	}
}

// siluCacheSize is the entries of a siluCache (a power of 2).
const siluCacheSize = 1 << 10

// siluCache remembers SiLU at recent arguments, by their bits: SiLU is a
// pure function, so a hit gives the bits an evaluation would. Inside the
// range where SiLU in F is not relu the arguments of a pass repeat (a
// gate's pre-activation takes the few values its inputs' sums allow), and
// the float64 pass evaluates there for every gate between −745 and −38.
type siluCache struct {
	key [siluCacheSize]uint64 // float64 bits of the argument; a NaN (never an argument) when empty
	val [siluCacheSize]float64
}

func newSiLUCache() *siluCache {
	c := &siluCache{}
	for i := range c.key {
		c.key[i] = 0x7ff8_0000_0000_0001
	}
	return c
}

// cachedSiLU returns silu(x), from c or evaluated (then true: an
// exponential).
func cachedSiLU[F Float](c *siluCache, x F) (F, bool) {
	b := math.Float64bits(float64(x))
	i := (b * 0x9e3779b97f4a7c15) >> (64 - 10)
	if c.key[i] == b {
		return F(c.val[i]), false
	}
	v := silu(x)
	c.key[i], c.val[i] = b, float64(v)
	return v, true
}

// siluMul sets h[l] *= SiLU(g[l]). Beyond (lo, hi) SiLU in F is exactly
// relu (the identity or 0), computed branch-free on the sign bit; inside,
// the exact evaluation (rare on saturated units, so well predicted),
// through c. It returns the exact evaluations (an exponential each).
func siluMul[F Float](h, g []F, lo, hi F, c *siluCache) int {
	g = g[:len(h)]
	if avx32[F](len(h)) && reluMul32(f32(h), f32(g), float32(lo), float32(hi)) {
		return 0
	}
	if avx64[F](len(h)) && reluMul64(f64(h), f64(g), float64(lo), float64(hi)) {
		return 0
	}
	exps := 0
	if unsafe.Sizeof(lo) == 4 {
		for l, x := range g {
			b := *(*uint32)(unsafe.Pointer(&x))
			b &^= uint32(int32(b) >> 31)
			s := *(*F)(unsafe.Pointer(&b))
			if x > lo && x < hi {
				var ev bool
				if s, ev = cachedSiLU(c, x); ev {
					exps++
				}
			}
			h[l] *= s
		}
		return exps
	}
	for l, x := range g {
		b := *(*uint64)(unsafe.Pointer(&x))
		b &^= uint64(int64(b) >> 63)
		s := *(*F)(unsafe.Pointer(&b))
		if x > lo && x < hi {
			var ev bool
			if s, ev = cachedSiLU(c, x); ev {
				exps++
			}
		}
		h[l] *= s
	}
	return exps
}

// fill sets d[l] = c + w·x[l].
func fill[F Float](d, x []F, c, w F) {
	x = x[:len(d)]
	if avx32[F](len(d)) {
		fma32(f32(d), f32(x), float32(c), float32(w))
		return
	}
	if avx64[F](len(d)) {
		muladd64(f64(d), f64(x), float64(c), float64(w))
		return
	}
	for l, v := range x {
		d[l] = c + w*v
	}
}

// scale sets d[l] *= s.
func scale[F Float](d []F, s F) {
	if avx32[F](len(d)) {
		scale32(f32(d), float32(s))
		return
	}
	if avx64[F](len(d)) {
		scale64(f64(d), float64(s))
		return
	}
	for l := range d {
		d[l] *= s
	}
}

// softRow sets a[l] = (bs·sum[l] + Σ_e wp[e]·buf[cols[e]·stride+off+l])·invZ
// — one softmax query's output for one V row (attention.go) — and, if d is
// not nil, d[l] += ow·a[l]: the product bs·sum rounded, then gather, scale
// and axpy, in one call where the AVX-512 kernels apply.
func softRow[F Float](a, sum, buf []F, stride, off int, cols []int32, wp []F, bs, invZ F, d []F, ow F) {
	n := len(a)
	if (avx512x32[F](n) || avx512x64[F](n)) && len(cols) > 0 {
		var dp *F
		if d != nil {
			dp = &d[:n][0]
		}
		wp = wp[:len(cols)]
		sum = sum[:n]
		if avx512x32[F](n) {
			softRow32z(f32(a), f32(sum), f32(buf), 4*stride, 4*off, &cols[0], len(cols), f32(wp), float32(bs), float32(invZ), (*float32)(unsafe.Pointer(dp)), float32(ow))
		} else {
			softRow64z(f64(a), f64(sum), f64(buf), 8*stride, 8*off, &cols[0], len(cols), f64(wp), float64(bs), float64(invZ), (*float64)(unsafe.Pointer(dp)), float64(ow))
		}
		return
	}
	for l, x := range sum[:n] {
		a[l] = bs * x
	}
	gather(a, buf, stride, off, cols, wp, 0)
	scale(a, invZ)
	if d != nil {
		axpy(d[:n], a, ow)
	}
}

// sumRows sets sum[l] += buf[t·stride+off+l] for t = 0, 1, …, T−1, in
// that order.
func sumRows[F Float](sum, buf []F, stride, off, T int) {
	n := len(sum)
	if T > 0 && avx512x32[F](n) {
		_ = buf[(T-1)*stride+off+n-1]
		sumRows32z(f32(sum), f32(buf[off:]), 4*stride, T)
		return
	}
	if T > 0 && avx512x64[F](n) {
		_ = buf[(T-1)*stride+off+n-1]
		sumRows64z(f64(sum), f64(buf[off:]), 8*stride, T)
		return
	}
	for t := 0; t < T; t++ {
		row := buf[t*stride+off:][:n]
		for l, x := range row {
			sum[l] += x
		}
	}
}

// addVec sets d[i] += x[i].
func addVec[F Float](d, x []F) {
	x = x[:len(d)]
	var z F
	if useAVX512 && len(d) > 0 {
		if unsafe.Sizeof(z) == 4 && len(d)%16 == 0 {
			addVec32z(f32(d), f32(x), len(d))
			return
		}
		if unsafe.Sizeof(z) == 8 && len(d)%8 == 0 {
			addVec64z(f64(d), f64(x), len(d))
			return
		}
	}
	for k, v := range x {
		d[k] += v
	}
}

// ffnArgs is the frame of the ffn32z and ffn64z kernels: an FFN sublayer
// without a norm over a run of consecutive tokens, 32 lanes each (the
// field offsets are FA_* in kernels512_amd64.s; every field is 8 bytes but
// lo32, hi32). The kernel advances x, gsPtr, vsPtr and tokens as it
// finishes each token.
type ffnArgs struct {
	x        unsafe.Pointer // the stream of the next token (nd × 32 values)
	tokBytes int64          // bytes from one token's stream to the next
	tokens   int64          // tokens left
	nh       int64          // hidden units
	gPtr     unsafe.Pointer // gate rows: *int32 [nh+1]
	gIdx     unsafe.Pointer // *int32: dynamic index
	gW       unsafe.Pointer // *F
	vPtr     unsafe.Pointer // value rows, the same
	vIdx     unsafe.Pointer
	vW       unsafe.Pointer
	oPtr     unsafe.Pointer // output rows, per unit
	oIdx     unsafe.Pointer
	oW       unsafe.Pointer
	gsPtr    unsafe.Pointer // gate static part: *int32 at the next token's row, nil if none
	gsIdx    unsafe.Pointer // *int32: unit
	gsVal    unsafe.Pointer // *F
	vsPtr    unsafe.Pointer // value static part, the same
	vsIdx    unsafe.Pointer
	vsVal    unsafe.Pointer
	h        unsafe.Pointer // nh × 32: hidden values (for a unit left to the caller: its value projection)
	g        unsafe.Pointer // nh × 32: gates of the units left to the caller
	slow     unsafe.Pointer // *uint8 per unit: left to the caller
	lo, hi   float64        // SiLU is relu beyond (lo, hi)
	residual int64          // 0: the sublayer replaces the stream
	outOnly  int64          // the next token's hidden values are done: outputs only
	lo32     float32
	hi32     float32
	exps     int64 // ffn64z: SiLUs evaluated (inside (lo, hi)), added to
	// gOut, vOut, if not nil: nh × 32 each, every unit's gate and value
	// of the last token (probeFFN reads them).
	gOut, vOut unsafe.Pointer
}

// attnArgs is the frame of the attnRun32z and attnRun64z kernels (offsets
// AA_* in kernels512_amd64.s): a run of queries of a fused attention
// sublayer. The kernel advances xNew, xSrc, tok and tokens as it finishes
// each query.
type attnArgs struct {
	xOld     unsafe.Pointer // the input stream, token 0
	xNew     unsafe.Pointer // the output stream of the next query
	xSrc     unsafe.Pointer // the input stream of the next query
	tokBytes int64          // bytes of one token's stream
	tokens   int64          // queries left
	tok      int64          // the next query's index
	nh       int64          // heads
	heads    unsafe.Pointer // *attnHead [nh]
}

// attnHead is one head of a fused attention sublayer (offsets AH_*): its
// keys per query (ptr, cols; the selected ones for hard attention), the
// softmax terms (wp per key, bs and invZ per query, sum: Σ_all v over 32
// lanes; nil for hard), the byte offsets of its value and output
// dimensions within a token's stream, and its output weight.
type attnHead struct {
	ptr, cols, wp, bs, invZ, sum unsafe.Pointer
	vOff, oOff                   int64
	ow64                         float64
	ow32                         float32
	_                            float32
	soft                         int64
}
