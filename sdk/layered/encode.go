package layered

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"unsafe"

	"github.com/tcforge/tcforge/internal/binenc"
	"github.com/tcforge/tcforge/sdk/circuit"
)

const (
	magic   = "TCLT"
	version = 5 // 2: narrow packed arrays, fan-ins instead of RowStart; 3: repeated rows sent once; 4: linear forms; 5: position hints
	// oldestVersion is the oldest encoding UnmarshalBinary still reads
	// (version 4 is version 5 without the hints).
	oldestVersion = 4
)

// repeatRow flags, in the encoded kind byte, a gate whose row (sources
// and weights) equals the previous gate's: the n counters [S ≥ k] of an
// n-ary XOR share one row, so most of a Keccak circuit's edges are sent
// once instead of n times.
const repeatRow = 0x80

// MarshalBinary encodes the circuit in tcforge's compact binary form.
//
// Rows are written straight from the circuit's arrays into the blob, run
// by run (a run is consecutive gates none of which repeats its
// predecessor's row, so its edges are contiguous on both sides). A large
// circuit is encoded in two halves (of its gates) on two goroutines: each
// half finds its repeated rows and value ranges, then, once the packed
// widths and so every offset are known, writes its share of each array.
func (c *Circuit) MarshalBinary() ([]byte, error) {
	n := len(c.Kind)
	if err := c.checkRows(); err != nil {
		return nil, fmt.Errorf("encoding layered circuit: %w", err)
	}
	if len(c.Threshold) != n || len(c.Tag) != n {
		return nil, fmt.Errorf("encoding layered circuit: %d gates but %d thresholds and %d tags", n, len(c.Threshold), len(c.Tag))
	}
	kinds := make([]byte, n)
	parts := []encPart{{a: 0, b: n}}
	if len(c.Src) >= parallelEdges {
		parts = []encPart{{a: 0, b: n / 2}, {a: n / 2, b: n}}
	}
	both := func(f func(p *encPart)) {
		var wg sync.WaitGroup
		for i := 1; i < len(parts); i++ {
			wg.Go(func() { f(&parts[i]) })
		}
		f(&parts[0])
		wg.Wait()
	}
	both(func(p *encPart) { c.scan(p, kinds) })

	var all encPart
	for _, p := range parts {
		all.merge(&p)
	}
	tSize, gSize := binenc.Width(all.t.lo, all.t.hi), binenc.Width(all.g.lo, all.g.hi)
	fSize, sSize, wSize := binenc.Width(all.f.lo, all.f.hi), binenc.Width(all.s.lo, all.s.hi), binenc.Width(all.w.lo, all.w.hi)
	w := binenc.NewWriter(magic, version, 64+4*len(c.LevelStart)+(1+tSize+gSize)*n+fSize*all.rows+(sSize+wSize)*all.edges+sizeOfStrings(c.Tags))
	w.I64(int64(c.NumInputs))
	w.I32s(c.LevelStart)
	w.U8s(kinds)
	tb := w.PackedI32s(n, tSize)
	gb := w.PackedI32s(n, gSize)
	fb := w.PackedI32s(all.rows, fSize)
	sb := w.PackedI32s(all.edges, sSize)
	wb := w.PackedI32s(all.edges, wSize)
	// Each part's share of each array starts where the parts before it end.
	var off encPart
	for i := range parts {
		p := &parts[i]
		p.tb, p.gb = tb[tSize*p.a:tSize*p.b], gb[gSize*p.a:gSize*p.b]
		p.fb = fb[fSize*off.rows : fSize*(off.rows+p.rows)]
		p.sb = sb[sSize*off.edges : sSize*(off.edges+p.edges)]
		p.wb = wb[wSize*off.edges : wSize*(off.edges+p.edges)]
		off.rows += p.rows
		off.edges += p.edges
	}
	both(func(p *encPart) { c.write(p, kinds, tSize, gSize, fSize, sSize, wSize) })
	w.Strings(c.Tags)
	circuit.WriteRanges(w, c.InputRanges)
	circuit.WriteRanges(w, c.OutputRanges)
	// Forms: FormStart (empty: none), then the constants, the rows'
	// lengths, sources and coefficients.
	w.I32s(c.FormStart)
	if c.FormStart != nil {
		fan := make([]int32, len(c.FormConst))
		for f := range fan {
			fan[f] = c.FormRowStart[f+1] - c.FormRowStart[f]
		}
		w.I32s(c.FormConst)
		w.I32s(fan)
		w.I32s(c.FormSrc)
		w.I32s(c.FormCoef)
	}
	// Position hints: a flag (0: none), then the inputs', the gates' and
	// (with forms) the forms'.
	if c.Pos == nil {
		w.U32(0)
	} else {
		w.U32(1)
		w.I32s(c.InputPos)
		w.I32s(c.Pos)
		if c.FormStart != nil {
			w.I32s(c.FormPos)
		}
	}
	return w.Bytes(), nil
}

