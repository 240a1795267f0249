package run

import (
	"errors"
	"strings"
	"testing"

	"github.com/tcforge/tcforge/host/config"
)

const selectSrc = `
pipeline "p" {
  matrix {
    log_w  = [1, 2]
    rounds = [1, 2]
  }
  matrix {
    log_w  = [3]
    preset = ["sha3-256"]
    scale  = [0.5]
  }
  construction "keccak" {}
  layerer "reifier" {}
  layerer "fusion" {}
}

pipeline "single" {
  construction "keccak" {}
  layerer "reifier" {}
}
`

func TestSelectPoint(t *testing.T) {
	f, diags := config.Parse("select.hcl", []byte(selectSrc))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	p, single := f.Pipelines[0], f.Pipelines[1]
	tests := []struct {
		p       *config.Pipeline
		want    map[string]string
		point   string // as Point.String
		errPart string
	}{
		{p, map[string]string{"log_w": "2", "rounds": "1"}, "log_w=2 rounds=1", ""},
		{p, map[string]string{"log_w": "3"}, "log_w=3 preset=sha3-256 scale=0.5", ""},
		{p, map[string]string{"preset": `"sha3-256"`}, "log_w=3 preset=sha3-256 scale=0.5", ""},
		{p, map[string]string{"scale": "0.5"}, "log_w=3 preset=sha3-256 scale=0.5", ""},
		{single, nil, "", ""},
		{p, map[string]string{"log_w": "1"}, "", "2 points of pipeline \"p\" match log_w=1; choose one with more variables: log_w=1 rounds=1; log_w=1 rounds=2"},
		{p, map[string]string{"log_w": "4"}, "", `pipeline "p" has no point log_w=4`},
		{p, map[string]string{"blocks": "1"}, "", `pipeline "p" has no matrix variable "blocks" (it has log_w, rounds, preset, scale)`},
		{p, nil, "", "4+1 points"},
	}
	for _, tt := range tests {
		pt, err := SelectPoint(tt.p, tt.want)
		if tt.errPart != "" {
			if tt.errPart == "4+1 points" {
				if err == nil || !strings.Contains(err.Error(), "5 points of pipeline") {
					t.Errorf("SelectPoint(%v) = %v, want 5 matching points", tt.want, err)
				}
				continue
			}
			if err == nil || !strings.Contains(err.Error(), tt.errPart) || !errors.Is(err, ErrNoPoint) {
				t.Errorf("SelectPoint(%v) error %v, want %q", tt.want, err, tt.errPart)
			}
			continue
		}
		if err != nil {
			t.Errorf("SelectPoint(%v): %v", tt.want, err)
			continue
		}
		if got := pt.String(); got != tt.point {
			t.Errorf("SelectPoint(%v) = %q, want %q", tt.want, got, tt.point)
		}
	}
}

func TestLayererIndexes(t *testing.T) {
	f, diags := config.Parse("select.hcl", []byte(selectSrc))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	p := f.Pipelines[0]
	if idx, err := layererIndexes(p, nil); err != nil || len(idx) != 2 {
		t.Errorf("all layerers: %v, %v", idx, err)
	}
	if idx, err := layererIndexes(p, []string{"fusion"}); err != nil || len(idx) != 1 || idx[0] != 1 {
		t.Errorf("fusion: %v, %v", idx, err)
	}
	if _, err := layererIndexes(p, []string{"nope"}); err == nil || !strings.Contains(err.Error(), `has no layerer "nope" (it has reifier, fusion)`) {
		t.Errorf("unknown layerer: %v", err)
	}
}
