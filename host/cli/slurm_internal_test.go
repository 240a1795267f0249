package cli

import (
	"slices"
	"strings"
	"testing"
)

func TestArraySpec(t *testing.T) {
	for _, tc := range []struct {
		tasks    []int
		throttle int
		want     string
	}{
		{[]int{0, 1, 2, 3, 4, 5, 6, 7}, 0, "0-7"},
		{[]int{0, 1, 2, 3, 4, 5, 6, 7}, 3, "0-7%3"},
		{[]int{2, 3}, 0, "2-3"},
		{[]int{1, 3, 4, 5, 9}, 2, "1,3-5,9%2"},
		{[]int{6}, 0, "6"},
	} {
		got := arraySpec(tc.tasks, tc.throttle)
		if got != tc.want {
			t.Errorf("arraySpec(%v, %d) = %q, want %q", tc.tasks, tc.throttle, got, tc.want)
		}
		back, err := parseArraySpec(got)
		if err != nil || !slices.Equal(back, tc.tasks) {
			t.Errorf("parseArraySpec(%q) = %v, %v; want %v", got, back, err, tc.tasks)
		}
	}
	if _, err := parseArraySpec("4-x"); err == nil {
		t.Error("parseArraySpec(4-x): no error")
	}
}

func TestShellWords(t *testing.T) {
	for _, tc := range []struct {
		line string
		want []string
		err  string
	}{
		{`--name a --instance "adder n=8"`, []string{"--name", "a", "--instance", "adder n=8"}, ""},
		{`--experiment 'scratch w×1, 10× steps'  --seed 0`, []string{"--experiment", "scratch w×1, 10× steps", "--seed", "0"}, ""},
		{`a\ b "c \"d\" \\ e" ''`, []string{"a b", `c "d" \ e`, ""}, ""},
		{`--name '$HOME; x'`, []string{"--name", "$HOME; x"}, ""},
		{`--out $HOME`, nil, `'$': a training run's line is arguments only (quote it to pass it)`},
		{`--name "$(id)"`, nil, `'$' inside double quotes: a training run's line is arguments only`},
		{`a; rm -rf x`, nil, `';': a training run's line is arguments only (quote it to pass it)`},
		{`--name 'a`, nil, "an unclosed ' quote"},
		{`--name "a`, nil, `an unclosed " quote`},
		{`a\`, nil, "a line ends in a backslash"},
	} {
		got, err := shellWords(tc.line)
		switch {
		case tc.err != "" && (err == nil || err.Error() != tc.err):
			t.Errorf("shellWords(%q): error %v, want %q", tc.line, err, tc.err)
		case tc.err == "" && (err != nil || !slices.Equal(got, tc.want)):
			t.Errorf("shellWords(%q) = %q, %v; want %q", tc.line, got, err, tc.want)
		}
		if tc.err == "" {
			// Quoted back, a shell reads the same words.
			var q []string
			for _, w := range got {
				q = append(q, shellQuote(w))
			}
			again, err := shellWords(strings.Join(q, " "))
			if err != nil || !slices.Equal(again, got) {
				t.Errorf("shellQuote round trip of %q: %q, %v", got, again, err)
			}
		}
	}
}

func TestDescribeState(t *testing.T) {
	for _, tc := range []struct{ state, exit, reason, want string }{
		{"COMPLETED", "0:0", "None", "COMPLETED"},
		{"FAILED", "143:0", "NonZeroExitCode", "FAILED (exit 143)"},
		{"TIMEOUT", "0:15", "TimeLimit", "TIMEOUT (signal 15)"},
		{"CANCELLED by 0", "0:0", "", "CANCELLED"},
		{"PENDING", "0:0", "Resources", "PENDING (Resources)"},
	} {
		if got := describeState(tc.state, tc.exit, tc.reason); got != tc.want {
			t.Errorf("describeState(%q, %q, %q) = %q, want %q", tc.state, tc.exit, tc.reason, got, tc.want)
		}
	}
}