// span is a range of values.
type span struct{ lo, hi int32 }

// add widens s to hold [lo, hi].
func (s *span) add(lo, hi int32) { s.lo, s.hi = min(s.lo, lo), max(s.hi, hi) }

// encPart is the share of gates [a, b) in encoding a circuit: what scan
// finds (rows and edges sent, value ranges) and where write puts them.
type encPart struct {
	a, b        int
	rows, edges int
	t, g        span // thresholds, tags
	f, s, w     span // fan-ins, sources and weights of the rows sent

	tb, gb, fb, sb, wb []byte
}

// merge adds q's counts and ranges to p's.
func (p *encPart) merge(q *encPart) {
	p.rows += q.rows
	p.edges += q.edges
	p.t.add(q.t.lo, q.t.hi)
	p.g.add(q.g.lo, q.g.hi)
	p.f.add(q.f.lo, q.f.hi)
	p.s.add(q.s.lo, q.s.hi)
	p.w.add(q.w.lo, q.w.hi)
}

// scan sets the kinds (with repeatRow flags) of p's gates and finds the
// rows and edges they send and the ranges of their values.
func (c *Circuit) scan(p *encPart, kinds []byte) {
	p.t.add(binenc.MinMax(c.Threshold[p.a:p.b]))
	p.g.add(binenc.MinMax(c.Tag[p.a:p.b]))
	closeRun := func(a, b int) {
		if a == b {
			return
		}
		lo, hi := c.RowStart[a], c.RowStart[b]
		p.s.add(binenc.MinMax(c.Src[lo:hi]))
		p.w.add(binenc.MinMax(c.Weight[lo:hi]))
		p.edges += int(hi - lo)
	}
	run := p.a
	for g := p.a; g < p.b; g++ {
		kinds[g] = byte(c.Kind[g])
		if g > 0 && c.sameRow(g-1, g) {
			kinds[g] |= repeatRow
			closeRun(run, g)
			run = g + 1
			continue
		}
		f := c.RowStart[g+1] - c.RowStart[g]
		p.f.add(f, f)
		p.rows++
	}
	closeRun(run, p.b)
}

// write packs p's share of the thresholds, tags, fan-ins, sources and
// weights into p's slices of the blob.
func (c *Circuit) write(p *encPart, kinds []byte, tSize, gSize, fSize, sSize, wSize int) {
	binenc.PutI32s(p.tb, tSize, c.Threshold[p.a:p.b])
	binenc.PutI32s(p.gb, gSize, c.Tag[p.a:p.b])
	fb, sb, wb := p.fb, p.sb, p.wb
	for g := p.a; g < p.b; {
		if kinds[g]&repeatRow != 0 {
			g++
			continue
		}
		a := g
		for g < p.b && kinds[g]&repeatRow == 0 {
			f := c.RowStart[g+1] - c.RowStart[g]
			switch fSize {
			case 1:
				fb[0] = byte(f)
			case 2:
				fb[0], fb[1] = byte(f), byte(f>>8)
			default:
				fb[0], fb[1], fb[2], fb[3] = byte(f), byte(f>>8), byte(f>>16), byte(f>>24)
			}
			fb = fb[fSize:]
			g++
		}
		lo, hi := c.RowStart[a], c.RowStart[g]
		sb = binenc.PutI32s(sb, sSize, c.Src[lo:hi])
		wb = binenc.PutI32s(wb, wSize, c.Weight[lo:hi])
	}
}

