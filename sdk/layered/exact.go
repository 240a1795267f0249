package layered

// MaxPreActivation bounds the magnitude of every integer a forward pass
// computes for a gate of c: the bias −θ and any partial sum of its
// weighted inputs, i.e. max over gates of max(Σ_{w>0} w, Σ_{w<0} |w|) + |θ|.
// A float format represents every integer up to 2^p exactly (p its
// significand bits), so a model whose gates are c's keeps every
// pre-activation exact in the formats with 2^p ≥ this bound (see
// FloatFormat).
func (c *Circuit) MaxPreActivation() int64 {
	var most int64
	for g := range c.Kind {
		var pos, neg int64
		for _, w := range c.Weight[c.RowStart[g]:c.RowStart[g+1]] {
			if w > 0 {
				pos += int64(w)
			} else {
				neg -= int64(w)
			}
		}
		t := int64(c.Threshold[g])
		if t < 0 {
			t = -t
		}
		most = max(most, max(pos, neg)+t)
	}
	return most
}

// FloatFormat returns the narrowest of bf16, fp16, fp32 and fp64 that
// represents every integer of magnitude up to n exactly (2^8, 2^11, 2^24,
// 2^53), or "none".
func FloatFormat(n int64) string {
	switch {
	case n <= 1<<8:
		return "bf16"
	case n <= 1<<11:
		return "fp16"
	case n <= 1<<24:
		return "fp32"
	case n <= 1<<53:
		return "fp64"
	}
	return "none"
}
