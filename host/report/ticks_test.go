package report

import (
	"fmt"
	"testing"

	"gonum.org/v1/plot"
)

func TestIntegerTicks(t *testing.T) {
	tests := []struct {
		min, max float64
		want     string // labelled ticks
	}{
		{0.04, 24.96, "5 10 15 20"},
		{7, 60, "10 20 30 40 50 60"},
		{500, 1300, "600 800 1000 1200"},
		{0.9, 2.1, "1 2"},
		{0, 100000, "0 20000 40000 60000 80000 100000"},
		{3, 3, ""},
	}
	for _, tt := range tests {
		var got string
		for _, tk := range (integerTicks{}).Ticks(tt.min, tt.max) {
			if tk.Label != "" {
				got += fmt.Sprint(" ", tk.Label)
			}
			if tk.Value != float64(int64(tk.Value)) {
				t.Errorf("[%v, %v]: fractional tick %v", tt.min, tt.max, tk.Value)
			}
		}
		if len(got) > 0 {
			got = got[1:]
		}
		if got != tt.want {
			t.Errorf("[%v, %v]: ticks %q, want %q", tt.min, tt.max, got, tt.want)
		}
	}
	// Few distinct matrix values: a tick at each.
	ts := dataTicks([]float64{4, 1, 2, 2}).(plot.ConstantTicks)
	if fmt.Sprint(ts) != "[{1 1} {2 2} {4 4}]" {
		t.Errorf("data ticks %v", ts)
	}
}
