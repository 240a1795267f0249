package cli_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestPluginGroup: the shipped plugins a run uses share one process
// (their "plugin launched" debug lines give one process ID and name each
// other), a fixture outside the group runs in its own, and
// --isolate-plugins gives every plugin its own process.
func TestPluginGroup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := writeFile(t, dir, "p.hcl", `pipeline "shared" {
  construction "keccak" {
    log_w  = 0
    rate   = 12
    rounds = 1
  }
  layerer "reifier" {}
  layerer "fusion" {}
}
pipeline "alone" {
  construction "counting" {
    log_w  = 0
    rate   = 12
    rounds = 1
  }
  layerer "reifier" {}
}
`)
	tests := []struct {
		name  string
		flags []string
		// want is the plugins by process: the groups of plugins that
		// share one, each sorted, the groups sorted.
		want [][]string
	}{
		{"default", nil, [][]string{{"counting"}, {"fusion", "keccak", "reifier"}}},
		{"isolated", []string{"--isolate-plugins"}, [][]string{{"counting"}, {"fusion"}, {"keccak"}, {"reifier"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"run", "--log-level", "debug", "--log-format", "json", "--progress", "never", "--samples", "8"}, tt.flags...)
			r := tcforge(t, append(args, cfg)...)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			byPID := map[float64][]string{}
			mates := map[string][]string{}
			for _, line := range strings.Split(r.stderr, "\n") {
				var e struct {
					Message string   `json:"message"`
					Plugin  string   `json:"plugin"`
					PID     float64  `json:"pid"`
					Shared  []string `json:"shared_with"`
				}
				if json.Unmarshal([]byte(line), &e) != nil || e.Message != "plugin launched" {
					continue
				}
				if e.PID <= 0 {
					t.Errorf("plugin %s launched without a process ID: %s", e.Plugin, line)
				}
				byPID[e.PID] = append(byPID[e.PID], e.Plugin)
				mates[e.Plugin] = e.Shared
			}
			var got [][]string
			for _, names := range byPID {
				got = append(got, slices.Sorted(slices.Values(names)))
			}
			slices.SortFunc(got, func(a, b []string) int { return strings.Compare(a[0], b[0]) })
			t.Logf("plugins by process: %q", got)
			if !slices.EqualFunc(got, tt.want, slices.Equal) {
				t.Fatalf("plugins by process %q, want %q", got, tt.want)
			}
			for _, g := range got {
				for _, n := range g {
					want := slices.DeleteFunc(slices.Clone(g), func(m string) bool { return m == n })
					if !slices.Equal(mates[n], want) && !(len(want) == 0 && mates[n] == nil) {
						t.Errorf("%s shared_with %q, want %q", n, mates[n], want)
					}
				}
			}
		})
	}
}