// sizeOfStrings is the encoded size of a string array.
func sizeOfStrings(v []string) int {
	n := 4
	for _, s := range v {
		n += 4 + len(s)
	}
	return n
}

// checkRows checks what encoding relies on: RowStart spans Src and Weight
// monotonically, one row per gate.
func (c *Circuit) checkRows() error {
	n := len(c.Kind)
	if len(c.RowStart) != n+1 || c.RowStart[0] != 0 {
		return fmt.Errorf("layered: RowStart has %d entries for %d gates", len(c.RowStart), n)
	}
	if len(c.Src) != len(c.Weight) || int(c.RowStart[n]) != len(c.Src) {
		return fmt.Errorf("layered: edge offsets do not span the %d sources and %d weights", len(c.Src), len(c.Weight))
	}
	for g := range n {
		if c.RowStart[g+1] < c.RowStart[g] {
			return fmt.Errorf("layered: edge offsets decrease at gate %d", g)
		}
	}
	if c.FormStart == nil {
		return nil
	}
	f := len(c.FormConst)
	if len(c.FormRowStart) != f+1 || c.FormRowStart[0] != 0 || len(c.FormSrc) != len(c.FormCoef) || int(c.FormRowStart[f]) != len(c.FormSrc) {
		return fmt.Errorf("layered: form rows do not span the %d form sources and %d coefficients", len(c.FormSrc), len(c.FormCoef))
	}
	for i := range f {
		if c.FormRowStart[i+1] < c.FormRowStart[i] {
			return fmt.Errorf("layered: form entry offsets decrease at form %d", i)
		}
	}
	return nil
}

// sameRow reports whether gates a and b read the same sources with the
// same weights.
func (c *Circuit) sameRow(a, b int) bool {
	alo, ahi := c.RowStart[a], c.RowStart[a+1]
	blo, bhi := c.RowStart[b], c.RowStart[b+1]
	if ahi-alo != bhi-blo || ahi == alo {
		return false
	}
	return equal32(c.Src[alo:ahi], c.Src[blo:bhi]) && equal32(c.Weight[alo:ahi], c.Weight[blo:bhi])
}

// parallelEdges is the edge count from which decoding expands sources and
// weights on two goroutines.
const parallelEdges = 1 << 16

// equal32 reports whether a and b hold the same values. It compares their
// bytes (memequal is vectorised; an element loop costs several times as
// much, and encoding compares most of a circuit's edges).
func equal32(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 {
		return true
	}
	return string(unsafe.Slice((*byte)(unsafe.Pointer(&a[0])), 4*len(a))) ==
		string(unsafe.Slice((*byte)(unsafe.Pointer(&b[0])), 4*len(b)))
}

