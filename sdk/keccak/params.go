package keccak

import "github.com/tcforge/tcforge/sdk"

// LogWParam is the log_w parameter of a construction built on Keccak-p
// (default 6, w = 64); of names the permutation in its doc, e.g.
// "the compression's Keccak-p".
func LogWParam(of string) sdk.Param {
	return sdk.Param{Name: "log_w", Type: sdk.Int, Default: MaxLogW, Min: sdk.Bound(0), Max: sdk.Bound(MaxLogW),
		Doc: "lane size exponent of " + of + ": w = 2^log_w, state b = 25w bits"}
}

// RoundsParam is the rounds parameter of a construction built on Keccak-p;
// PermFromParams reads it.
func RoundsParam() sdk.Param {
	return sdk.Param{Name: "rounds", Type: sdk.Int, Min: sdk.Bound(1),
		Doc: "rounds of Keccak-p (default 12 + 2·log_w); the last n of the standard round constants are used"}
}

// PermFromParams returns the validated permutation of lane size exponent
// logW and p's "rounds" (default DefaultRounds(logW)); an error names the
// parameter at fault.
func PermFromParams(p sdk.Params, logW int) (Perm, error) {
	perm := Perm{LogW: logW, Rounds: DefaultRounds(logW)}
	if p.Has("rounds") {
		perm.Rounds = p.Int("rounds")
	}
	if err := perm.Validate(); err != nil {
		at := "rounds"
		if logW < 0 || logW > MaxLogW {
			at = "log_w"
		}
		return perm, p.Errorf(at, "%v", err)
	}
	return perm, nil
}

// Compression is the shape of the Keccak-p compression a Merkle–Damgård
// chain (md) or a Merkle tree (merkle) calls: the block it loads, the
// value it outputs (the chain value, a node's hash), and the optional rate
// they enter.
type Compression struct {
	BlockBits int // block_bits
	OutBits   int // the output parameter: chain_bits, digest_bits; default BlockBits
	Rate      int // rate; 0: not given
}

// CompressionWhy words the refusals of CompressionFromParams for one
// construction: why each bound holds there.
type CompressionWhy struct {
	Block      string // why block_bits ≥ 1 ("the chain absorbs the message in blocks of block_bits bits")
	BlockState string // why block_bits ≤ 25w ("each block is xored into the state")
	Out        string // why the output ≥ 1
	OutState   string // why the output ≤ 25w
	Rate       string // why both fit the rate ("blocks and hashes enter the rate part of the state")
}

// CompressionFromParams resolves and checks block_bits, the output
// parameter named out and rate against perm's state of 25w bits: the one
// copy of the checks md and merkle share. Its errors blame the parameter
// (sdk.ParamError), worded by why.
func CompressionFromParams(p sdk.Params, perm Perm, out string, why CompressionWhy) (Compression, error) {
	b, w := perm.B(), perm.W()
	c := Compression{BlockBits: p.Int("block_bits")}
	if c.BlockBits < 1 {
		return c, p.Errorf("block_bits", "must be at least 1: %s, got %d", why.Block, c.BlockBits)
	}
	if c.BlockBits > b {
		return c, p.Errorf("block_bits", "%d is larger than the Keccak-p state of 25w = %d bits (w = %d): %s", c.BlockBits, b, w, why.BlockState)
	}
	c.OutBits = c.BlockBits
	if p.Has(out) {
		c.OutBits = p.Int(out)
	}
	if c.OutBits < 1 {
		return c, p.Errorf(out, "must be at least 1: %s, got %d", why.Out, c.OutBits)
	}
	if c.OutBits > b {
		return c, p.Errorf(out, "%d is larger than the Keccak-p state of 25w = %d bits (w = %d): %s", c.OutBits, b, w, why.OutState)
	}
	if p.Has("rate") {
		c.Rate = p.Int("rate")
		if c.Rate < 1 || c.Rate >= b {
			return c, p.Errorf("rate", "must be between 1 and 25w − 1 = %d (w = %d), got %d", b-1, w, c.Rate)
		}
		if max(c.BlockBits, c.OutBits) > c.Rate {
			return c, p.Errorf("rate", "%d is smaller than block_bits %d or %s %d: %s", c.Rate, c.BlockBits, out, c.OutBits, why.Rate)
		}
	}
	return c, nil
}
