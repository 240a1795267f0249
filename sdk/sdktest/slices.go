package sdktest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/keccak/keccakref"
	"github.com/tcforge/tcforge/sdk/layered"
)

// KeccakOffsets returns the slice offsets (source slice − reader slice,
// mod w, in 0…w−1, sorted) that a Keccak round can read across: 0, w−1
// (θ's column x+1 at z−1) and −r[x][y] mod w for every ρ offset r.
func KeccakOffsets(w int) []int {
	set := map[int]bool{0: true, mod(-1, w): true}
	for _, r := range keccakref.RhoOffsets() {
		set[mod(-r, w)] = true
	}
	out := make([]int, 0, len(set))
	for d := range set {
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}

func mod(a, w int) int { return ((a % w) + w) % w }

// CheckSlices checks the position hints of a logic circuit built on
// Keccak-p of lane size w (package sdk/keccak): every node is hinted with
// a slice 0…w−1; input j with inputSlice(j) and output j with
// outputSlice(j) (the slices of the state bits they are); and every operand of non-zero weight lies in a
// slice the node can read (KeccakOffsets). Weight-0 operands (the clock
// of a constant register) are not read and may lie anywhere.
func CheckSlices(t testing.TB, c *circuit.Circuit, w int, inputSlice, outputSlice func(j int) int) {
	t.Helper()
	if err := checkSlices(c, w, inputSlice, outputSlice); err != nil {
		t.Fatal(err)
	}
}

func checkSlices(c *circuit.Circuit, w int, inputSlice, outputSlice func(j int) int) error {
	if !c.HasPos() {
		return fmt.Errorf("circuit has no position hints")
	}
	allowed := make([]bool, w)
	for _, d := range KeccakOffsets(w) {
		allowed[d] = true
	}
	for i := range c.Ops {
		z := c.Pos[i]
		if z < 0 || int(z) >= w {
			return fmt.Errorf("node %d (%s, %q) hinted %d, want a slice 0…%d", i, c.Ops[i], c.Tags[c.Tag[i]], z, w-1)
		}
		args, ws := c.Operands(circuit.Node(i))
		for k, a := range args {
			if ws[k] == 0 && c.Ops[i] == circuit.OpThreshold {
				continue
			}
			if d := mod(int(c.Pos[a]-z), w); !allowed[d] {
				return fmt.Errorf("node %d (%s, %q) at slice %d reads node %d at slice %d (offset %d)", i, c.Ops[i], c.Tags[c.Tag[i]], z, a, c.Pos[a], d)
			}
		}
	}
	for j, n := range c.Inputs {
		if got, want := c.Pos[n], inputSlice(j); int(got) != want {
			return fmt.Errorf("input %d hinted %d, want %d", j, got, want)
		}
	}
	for j, n := range c.Outputs {
		if got, want := c.Pos[n], outputSlice(j); int(got) != want {
			return fmt.Errorf("output %d hinted %d, want %d", j, got, want)
		}
	}
	return nil
}

// LevelSlices describes one level of a layered circuit's position hints
// over w slices (see SliceLevels).
type LevelSlices struct {
	Level    int   // 1…depth
	PerSlice []int // gates of the level in each slice
	Forms    []int // forms of the level below (that the level reads) in each slice; nil without forms
	// Offsets are the slice offsets (source − reader, mod w, sorted)
	// its gates read across: to the forms they read (with forms) or the
	// values of the level below (without). FormOffsets are those of the
	// forms of the level below to the values they combine.
	Offsets, FormOffsets []int
}

// Even reports whether the level's gates split evenly over the slices.
func (ls LevelSlices) Even() bool { return same(ls.PerSlice) }

// FormsEven reports whether the forms the level reads split evenly over
// the slices.
func (ls LevelSlices) FormsEven() bool { return same(ls.Forms) }

// same reports whether every element of xs equals the first.
func same(xs []int) bool {
	return !slices.ContainsFunc(xs, func(n int) bool { return n != xs[0] })
}

// SliceLevels returns, level by level, how a layered circuit's gates and
// forms spread over w slices and which slice offsets their edges of
// non-zero weight span. It fails if a value, gate or form has no hint in
// 0…w−1.
func SliceLevels(c *layered.Circuit, w int) ([]LevelSlices, error) {
	if !c.HasPos() {
		return nil, fmt.Errorf("layered circuit has no position hints")
	}
	check := func(what string, i int, z int32) error {
		if z < 0 || int(z) >= w {
			return fmt.Errorf("%s %d hinted %d, want a slice 0…%d", what, i, z, w-1)
		}
		return nil
	}
	for i, z := range c.InputPos {
		if err := check("input", i, z); err != nil {
			return nil, err
		}
	}
	sorted := func(set map[int]bool) []int {
		out := make([]int, 0, len(set))
		for d := range set {
			out = append(out, d)
		}
		slices.Sort(out)
		return out
	}
	var out []LevelSlices
	for L := 1; L <= c.Depth(); L++ {
		ls := LevelSlices{Level: L, PerSlice: make([]int, w)}
		offs, formOffs := map[int]bool{}, map[int]bool{}
		if c.HasForms() {
			ls.Forms = make([]int, w)
			for f := range c.NumForms(L - 1) {
				z := c.FormPosAt(L-1, f)
				if err := check(fmt.Sprintf("level %d form", L-1), f, z); err != nil {
					return nil, err
				}
				ls.Forms[z]++
				_, src, coef := c.Form(int(c.FormStart[L-1]) + f)
				for k, s := range src {
					if coef[k] != 0 {
						formOffs[mod(int(c.PosAt(L-1, int(s))-z), w)] = true
					}
				}
			}
		}
		for i := range c.LevelWidth(L) {
			g := int(c.LevelStart[L-1]) + i
			z := c.Pos[g]
			if err := check(fmt.Sprintf("level %d gate", L), i, z); err != nil {
				return nil, err
			}
			ls.PerSlice[z]++
			src, wt := c.Row(g)
			for k, s := range src {
				if wt[k] != 0 {
					offs[mod(int(c.FormPosAt(L-1, int(s))-z), w)] = true
				}
			}
		}
		ls.Offsets, ls.FormOffsets = sorted(offs), sorted(formOffs)
		out = append(out, ls)
	}
	return out, nil
}