// UnmarshalBinary decodes a circuit written by MarshalBinary (this version
// or the previous, which has no position hints) or MarshalFlat (into a
// copy of data: see DecodeView), and validates it: a circuit it accepts
// passes Validate. A packed blob's checks are made while decoding, where
// they are cheapest: a source index is checked once as sent, not once
// per gate that repeats its row, and what the expansion builds
// (RowStart, the edge arrays' lengths) is right by construction.
func (c *Circuit) UnmarshalBinary(data []byte) error {
	if binenc.IsFlat(data, magic, flatVersion) {
		return c.unmarshalFlat(data)
	}
	r := binenc.NewReaderVersions(data, magic, oldestVersion, version)
	var d Circuit
	d.NumInputs = int(r.I64())
	d.LevelStart = r.I32s()
	kinds := r.U8sView()
	d.Threshold = r.I32s()
	d.Tag = r.I32s()
	fanIn := r.I32s()
	src := r.PackedI32s()
	weight := r.PackedI32s()
	d.Tags = r.Strings()
	d.InputRanges = circuit.ReadRanges(r)
	d.OutputRanges = circuit.ReadRanges(r)
	var formFan []int32
	if fs := r.I32s(); len(fs) > 0 {
		d.FormStart = fs
		d.FormConst = r.I32s()
		formFan = r.I32s()
		d.FormSrc = r.I32s()
		d.FormCoef = r.I32s()
	}
	if r.Version() >= 5 {
		switch hints := r.U32(); {
		case r.Err() != nil:
		case hints == 1:
			d.InputPos, d.Pos = nonNil(r.I32s()), nonNil(r.I32s())
			if d.FormStart != nil {
				d.FormPos = nonNil(r.I32s())
			}
		case hints != 0:
			return fmt.Errorf("decoding layered circuit: position hints flag %d, want 0 or 1", hints)
		}
	}
	if err := r.Done(); err != nil {
		return fmt.Errorf("decoding layered circuit: %w", err)
	}
	if d.FormStart != nil {
		if len(formFan) != len(d.FormConst) {
			return fmt.Errorf("decoding layered circuit: %d form lengths for %d forms", len(formFan), len(d.FormConst))
		}
		d.FormRowStart = make([]int32, len(formFan)+1)
		n := int64(0)
		for f, k := range formFan {
			if k < 0 {
				return fmt.Errorf("decoding layered circuit: form %d has negative length %d", f, k)
			}
			n += int64(k)
			if n > int64(len(d.FormSrc)) {
				return fmt.Errorf("decoding layered circuit: form lengths add up to more than the %d form sources", len(d.FormSrc))
			}
			d.FormRowStart[f+1] = int32(n)
		}
	}
	if err := d.expandRows(kinds, fanIn, src, weight); err != nil {
		return fmt.Errorf("decoding layered circuit: %w", err)
	}
	if d.FormStart != nil {
		if err := d.checkMass(); err != nil {
			return fmt.Errorf("decoding layered circuit: %w", err)
		}
	}
	if err := d.checkPos(); err != nil {
		return fmt.Errorf("decoding layered circuit: %w", err)
	}
	if err := d.checkRanges(); err != nil {
		return fmt.Errorf("decoding layered circuit: %w", err)
	}
	*c = d
	return nil
}

// nonNil returns v, or an empty slice for nil (a decoded array of no
// hints is there, unlike an absent one).
func nonNil(v []int32) []int32 {
	if v == nil {
		return []int32{}
	}
	return v
}

