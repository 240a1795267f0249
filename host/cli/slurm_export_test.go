package cli

import "github.com/tcforge/tcforge/host/config"

// ShardsOf returns, for each pipeline of the file at path, the shard (of
// n) of each of its points, in point order: which task of a sweep runs
// a point (slurm_test.go holds chosen points in chosen tasks).
func ShardsOf(path string, n int) (map[string][]int, error) {
	files, _, diags := config.ParseFiles(path)
	if diags.HasErrors() {
		return nil, diags
	}
	out := map[string][]int{}
	for _, f := range files {
		for _, p := range f.Pipelines {
			for _, pt := range p.Points() {
				out[p.Name] = append(out[p.Name], shardOf(p.Name, pt, n))
			}
		}
	}
	return out, nil
}
