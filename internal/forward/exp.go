package forward

import "math"

// expVec sets d[i] = math.Exp(x[i]), bit for bit: eight lanes at a time by
// the AVX-512 kernel where it applies (the same operations as math.Exp on
// amd64, which needs FMA: every CPU with AVX-512 has it), math.Exp for the
// rest and for arguments outside [−708, 709].
func expVec(d, x []float64) {
	x = x[:len(d)]
	n := 0
	if useAVX512 {
		n = len(d) &^ 7
		if n > 0 && exp64z(&d[0], &x[0], n) {
			for i, v := range x[:n] {
				if !(v >= -708 && v <= 709) {
					d[i] = math.Exp(v)
				}
			}
		}
	}
	for i := n; i < len(d); i++ {
		d[i] = math.Exp(x[i])
	}
}
