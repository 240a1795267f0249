package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"

	"github.com/tcforge/tcforge/host/config"
	"github.com/tcforge/tcforge/host/report"
)

// shardEstimate is what --estimate-from derives for each task.
type shardEstimate struct {
	minutes int
	memMiB  int64
	why     string
}

// estimateShards estimates each task's time and memory from an earlier
// run of the same pipelines into dir: the times of every point's rows
// (build once, then each row's layering, verification and models), summed
// per shard by the hash that assigns points to shards, divided by the
// task's CPUs (its --jobs); the longest shard's, doubled, plus 5 minutes.
// Memory: the earlier run's host peak, doubled for the host and its
// plugins, plus 512 MiB, at least 1 GiB.
func estimateShards(dir string, files []string, n, cpus int) (shardEstimate, error) {
	parsed, _, diags := config.ParseFiles(files...)
	if diags.HasErrors() {
		return shardEstimate{}, diags
	}
	man, err := report.ReadManifest(dir)
	if err != nil {
		return shardEstimate{}, err
	}
	if man == nil {
		return shardEstimate{}, fmt.Errorf("--estimate-from %s: no %s: not a tcforge run's --out", dir, report.ManifestFile)
	}
	secs := make([]float64, n)
	known, unknown := 0, 0
	for _, f := range parsed {
		for _, p := range f.Pipelines {
			b, err := os.ReadFile(filepath.Join(dir, p.Name+".json"))
			if errors.Is(err, fs.ErrNotExist) {
				unknown += len(p.Points())
				continue
			}
			if err != nil {
				return shardEstimate{}, err
			}
			var rep report.JSONReport
			if err := json.Unmarshal(b, &rep); err != nil {
				return shardEstimate{}, fmt.Errorf("%s: %w", filepath.Join(dir, p.Name+".json"), err)
			}
			// A point's rows by its values, as JSON (sorted keys).
			perPoint := map[string][]report.JSONRow{}
			for _, r := range rep.Rows {
				k, _ := json.Marshal(r.Point)
				perPoint[string(k)] = append(perPoint[string(k)], r)
			}
			for _, pt := range p.Points() {
				vals := map[string]any{}
				for k, v := range pt.Values {
					vals[k] = report.MatrixValue(v)
				}
				k, _ := json.Marshal(vals)
				rows := perPoint[string(k)]
				if len(rows) == 0 {
					unknown++
					continue
				}
				known++
				build := 0.0
				s := 0.0
				for _, r := range rows {
					build = max(build, r.BuildSec)
					s += r.LayerSec + r.VerifySec
					for _, m := range r.Models {
						s += m.MapSec + m.VerifySec + m.SearchSec
					}
				}
				secs[shardOf(p.Name, pt, n)] += build + s
			}
		}
	}
	if known == 0 {
		return shardEstimate{}, fmt.Errorf("--estimate-from %s: none of the points of %v is in it", dir, files)
	}
	longest := 0.0
	for _, s := range secs {
		longest = max(longest, s)
	}
	minutes := int(math.Ceil(2*longest/float64(cpus)/60)) + 5
	mem := max(2*(man.HostPeakRSS>>20)+512, 1024)
	why := fmt.Sprintf("the longest shard %.0f s of points on one CPU, ×2 / %d CPUs + 5 min; host peak %d MiB ×2 + 512", longest, cpus, man.HostPeakRSS>>20)
	if unknown > 0 {
		why += fmt.Sprintf("; %d points not in it, not counted", unknown)
	}
	return shardEstimate{minutes: minutes, memMiB: mem, why: why}, nil
}
