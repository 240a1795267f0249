//go:build amd64 && !purego

package forward

// exp64z sets d[i] = math.Exp(x[i]) for i < n (n a multiple of 8), with
// the bits math.Exp gives on amd64 with FMA (exp_amd64.s), for every x[i]
// in [−708, 709]; it returns true if some x[i] lies outside (or is NaN):
// those d[i] are to be recomputed (expVec does).
//
//go:noescape
func exp64z(d, x *float64, n int) bool
