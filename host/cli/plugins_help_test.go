package cli_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestPluginsHelp checks plugin help. Listing every plugin exits 1 here:
// the test builtins include plugins that fail to start on purpose.
func TestPluginsHelp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want []string
		not  []string
	}{
		{
			args: []string{"plugins"},
			want: []string{
				"keccak (construction 0.1.0, bundled)",
				"reifier (layerer 0.1.0, bundled)",
				"log_w         int     default 6, range 0..6",
				`first_block   string  default "xor", one of xor|load`,
			},
			not: []string{"usage in a pipeline"},
		},
		{
			args: []string{"plugins", "keccak"},
			want: []string{
				"keccak (construction 0.1.0, bundled)",
				"  protocol:  1\n", "  source:    bundled\n",
				"NAME          TYPE    DEFAULT / CONSTRAINTS",
				"    construction \"keccak\" {\n",
				"      # log_w        = 6\n",
				"      # first_block  = \"xor\"\n",
			},
			not: []string{"reifier"},
		},
		{
			args: []string{"plugins", "reifier"},
			want: []string{"reifier (layerer 0.1.0, bundled)", `mode        string  default "paper", one of paper|current`, "max_weight  int     default 4194304, range 2..134217728", "    layerer \"reifier\" {\n      # mode       = \"paper\"\n      # max_weight = 4194304\n    }\n"},
		},
		{
			args: []string{"plugins", "lies"},
			want: []string{"lies (layerer 0.0.1, bundled)", "  no parameters\n", "    layerer \"lies\" {\n    }\n"},
		},
	}
	for _, tt := range tests {
		r := tcforge(t, append([]string{"--log-level", "warn"}, tt.args...)...)
		if r.code != 0 && len(tt.args) > 1 {
			t.Fatalf("%v: exit %d\n%s", tt.args, r.code, r.stderr)
		}
		for _, w := range tt.want {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("%v: output lacks %q:\n%s", tt.args, w, r.stdout)
			}
		}
		for _, w := range tt.not {
			if strings.Contains(r.stdout, w) {
				t.Errorf("%v: output has %q", tt.args, w)
			}
		}
	}

	r := tcforge(t, "--log-level", "warn", "plugins", "--json")
	var got struct {
		FormatVersion string `json:"format_version"`
		Plugins       map[string]struct {
			Kind    string `json:"kind"`
			Version string `json:"version"`
			Source  string `json:"source"`
			Bundled bool   `json:"bundled"`
			Params  []struct {
				Name    string `json:"name"`
				Type    string `json:"type"`
				Default any    `json:"default"`
				Doc     string `json:"doc"`
			} `json:"params"`
		} `json:"plugins"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	k, re := got.Plugins["keccak"], got.Plugins["reifier"]
	if got.FormatVersion != "1" || k.Kind != "construction" || k.Source != "bundled" || !k.Bundled || re.Kind != "layerer" || re.Params == nil {
		t.Fatalf("schemas %+v", got)
	}
	found := false
	for _, p := range k.Params {
		if p.Name == "log_w" {
			found = p.Type == "int" && p.Default == 6.0 && strings.Contains(p.Doc, "lane size")
		}
	}
	if !found {
		t.Errorf("keccak's log_w param missing or wrong: %+v", k.Params)
	}
}
