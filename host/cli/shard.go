package cli

import (
	"crypto/sha256"
	"encoding/gob"
	"errors"
	"fmt"
	"hash/fnv"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zclconf/go-cty/cty"

	"github.com/tcforge/tcforge/host/config"
	"github.com/tcforge/tcforge/host/run"
	"github.com/tcforge/tcforge/internal/safefile"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
)

// ShardFile is the file `tcforge run --shard I/N --out DIR` writes into DIR
// besides the usual reports: the shard's rows, for `tcforge merge`.
const ShardFile = "tcforge-shard.gob"

// shardSpec is --shard I/N: this run runs the points whose shard is I.
type shardSpec struct{ I, N int }

// parseShard reads "I/N" with 0 ≤ I < N.
func parseShard(s string) (*shardSpec, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil {
		return nil, fmt.Errorf("--shard %q: want I/N, e.g. 0/3", s)
	}
	if n < 1 || i < 0 || i >= n {
		return nil, fmt.Errorf("--shard %q: want 0 ≤ I < N", s)
	}
	return &shardSpec{I: i, N: n}, nil
}

// shardOf returns the shard (of n) a point belongs to: a hash of the
// pipeline's name and the point's variables, sorted by name, so it does
// not depend on the order of files, pipelines, matrix blocks or variables.
func shardOf(pipeline string, pt config.Point, n int) int {
	h := fnv.New64a()
	h.Write([]byte(pipeline))
	names := make([]string, 0, len(pt.Values))
	for k := range pt.Values {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		one := config.Point{Values: map[string]cty.Value{k: pt.Values[k]}}
		fmt.Fprintf(h, "\x00%s", one.String())
	}
	return int(h.Sum64() % uint64(n))
}

// keep reports whether the run runs point pt of pipeline p.
func (s *shardSpec) keep(p *config.Pipeline, pt config.Point) bool {
	return shardOf(p.Name, pt, s.N) == s.I
}

// shardManifest is what a shard writes for merge.
type shardManifest struct {
	Version   int
	Shard, Of int
	Seed      uint64
	Samples   int
	Files     []shardSource
	Pipelines []shardPipeline
	// Stopped says why the shard stopped before running all its points
	// (a signal: "terminated (SIGTERM)" at a scheduler's time limit or
	// cancel); empty when it ran them all. A stopped shard holds the
	// points that finished, its last pipeline marked incomplete, and none
	// of the pipelines after it: merge writes an incomplete report and
	// names it.
	Stopped string

	dir string // where readShard found it (not written)
}

// shardSource is one pipeline file as the shard read it.
type shardSource struct {
	Path   string
	Source []byte
}

type shardPipeline struct {
	Name         string
	ExpectNames  []string
	PredictNames []string
	Complete     bool
	Plugins      []run.PluginInfo
	Rows         []shardRow
}

// shardRow is run.Row with the point as its index and errors as text.
type shardRow struct {
	Point                            int
	Layerer                          string
	Stats                            layered.Stats
	Logic                            circuit.Stats
	Verified                         bool
	Expect, Actual, Predict          map[string]int64
	ExpectOK                         bool
	Err                              *string
	Models                           []shardModel
	BuildTime, LayerTime, VerifyTime time.Duration
}

type shardModel struct {
	run.ModelRow // Err cleared
	Err          *string
}

func errText(err error) *string {
	if err == nil {
		return nil
	}
	s := err.Error()
	return &s
}

func textErr(s *string) error {
	if s == nil {
		return nil
	}
	return errors.New(*s)
}

// shardRecord collects a shard's pipelines while it runs.
type shardRecord struct {
	spec *shardSpec
	m    shardManifest
}

func newShardRecord(spec *shardSpec, paths []string, seed uint64, samples int) (*shardRecord, error) {
	r := &shardRecord{spec: spec, m: shardManifest{Version: 1, Shard: spec.I, Of: spec.N, Seed: seed, Samples: samples}}
	seen := map[string]bool{}
	for _, p := range paths {
		if seen[p] {
			continue
		}
		seen[p] = true
		src, err := safefile.ReadFile(p, config.MaxFileBytes)
		if err != nil {
			return nil, err
		}
		r.m.Files = append(r.m.Files, shardSource{Path: p, Source: src})
	}
	return r, nil
}

func (r *shardRecord) add(res *run.Result) {
	sp := shardPipeline{Name: res.Pipeline.Name, ExpectNames: res.ExpectNames, PredictNames: res.PredictNames, Complete: res.Complete, Plugins: res.Plugins}
	for _, row := range res.Rows {
		sr := shardRow{Point: row.Point.Index, Layerer: row.Layerer, Stats: row.Stats, Logic: row.Logic, Verified: row.Verified,
			Expect: row.Expect, Actual: row.Actual, Predict: row.Predict, ExpectOK: row.ExpectOK, Err: errText(row.Err),
			BuildTime: row.BuildTime, LayerTime: row.LayerTime, VerifyTime: row.VerifyTime}
		for _, m := range row.Models {
			e := errText(m.Err)
			m.Err = nil
			sr.Models = append(sr.Models, shardModel{ModelRow: m, Err: e})
		}
		sp.Rows = append(sp.Rows, sr)
	}
	r.m.Pipelines = append(r.m.Pipelines, sp)
}

// stop records the pipeline res that a stop cut short (its finished
// points) and why the shard stopped, for write: the shard is then marked
// incomplete, so that merge names it instead of taking it for missing.
func (r *shardRecord) stop(res *run.Result, why string) {
	if res != nil {
		r.add(res)
	}
	r.m.Stopped = why
}

// write writes DIR/tcforge-shard.gob.
func (r *shardRecord) write(dir string) (string, error) {
	d, err := safefile.OpenDir(dir, true)
	if err != nil {
		return "", err
	}
	defer d.Close()
	f, err := d.Create(ShardFile)
	if err != nil {
		return "", err
	}
	defer f.Abort()
	if err := gob.NewEncoder(f).Encode(&r.m); err != nil {
		return "", fmt.Errorf("writing %s: %w", f.Name(), err)
	}
	return f.Name(), f.Commit()
}

// readShard reads DIR/tcforge-shard.gob.
func readShard(dir string) (*shardManifest, error) {
	path := filepath.Join(dir, ShardFile)
	f, _, err := safefile.Open(path, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m := shardManifest{dir: dir}
	if err := gob.NewDecoder(f).Decode(&m); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if m.Version != 1 {
		return nil, fmt.Errorf("%s: version %d, this tcforge reads 1", path, m.Version)
	}
	return &m, nil
}

// sourcesDigest identifies a shard's pipeline files.
func (m *shardManifest) sourcesDigest() [32]byte {
	h := sha256.New()
	for _, f := range m.Files {
		fmt.Fprintf(h, "%s\x00%d\x00", f.Path, len(f.Source))
		h.Write(f.Source)
	}
	var d [32]byte
	copy(d[:], h.Sum(nil))
	return d
}
