package config

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckPointLimit: the points of a run are counted without making
// them, and a run over the limit is refused, located at the largest
// matrix block.
func TestCheckPointLimit(t *testing.T) {
	src := `pipeline "small" {
  matrix {
    a = [1, 2]
  }
  construction "keccak" {}
  layerer "reifier" {}
}
pipeline "huge" {
  matrix {
    a = [1, 2]
  }
  matrix {
    a = range(1000)
    b = range(1000)
    c = range(1000)
  }
  construction "keccak" {}
  layerer "reifier" {}
}
`
	f, diags := Parse("sweep.hcl", []byte(src))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	small, huge := f.Pipelines[0], f.Pipelines[1]
	if n := huge.NumPoints(); n != 2+1000*1000*1000 {
		t.Fatalf("NumPoints = %d", n)
	}
	tests := []struct {
		name      string
		pipelines []*Pipeline
		limit     int64
		want      []string // in the diagnostic; nil: accepted
	}{
		{"under", []*Pipeline{small}, 2, nil},
		{"no limit", []*Pipeline{small, huge}, 0, nil},
		{"over", []*Pipeline{small}, 1, []string{"sweep.hcl:2,3", "2 matrix points", "limit of 1 points per run"}},
		{"huge", []*Pipeline{small, huge}, 100000, []string{"sweep.hcl:12,3", "1000000004 matrix points", `"huge" 1000000002`, `pipeline "huge" alone`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := CheckPointLimit(tt.pipelines, tt.limit)
			if tt.want == nil {
				if d.HasErrors() {
					t.Fatalf("refused: %v", d)
				}
				return
			}
			if len(d) != 1 || !d.HasErrors() {
				t.Fatalf("diagnostics %v, want one error", d)
			}
			got := d[0].Subject.String() + " " + d[0].Detail
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("%q lacks %q", got, w)
				}
			}
		})
	}
	// Saturation: 1000^7 overflows int64.
	big := `pipeline "p" {
  matrix {
    a = range(1000)
    b = range(1000)
    c = range(1000)
    d = range(1000)
    e = range(1000)
    f = range(1000)
    g = range(1000)
  }
  construction "keccak" {}
  layerer "reifier" {}
}`
	f, diags = Parse("big.hcl", []byte(big))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if d := CheckPointLimit(f.Pipelines, 100000); !d.HasErrors() || !strings.Contains(d[0].Detail, "9223372036854775807 matrix points") {
		t.Errorf("overflowing sweep: %v", d)
	}
}

// TestNoPipelines: an empty or comment-only file is an error naming it.
func TestNoPipelines(t *testing.T) {
	dir := t.TempDir()
	for name, src := range map[string]string{"empty.hcl": "", "comments.hcl": "# nothing\n// here\n/* at all */\n"} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		_, _, diags := ParseFiles(path)
		if !diags.HasErrors() || diags[0].Summary != "No pipelines in "+path {
			t.Errorf("%s: %v", name, diags)
		}
	}
}

// TestWriteDiagnosticsBinary: a binary file gives at most MaxDiagnostics
// diagnostics and a count of the rest, with its control bytes escaped.
func TestWriteDiagnosticsBinary(t *testing.T) {
	src := make([]byte, 4096)
	x := uint32(7)
	for i := range src {
		x = x*1664525 + 1013904223
		src[i] = byte(x >> 24)
	}
	path := filepath.Join(t.TempDir(), "random.bin")
	if err := os.WriteFile(path, src, 0o644); err != nil {
		t.Fatal(err)
	}
	_, files, diags := ParseFiles(path)
	if len(diags) <= MaxDiagnostics {
		t.Fatalf("only %d diagnostics: the test needs more than %d", len(diags), MaxDiagnostics)
	}
	var buf bytes.Buffer
	if err := WriteDiagnostics(&buf, files, diags, false); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if n := strings.Count(out, "\nError: ") + strings.Count(out[:7], "Error: "); n != MaxDiagnostics {
		t.Errorf("%d diagnostics printed, want %d", n, MaxDiagnostics)
	}
	if !strings.Contains(out, "more errors (not shown; the first 10 are above).") {
		t.Errorf("no count of the rest:\n%s", out[max(0, len(out)-300):])
	}
	for i, r := range out {
		if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || r == '\uFFFD' {
			t.Fatalf("unescaped control character %U at byte %d: %q", r, i, out[max(0, i-20):min(len(out), i+20)])
		}
	}
}

func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"plain ü\ttext": "plain ü\ttext",
		"\x1b[31mred":   `\x1b[31mred`,
		"a\x00b\x7f":    `a\x00b\x7f`,
		"bad \xff\xfe":  `bad \xff\xfe`,
		"c1 \u0085":     `c1 \u0085`,
	} {
		if got := printable(in); got != want {
			t.Errorf("printable(%q) = %q, want %q", in, got, want)
		}
	}
}