// expandRows rebuilds Kind, RowStart, Src and Weight from the encoded
// kinds (with repeatRow flags), the fan-ins of the rows sent and their
// sources and weights, and checks everything Validate checks but the
// ranges.
func (d *Circuit) expandRows(kinds []byte, fanIn []int32, src, weight binenc.Packed) error {
	g := len(kinds)
	if err := d.checkInputs(); err != nil {
		return err
	}
	if len(d.Threshold) != g || len(d.Tag) != g {
		return fmt.Errorf("layered: %d gates but %d thresholds and %d tags", g, len(d.Threshold), len(d.Tag))
	}
	if src.Len() != weight.Len() {
		return fmt.Errorf("%d sources but %d weights", src.Len(), weight.Len())
	}
	if err := d.checkLevels(g); err != nil {
		return err
	}
	if err := d.checkForms(); err != nil {
		return err
	}
	// Per gate: kind, tag, row length. sent[L] is the number of edges sent
	// for the gates before level L+1.
	d.Kind = make([]Kind, g)
	d.RowStart = make([]int32, g+1)
	sent := make([]int, len(d.LevelStart))
	limit := min(math.MaxInt32, 1<<25+1024*int64(src.Len()+g))
	edges, row, nsent := int64(0), 0, 0
	var prevLen int64
	tags := int32(len(d.Tags))
	for L := 1; L < len(d.LevelStart); L++ {
		for gi := d.LevelStart[L-1]; gi < d.LevelStart[L]; gi++ {
			k := kinds[gi]
			kind := Kind(k &^ repeatRow)
			if kind != KindGate && kind != KindCopy {
				return fmt.Errorf("layered: gate %d: unknown kind %d", gi, kind)
			}
			d.Kind[gi] = kind
			if t := d.Tag[gi]; t < 0 || t >= tags {
				return fmt.Errorf("layered: gate %d: tag %d out of range", gi, t)
			}
			if k&repeatRow != 0 {
				if gi == 0 {
					return errors.New("gate 0 repeats a row")
				}
			} else {
				if row >= len(fanIn) {
					return errors.New("more rows than fan-ins")
				}
				f := fanIn[row]
				if f < 0 {
					return fmt.Errorf("negative fan-in %d", f)
				}
				prevLen = int64(f)
				nsent += int(f)
				if nsent > src.Len() {
					return fmt.Errorf("fan-ins add up to more than the %d edges sent", src.Len())
				}
				row++
			}
			edges += prevLen
			// Repeated rows expand; bound the expansion so that a small
			// hostile blob cannot demand gigabytes.
			if edges > limit {
				return errors.New("repeated rows expand to too many edges")
			}
			d.RowStart[gi+1] = int32(edges)
		}
		sent[L] = nsent
	}
	if row != len(fanIn) {
		return fmt.Errorf("%d fan-ins for %d rows", len(fanIn), row)
	}
	if nsent != src.Len() {
		return fmt.Errorf("fan-ins add up to %d edges, %d sent", nsent, src.Len())
	}

	d.Src = make([]int32, edges)
	d.Weight = make([]int32, edges)
	var wg sync.WaitGroup
	if edges >= parallelEdges {
		wg.Go(func() { expand(d.Weight, weight, kinds, d.RowStart) })
	} else {
		expand(d.Weight, weight, kinds, d.RowStart)
	}
	defer wg.Wait()

	// Sources: unpacked into the tail of Src, checked there level by
	// level (each sent once), then expanded in place.
	tail := d.Src[len(d.Src)-src.Len():]
	src.Get(tail)
	for L := 1; L < len(d.LevelStart); L++ {
		prev := int32(d.NumForms(L - 1))
		for _, s := range tail[sent[L-1]:sent[L]] {
			if s < 0 || s >= prev {
				return fmt.Errorf("layered: level %d: source %d outside level %d (%s)", L, s, L-1, d.sourceCount(prev))
			}
		}
	}
	moveRows(d.Src, src.Len(), kinds, d.RowStart)
	// A level's first gate may repeat the last row of the level before,
	// whose sources were checked against another width.
	for L := 1; L < len(d.LevelStart); L++ {
		gi := d.LevelStart[L-1]
		if gi == d.LevelStart[L] || kinds[gi]&repeatRow == 0 {
			continue
		}
		prev := int32(d.NumForms(L - 1))
		for _, s := range d.Src[d.RowStart[gi]:d.RowStart[gi+1]] {
			if s < 0 || s >= prev {
				return fmt.Errorf("layered: level %d gate 0: source %d outside level %d (%s)", L, s, L-1, d.sourceCount(prev))
			}
		}
	}
	return nil
}

// expand fills dst, the edge array of a circuit whose rows are rowStart,
// from the packed values of the rows sent: they are unpacked into the
// tail of dst, then moved into place by moveRows.
func expand(dst []int32, sent binenc.Packed, kinds []byte, rowStart []int32) {
	sent.Get(dst[len(dst)-sent.Len():])
	moveRows(dst, sent.Len(), kinds, rowStart)
}

// moveRows expands in place the edge array dst, whose last nsent values
// are those of the rows sent: they move forward into place, a run of sent
// rows at a time, and each repeated row is copied from the row before.
// Writing never overtakes reading: the edges still to write are at least
// the sent ones still to read.
func moveRows(dst []int32, nsent int, kinds []byte, rowStart []int32) {
	next := len(dst) - nsent
	for g, n := 0, len(kinds); g < n; {
		if kinds[g]&repeatRow != 0 {
			lo, hi := rowStart[g], rowStart[g+1]
			copy(dst[lo:hi], dst[rowStart[g-1]:lo])
			g++
			continue
		}
		a := g
		for g < n && kinds[g]&repeatRow == 0 {
			g++
		}
		lo, hi := rowStart[a], rowStart[g]
		next += copy(dst[lo:hi], dst[next:next+int(hi-lo)])
	}
}
