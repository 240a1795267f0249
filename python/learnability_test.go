package python_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestLearnabilityTable checks that the table of docs/learnability.md and
// its plots (docs/learnability/*.svg) are what
// scripts/learnability_table.py computes from the committed runs
// (docs/learnability/runs/*.csv and *.json, written by `python3 -m
// tcforge_torch train`), and that the adder control's row from scratch
// says every seed reached 100 % exact outputs on the held-out inputs. The
// script needs only Python's standard library.
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
}
