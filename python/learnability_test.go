package python_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestLearnabilityTable checks that the tables of docs/learnability.md and
// its plots (docs/learnability/*.svg) are what
// scripts/learnability_table.py computes from the committed runs
// (docs/learnability/runs/ and trace/, *.csv and *.json, written by
// `python3 -m tcforge_torch train`), that the adder control's row from
// scratch says every seed reached 100 % exact outputs on the held-out
// inputs, and that the supervision table says what docs/learnability.md
// reads from it (which cells meet ≥ 99 % on ≥ 4 of 5 seeds). The script
// needs only Python's standard library.
func TestLearnabilityTable(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat(python); err != nil {
		t.Skipf("table check skipped: no %s: %v", python, err)
	}
	out, err := exec.Command(python, "../scripts/learnability_table.py", "--check").CombinedOutput()
	if err != nil {
		t.Fatalf("scripts/learnability_table.py --check: %v\n%s", err, out)
	}
	doc, err := os.ReadFile("../docs/learnability.md")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, line := range strings.Split(string(doc), "\n") {
		if !strings.HasPrefix(line, "| adder n=8 |") || !strings.Contains(line, "| scratch w×1 |") {
			continue
		}
		found = true
		cells := strings.Split(line, "|")
		// | instance | shape | experiment | data | steps | bits | varying | exact 0 | exact | seeds at 100 % | CPU s | seeds |
		if len(cells) != 14 || strings.TrimSpace(cells[9]) != "1.0000" || strings.TrimSpace(cells[10]) != "3/3" || strings.TrimSpace(cells[12]) != "3" {
			t.Errorf("adder control row %q: want exact 1.0000 and 3/3 seeds at 100 %%", line)
		}
	}
	if !found {
		t.Error("docs/learnability.md has no adder n=8 scratch w×1 row")
	}

	// The supervision table (issue 36): what the committed runs say is
	// and is not learned, ≥ 99 % held-out exact on ≥ 4 of 5 seeds (✓).
	seeds := map[[2]string]string{}
	for _, line := range strings.Split(string(doc), "\n") {
		cells := strings.Split(line, "|")
		// | instance | student | supervision | supervised | steps | exact | seeds ≥ 99 % | bits | working | CPU s |
		if len(cells) == 12 && strings.Contains(cells[5], "(") {
			seeds[[2]string{strings.TrimSpace(cells[1]), strings.TrimSpace(cells[3])}] = strings.TrimSpace(cells[7])
		}
	}
	for _, want := range []struct{ instance, supervision, seeds string }{
		{"SHA-256 r=1", "trace every level", "4/4 ✓"},
		{"SHA-256 r=1", "no trace", "0/2"},
		{"Keccak w=1 r=1", "no trace", "0/2"},
		{"Keccak w=1 r=1", "trace every level", "0/2"},
		{"adder n=8", "no trace", "4/4 ✓"},
	} {
		if got := seeds[[2]string{want.instance, want.supervision}]; got != want.seeds {
			t.Errorf("supervision table: %s, %s: seeds ≥ 99 %% %q, want %q", want.instance, want.supervision, got, want.seeds)
		}
	}
}
