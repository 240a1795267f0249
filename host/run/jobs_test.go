package run_test

import (
	"context"
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
