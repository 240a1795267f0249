package cli_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tcforge/tcforge/host/builtin"
)

// TestRootHelp: tcforge --help lists the bundled plugins by kind, every
// one of them and no other (what stands in parentheses is their gloss).
func TestRootHelp(t *testing.T) {
	t.Parallel()
	r := tcforge(t, "--help")
	if r.code != 0 {
		t.Fatalf("--help: exit %d\n%s", r.code, r.stderr)
	}
	_, list, ok := strings.Cut(r.stdout, "\nBundled plugins")
	list, _, _ = strings.Cut(list, "\n\n")
	if !ok {
		t.Fatalf("--help has no \"Bundled plugins\" paragraph:\n%s", r.stdout)
	}
	gloss := regexp.MustCompile(`\([^)]*\)`)
	lines := map[string]string{} // kind ("construction") → its lines
	kind := ""
	for _, l := range strings.Split(list, "\n")[1:] {
		if f := strings.Fields(l); len(f) > 0 && !strings.HasPrefix(l, "   ") {
			kind, l = strings.TrimSuffix(f[0], "s"), strings.TrimPrefix(strings.TrimSpace(l), f[0])
		}
		lines[kind] += " " + l
	}
	listed := map[string][]string{} // kind → the names its lines list
	for k, l := range lines {
		listed[k] = strings.Fields(strings.ReplaceAll(gloss.ReplaceAllString(l, ""), ",", " "))
	}
	want := map[string][]string{}
	for name, p := range builtin.Plugins() {
		k := string(p.Describe().Kind)
		want[k] = append(want[k], name)
	}
	for k, names := range want {
		slices.Sort(names)
		got := slices.Sorted(slices.Values(listed[k]))
		if !slices.Equal(got, names) {
			t.Errorf("--help lists %ss %v, bundled: %v", k, got, names)
		}
	}
	for k := range listed {
		if _, ok := want[k]; !ok {
			t.Errorf("--help lists %ss, a kind no bundled plugin has", k)
		}
	}
}
