package decoder

import (
	"math"
	"math/bits"

	"github.com/tcforge/tcforge/sdk/model"
)

// Constants of the construction (see the package doc).
const (
	// C is the least value of the ±C dimensions that pin LayerNorm's scale.
	C = 8192.0
	// Gap is the least score gap between the attended token and any other.
	Gap = 48.0
	// Steep is the slope of a step's ramp.
	Steep = 4.0
	// Eps is the layer-norm epsilon (PyTorch's default).
	Eps = 1e-5
	// codeBase is the period of the finest position code; three (cos, sin)
	// pairs of periods codeBase, codeBase², codeBase³ tell positions apart
	// up to codeBase³.
	codeBase  = 32
	codePairs = 3
	codeDims  = 2 * codePairs
	// MaxPositions is the longest sequence the position code tells apart.
	MaxPositions = codeBase * codeBase * codeBase
)

// code returns the position code of p: (cos, sin)(2πp/Tᶠ) for the three
// periods.
func code(p int) [codeDims]float64 {
	var c [codeDims]float64
	T := float64(codeBase)
	for f := range codePairs {
		a := 2 * math.Pi * float64(p) / T
		c[2*f], c[2*f+1] = math.Cos(a), math.Sin(a)
		T *= codeBase
	}
	return c
}

// tensor is a tensor under construction.
type tensor struct {
	b    *model.Builder
	name string
}

func newTensor(name string, rows, cols int) *tensor {
	return &tensor{b: model.NewBuilder(name, rows, cols), name: name}
}

func (t *tensor) add(r, c int, v float64) {
	if v != 0 {
		t.b.Add(r, c, v)
	}
}

// net is the model under construction: the residual layout and tensors.
type net struct {
	d, heads, hd int
	layers       int
	// Fixed dimensions.
	dimSink, dimPlus, dimMinus int
	dimKey, dimKind, dimTok    int
	dimQuery, dimFetch, dimOut int
	dimWork                    int
	kindBits                   int
	cv, sigma0, A              float64
	tensors                    []*tensor
}

// kinds groups the generated tokens by their cones' shape.
type kinds struct {
	of    []int32 // per generated token: its kind (1-based)
	rep   []*cone // per kind (index 0 unused): a representative cone
	cones []*cone // per generated token
	count []int   // tokens of each kind
}

func groupKinds(cones []*cone) *kinds {
	k := &kinds{of: make([]int32, len(cones)), rep: []*cone{nil}, cones: cones, count: []int{0}}
	seen := map[string]int32{}
	for t, c := range cones {
		sh := c.shape()
		id, ok := seen[sh]
		if !ok {
			id = int32(len(k.rep))
			seen[sh] = id
			k.rep = append(k.rep, c)
			k.count = append(k.count, 0)
		}
		k.of[t] = id
		k.count[id]++
	}
	return k
}

// layout chooses the residual dimensions and heads.
func newNet(ks *kinds, layers int) (*net, error) {
	H, work := 1, 0
	for _, c := range ks.rep[1:] {
		H = max(H, len(c.tokens))
		work = max(work, len(c.nodes))
	}
	n := &net{heads: H, layers: max(1, layers), kindBits: bits.Len(uint(len(ks.rep) - 1))}
	n.dimSink, n.dimPlus, n.dimMinus = 0, 1, 2
	n.dimKey = 3
	n.dimKind = n.dimKey + codeDims
	n.dimTok = n.dimKind + n.kindBits
	n.dimQuery = n.dimTok + 8
	n.dimFetch = n.dimQuery + codeDims*H
	n.dimOut = n.dimFetch + 8*H
	n.dimWork = n.dimOut + 8
	d := n.dimWork + work
	hd := max(8, codeDims, (d+H-1)/H)
	n.d, n.hd = hd*H, hd
	return n, nil
}
