package run_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/tcforge/tcforge/host/builtin"
	"github.com/tcforge/tcforge/host/config"
	"github.com/tcforge/tcforge/host/registry"
	"github.com/tcforge/tcforge/host/run"
)

// TestPipelineJobs checks a pipeline's jobs attribute: with --jobs 2 the
// points of a pipeline run two at a time, of one that sets jobs = 1 one
// at a time. Each point's start holds for 50 ms so that points that may
// overlap do.
func TestPipelineJobs(t *testing.T) {
	reg := registry.New(registry.Options{Builtins: builtin.Plugins(), InProcess: true, Log: zerolog.Nop()})
	defer reg.Close()
	for _, tt := range []struct {
		attr string
		want int
	}{{"", 2}, {"jobs = 1", 1}, {"jobs = 3", 2}} {
		src := "pipeline \"p\" {\n" + tt.attr + "\nmatrix {\nrounds = [1, 2, 3, 4]\n}\nconstruction \"keccak\" {\nlog_w = 0\nrate = 12\nrounds = matrix.rounds\n}\nlayerer \"reifier\" {}\n}\n"
		f, diags := config.Parse("jobs.hcl", []byte(src))
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		var mu sync.Mutex
		running, most := 0, 0
		r := &run.Runner{Registry: reg, Log: zerolog.Nop(), Jobs: 2, Samples: 8, Progress: func(_ *config.Pipeline, _ config.Point, done bool) {
			mu.Lock()
			if done {
				running--
			} else {
				running++
				most = max(most, running)
			}
			mu.Unlock()
			if !done {
				time.Sleep(50 * time.Millisecond)
			}
		}}
		res, err := r.Run(context.Background(), f.Pipelines[0])
		if err != nil || !res.OK() || len(res.Rows) != 4 {
			t.Fatalf("%q: %v, %d rows", tt.attr, err, len(res.Rows))
		}
		if most != tt.want {
			t.Errorf("%q with --jobs 2: %d points at once, want %d", tt.attr, most, tt.want)
		}
	}
}

// TestLargestFirst: the points of a pipeline run largest first by the
// construction's estimate (made by the check's size test, --max-edges),
// in point order where there is none; the rows keep point order.
func TestLargestFirst(t *testing.T) {
	reg := registry.New(registry.Options{Builtins: builtin.Plugins(), InProcess: true, Log: zerolog.Nop()})
	defer reg.Close()
	const src = "pipeline \"p\" {\nmatrix {\nrounds = [1, 3, 2, 4]\n}\nconstruction \"keccak\" {\nlog_w = 0\nrate = 12\nrounds = matrix.rounds\n}\nlayerer \"reifier\" {}\n}\n"
	for _, tt := range []struct {
		maxEdges int64
		want     string
	}{{1 << 30, "rounds=4 rounds=3 rounds=2 rounds=1"}, {0, "rounds=1 rounds=3 rounds=2 rounds=4"}} {
		f, diags := config.Parse("order.hcl", []byte(src))
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		var started []string
		r := &run.Runner{Registry: reg, Log: zerolog.Nop(), Jobs: 1, Samples: 8, MaxEdges: tt.maxEdges,
			Progress: func(_ *config.Pipeline, pt config.Point, done bool) {
				if !done {
					started = append(started, pt.String())
				}
			}}
		if d := r.Check(context.Background(), f.Pipelines[0]); d.HasErrors() {
			t.Fatal(d)
		}
		res, err := r.Run(context.Background(), f.Pipelines[0])
		if err != nil || !res.OK() || len(res.Rows) != 4 {
			t.Fatalf("--max-edges %d: %v, %d rows", tt.maxEdges, err, len(res.Rows))
		}
		if got := strings.Join(started, " "); got != tt.want {
			t.Errorf("--max-edges %d: points started in the order %s, want %s", tt.maxEdges, got, tt.want)
		}
		var rows []string
		for _, row := range res.Rows {
			rows = append(rows, row.Point.String())
		}
		if got := strings.Join(rows, " "); got != "rounds=1 rounds=3 rounds=2 rounds=4" {
			t.Errorf("--max-edges %d: rows in the order %s, want point order", tt.maxEdges, got)
		}
	}
}
