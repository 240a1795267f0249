package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"

	"github.com/tcforge/tcforge/host/config"
	"github.com/tcforge/tcforge/host/run"
	"github.com/tcforge/tcforge/sdk/layered"
)

// frontierSrc is configs/frontier.hcl's shape: no numeric variable, two
// layerers whose options are matrix variables.
const frontierSrc = `
pipeline "front" {
  matrix {
    reifier   = ["paper"]
    objective = ["size"]
  }
  matrix {
    reifier   = ["current"]
    objective = ["depth"]
  }
  construction "keccak" {}
  layerer "reifier" { mode = matrix.reifier }
  layerer "fusion" { objective = matrix.objective }
}
`

func TestFrontierChart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "front.hcl")
	if err := os.WriteFile(path, []byte(frontierSrc), 0o644); err != nil {
		t.Fatal(err)
	}
	files, _, diags := config.ParseFiles(path)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	p := files[0].Pipelines[0]
	res := &run.Result{Pipeline: p, Vars: p.Vars()}
	depth := map[string]int{"reifier paper": 148, "fusion size": 96, "reifier current": 121, "fusion depth": 49}
	for _, pt := range p.Points() {
		for _, l := range []string{"reifier", "fusion"} {
			v := "reifier"
			if l == "fusion" {
				v = "objective"
			}
			d := depth[l+" "+Value(pt.Values[v])]
			res.Rows = append(res.Rows, run.Row{Point: pt, Layerer: l, Verified: true, ExpectOK: true,
				Stats: layered.Stats{Depth: d, Width: 17600, Gates: 1000 * d, Nonzeros: 20000 * d}})
		}
	}
	charts := Charts(res)
	if len(charts) != 1 || !charts[0].Frontier || charts[0].Name() != "front.frontier" {
		t.Fatalf("charts %+v, want one frontier chart", charts)
	}
	ch := charts[0]
	if len(ch.Series) != 3 || ch.Series[0].Layerer != "width" || ch.Series[2].Layerer != "nonzeros" {
		t.Fatalf("series %+v, want width, gates, nonzeros", ch.Series)
	}
	var got []string
	for _, pt := range ch.Series[1].Points {
		got = append(got, pt.Label)
		if want := int64(depth[strings.NewReplacer("mode=", "", "objective=", "").Replace(pt.Label)]); pt.Actual != want || pt.X != float64(1000*want) {
			t.Errorf("%s: (%v, %d), want (%d, %d)", pt.Label, pt.X, pt.Actual, 1000*want, want)
		}
	}
	if want := "reifier mode=paper,fusion objective=size,reifier mode=current,fusion objective=depth"; strings.Join(got, ",") != want {
		t.Errorf("labels %q, want %q", strings.Join(got, ","), want)
	}
	svg, err := ch.SVG()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"reifier mode=paper", "fusion objective=depth", "nonzeros", "depth vs width, gates, nonzeros"} {
		if !strings.Contains(string(svg), s) {
			t.Errorf("SVG lacks %q", s)
		}
	}
}

// TestLabelBelow checks which frontier labels go below their points: the
// shallower of two points whose depths would put their labels on one line.
func TestLabelBelow(t *testing.T) {
	for _, tt := range []struct {
		depths []float64
		want   string
	}{
		{[]float64{25, 26, 49, 96, 121, 148}, "x-----"},
		{[]float64{25, 49, 96, 121, 148}, "-----"},
		{[]float64{5, 6, 7}, "xx-"},
		{nil, ""},
	} {
		xys := make(plotter.XYs, len(tt.depths))
		for k, d := range tt.depths {
			xys[k].Y = d
		}
		var got strings.Builder
		for _, b := range labelBelow(xys, 171.0/30) {
			if b {
				got.WriteByte('x')
			} else {
				got.WriteByte('-')
			}
		}
		if got.String() != tt.want {
			t.Errorf("%v: %q, want %q", tt.depths, got.String(), tt.want)
		}
	}
}
