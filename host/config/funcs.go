package config

import (
	"errors"
	"math"
	"math/big"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// maxExactPowBits bounds the size of results pow computes exactly.
const maxExactPowBits = 4096

// Functions returns the functions available in every pipeline expression
// (a new map on each call):
//
//	numbers:  abs, ceil, floor, log(x, base), log2, max, min, pow, signum, parseint
//	lists:    concat, contains, distinct, element, flatten, length, range, reverse, slice
//	strings:  format, formatlist, join, lower, upper, strlen, substr
//	general:  coalesce
//
// pow is exact for whole bases and non-negative whole exponents, and log2 is
// exact for powers of two.
func Functions() map[string]function.Function {
	return map[string]function.Function{
		"abs":        stdlib.AbsoluteFunc,
		"ceil":       stdlib.CeilFunc,
		"floor":      stdlib.FloorFunc,
		"log":        stdlib.LogFunc,
		"log2":       log2Func(),
		"max":        stdlib.MaxFunc,
		"min":        stdlib.MinFunc,
		"pow":        powFunc(),
		"signum":     stdlib.SignumFunc,
		"parseint":   stdlib.ParseIntFunc,
		"concat":     stdlib.ConcatFunc,
		"contains":   stdlib.ContainsFunc,
		"distinct":   stdlib.DistinctFunc,
		"element":    stdlib.ElementFunc,
		"flatten":    stdlib.FlattenFunc,
		"length":     stdlib.LengthFunc,
		"range":      stdlib.RangeFunc,
		budgetFunc:   elementBudget(),
		"reverse":    stdlib.ReverseListFunc,
		"slice":      stdlib.SliceFunc,
		"format":     stdlib.FormatFunc,
		"formatlist": stdlib.FormatListFunc,
		"join":       stdlib.JoinFunc,
		"lower":      stdlib.LowerFunc,
		"upper":      stdlib.UpperFunc,
		"strlen":     stdlib.StrlenFunc,
		"substr":     stdlib.SubstrFunc,
		"coalesce":   stdlib.CoalesceFunc,
	}
}

func powFunc() function.Function {
	return function.New(&function.Spec{
		Description: "Returns num raised to power; exact for whole bases and non-negative whole powers.",
		Params: []function.Parameter{
			{Name: "num", Type: cty.Number},
			{Name: "power", Type: cty.Number},
		},
		Type: function.StaticReturnType(cty.Number),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			base, power := args[0].AsBigFloat(), args[1].AsBigFloat()
			if base.IsInt() && power.IsInt() && power.Sign() >= 0 {
				b, _ := base.Int(nil)
				if e, acc := power.Int64(); acc == big.Exact && (b.BitLen() <= 1 || int64(b.BitLen())*e <= maxExactPowBits) {
					r := new(big.Int).Exp(b, big.NewInt(e), nil)
					return cty.NumberVal(new(big.Float).SetInt(r)), nil
				}
			}
			x, _ := base.Float64()
			y, _ := power.Float64()
			return finite(math.Pow(x, y))
		},
	})
}

func log2Func() function.Function {
	return function.New(&function.Spec{
		Description: "Returns the base-2 logarithm of num; exact for powers of two.",
		Params:      []function.Parameter{{Name: "num", Type: cty.Number}},
		Type:        function.StaticReturnType(cty.Number),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			x := args[0].AsBigFloat()
			if x.Sign() <= 0 {
				return cty.NilVal, errors.New("log2 needs a positive number")
			}
			if x.IsInf() {
				return cty.NumberVal(x), nil
			}
			var mant big.Float
			exp := x.MantExp(&mant) // x = mant × 2^exp, 0.5 <= mant < 1
			if mant.Cmp(big.NewFloat(0.5)) == 0 {
				return cty.NumberIntVal(int64(exp - 1)), nil
			}
			// log2(x) = exp + log2(mant), which keeps huge x in range.
			m, _ := mant.Float64()
			return finite(float64(exp) + math.Log2(m))
		},
	})
}

func finite(f float64) (cty.Value, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return cty.NilVal, errors.New("the result is not a finite number")
	}
	return cty.NumberFloatVal(f), nil
}
