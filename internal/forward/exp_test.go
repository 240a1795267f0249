package forward

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestExpVec checks expVec against math.Exp bit for bit: random arguments
// over the whole range where exp is neither 0 nor +Inf (and beyond),
// arguments near the reduction's rounding points (x·log₂e near k + ½),
// the range's ends, subnormal results, and the special values.
func TestExpVec(t *testing.T) {
	rng := rand.New(rand.NewPCG(37, 1))
	var xs []float64
	for range 1 << 18 {
		xs = append(xs, (rng.Float64()*2-1)*760)
	}
	for range 1 << 16 {
		xs = append(xs, (rng.Float64()*2-1)*20, rng.NormFloat64()*1e-3)
	}
	for k := -1100; k <= 1100; k++ {
		c := (float64(k) + 0.5) * math.Ln2
		xs = append(xs, c, math.Nextafter(c, 0), math.Nextafter(c, math.Inf(1)), math.Nextafter(c, math.Inf(-1)))
	}
	xs = append(xs, 0, math.Copysign(0, -1), -708, 709, math.Nextafter(-708, 0), math.Nextafter(709, 1000),
		-745.2, -745.1, -740, 709.78, 709.79, 710, -1e300, 1e300, math.Inf(1), math.Inf(-1), math.NaN(),
		math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64, math.MaxFloat64)
	got := make([]float64, len(xs))
	expVec(got, xs)
	bad := 0
	for i, x := range xs {
		want := math.Exp(x)
		if math.Float64bits(got[i]) != math.Float64bits(want) && !(math.IsNaN(got[i]) && math.IsNaN(want)) {
			if bad++; bad <= 10 {
				t.Errorf("exp(%v) = %v (%#x), math.Exp gives %v (%#x)", x, got[i], math.Float64bits(got[i]), want, math.Float64bits(want))
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d arguments differ", bad, len(xs))
	}
	if !useAVX512 {
		t.Log("no AVX-512: math.Exp throughout")
	}
}
