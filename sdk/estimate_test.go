package sdk_test

import (
	"math"
	"testing"

	"github.com/tcforge/tcforge/sdk"
)

func TestCount(t *testing.T) {
	tests := []struct {
		name  string
		terms [][]int64
		want  int64
		ok    bool
	}{
		{"empty", nil, 0, true},
		{"sum of products", [][]int64{{2, 3}, {4}, {}}, 11, true},
		{"the largest", [][]int64{{math.MaxInt64}}, math.MaxInt64, true},
		{"a product past int64", [][]int64{{1 << 32, 1 << 31}}, 0, false},
		{"a product past uint64", [][]int64{{1 << 40, 1 << 40}}, 0, false},
		{"keccak's wrap (rounds 720575940379280)", [][]int64{{1, 720575940379280, 12800}}, 0, false},
		{"a sum past int64", [][]int64{{math.MaxInt64}, {1}}, 0, false},
		{"stays overflowed", [][]int64{{math.MaxInt64, 2}, {0}}, 0, false},
		{"a negative factor", [][]int64{{-1, 0}}, 0, false},
		{"a zero factor", [][]int64{{math.MaxInt64, math.MaxInt64, 0}}, 0, true},
		{"a zero and a negative factor", [][]int64{{0, -2}}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c sdk.Count
			for _, f := range tt.terms {
				c.Add(f...)
			}
			got, ok := c.Value()
			if ok != tt.ok || (ok && got != tt.want) {
				t.Errorf("got %d, %v; want %d, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestCheckedSize(t *testing.T) {
	var n, e sdk.Count
	n.Add(3)
	e.Add(math.MaxInt64, 3)
	_, err := sdk.CheckedSize(n, e, "rounds")
	if pe, ok := sdk.AsParamError(err); !ok || pe.Param != "rounds" {
		t.Fatalf("got %v, want a *ParamError on rounds", err)
	}
	e = sdk.Count{}
	e.Add(5)
	if s, err := sdk.CheckedSize(n, e, "rounds"); err != nil || s != (sdk.Size{Nodes: 3, Edges: 5}) {
		t.Errorf("got %v, %v", s, err)
	}
}
