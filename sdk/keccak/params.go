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
