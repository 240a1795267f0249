package run_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rs/zerolog"

	"github.com/tcforge/tcforge/host/builtin"
	"github.com/tcforge/tcforge/host/config"
	"github.com/tcforge/tcforge/host/registry"
	"github.com/tcforge/tcforge/host/run"
	"github.com/tcforge/tcforge/sdk"
)

// TestCheckConcurrentKeepsOrder: Check prepares a pipeline's distinct
// parameter sets on several goroutines, yet gives the diagnostics of a
// check of one point after another: in point order, a refused set of
// values once (at its first point), whatever --jobs; and each distinct
// set is prepared once.
func TestCheckConcurrentKeepsOrder(t *testing.T) {
	// Odd x refused (1 - x leaves: 0, -2, …), each x twice (y does not reach the
	// construction): 8 distinct sets over 16 points, 4 of them refused.
	const src = `pipeline "p" {
  matrix {
    x = [1, 2, 3, 4, 5, 6, 7, 8]
    y = [1, 2]
  }
  construction "merkle" {
    log_w = 1
    rounds = 1
    block_bits = 4
    leaves = matrix.x % 2 == 0 ? matrix.x : 1 - matrix.x
  }
  layerer "reifier" {}
}
`
	want := []string{"x=1", "x=3", "x=5", "x=7"}
	for _, jobs := range []int{1, 2, 8} {
		t.Run(fmt.Sprintf("jobs=%d", jobs), func(t *testing.T) {
			var prepares atomic.Int64
			merkle := *builtin.Plugins()["merkle"].(*sdk.Construction)
			prepare := merkle.Prepare
			merkle.Prepare = func(ctx context.Context, p *sdk.Pass) (any, error) {
				prepares.Add(1)
				return prepare(ctx, p)
			}
			plugins := builtin.Plugins()
			plugins["merkle"] = &merkle
			reg := registry.New(registry.Options{Builtins: plugins, InProcess: true, Log: zerolog.Nop()})
			defer reg.Close()
			f, diags := config.Parse("p.hcl", []byte(src))
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			r := &run.Runner{Registry: reg, Log: zerolog.Nop(), Jobs: jobs, MaxEdges: 1 << 30}
			diags = r.Check(context.Background(), f.Pipelines[0])
			var got []string
			for _, d := range diags {
				if !strings.Contains(d.Detail, `"leaves"`) {
					t.Errorf("unexpected diagnostic %s: %s", d.Summary, d.Detail)
					continue
				}
				_, at, _ := strings.Cut(d.Detail, "at matrix point ")
				at, _, _ = strings.Cut(at, " ")
				got = append(got, at)
			}
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("refusals at %v, want %v (in point order, once each)", got, want)
			}
			if n := prepares.Load(); n != 8 {
				t.Errorf("%d prepares of the construction for 8 distinct sets of values, want 8", n)
			}
		})
	}
}
