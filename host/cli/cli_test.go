package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-plugin"

	"github.com/tcforge/tcforge/host/builtin"
	"github.com/tcforge/tcforge/host/cli"
	"github.com/tcforge/tcforge/internal/wire"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// childEnv marks a process started by these tests to serve a plugin: the
// test binary re-executes itself ("TESTBIN plugin serve NAME"), exactly as
// the tcforge binary does, so bundled plugins cross a real process and RPC
// boundary in these tests.
const childEnv = "TCFORGE_CLI_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		if len(os.Args) == 4 && os.Args[1] == "plugin" && os.Args[3] == "oldproto" {
			plugin.Serve(wire.ServeConfig(describer{allBuiltins()["oldproto"].Describe()}, sdk.ProtocolVersion+99))
			os.Exit(0)
		}
		if len(os.Args) == 4 && os.Args[1] == "plugin" && os.Args[3] == "neverstarts" {
			time.Sleep(10 * time.Minute) // no handshake: the host kills it
			os.Exit(0)
		}
		if len(os.Args) == 4 && os.Args[1] == "plugin" && os.Args[3] == "chatty" {
			fmt.Println("hello from chatty, before the handshake") // where go-plugin wants the handshake
		}
		os.Exit(cli.Main(context.Background(), cli.Env{Stdout: os.Stdout, Stderr: os.Stderr, Builtins: allBuiltins()}, os.Args[1:]))
	}
	os.Setenv(childEnv, "1")
	os.Exit(m.Run())
}

// describer serves a description and nothing else (the handshake of the
// "oldproto" fixture fails before any call).
type describer struct{ d sdk.Description }

func (h describer) Describe() ([]byte, error) { return json.Marshal(h.d) }

func (h describer) Call(context.Context, string, []byte, []byte, *wire.Times) ([]byte, error) {
	return nil, errors.New("not served")
}

// result is one tcforge invocation's outcome.
type result struct {
	code           int
	stdout, stderr string
}

// tcforge runs the command line in this process with testBuiltins;
// plugins run in subprocesses of the test binary.
func tcforge(t *testing.T, args ...string) result {
	t.Helper()
	return tcforgeWith(t, testBuiltins(), args...)
}

// tcforgeWith runs the command line in this process with the given
// bundled plugins.
func tcforgeWith(t *testing.T, builtins map[string]sdk.Plugin, args ...string) result {
	t.Helper()
	if !slices.Contains(args, "--start-timeout") {
		// Plugin processes (this test binary, instrumented under the race
		// detector), started many at once on a busy machine, can take
		// longer than the default 10 s to start (seen at load 33 on 2
		// cores); the tests of the timeout give their own.
		args = append([]string{"--start-timeout", "5m"}, args...)
	}
	var out, errb bytes.Buffer
	// The shipped plugins share a process, as in the tcforge binary; the
	// misbehaving fixtures get one each.
	group := slices.Sorted(maps.Keys(builtin.Plugins()))
	code := cli.Main(context.Background(), cli.Env{Stdout: &out, Stderr: &errb, Builtins: builtins, Group: group}, args)
	return result{code, out.String(), errb.String()}
}

// TestPaperTables runs the paper's configs end to end and compares every
// row of the output with the paper's tables (testdata/paper, copied from
// the paper's sources).
func TestPaperTables(t *testing.T) {
	t.Parallel()
	tests := []struct {
		config, pipeline, paper string
		keys                    []string          // columns identifying a row, same name in both
		cols                    map[string]string // paper column -> our column
	}{
		{
			config: "keccak.hcl", pipeline: "keccak-arbitrary-input", paper: "keccak_arbitrary_input.csv",
			keys: []string{"log_w", "rounds", "blocks"},
			cols: map[string]string{"actual_depth": "depth", "actual_width": "width", "expected_depth": "expect_depth", "expected_width": "expect_width"},
		},
		{
			config: "keccak.hcl", pipeline: "keccak-depth-deviation", paper: "keccak_depth_deviation.csv",
			keys: []string{"log_w", "rounds"},
			cols: map[string]string{"depth_observed": "depth"},
		},
		{
			config: "md.hcl", pipeline: "md-sequential", paper: "md_sequential.csv",
			keys: []string{"log_w", "rounds", "block_bits", "blocks"},
			cols: map[string]string{"actual_depth": "depth", "actual_width": "width", "expected_depth": "expect_depth", "expected_width": "expect_width"},
		},
		{
			config: "merkle.hcl", pipeline: "merkle-tree", paper: "merkle_tree.csv",
			keys: []string{"log_w", "rounds", "leaves"},
			cols: map[string]string{"actual_depth": "depth", "actual_width": "width", "expected_depth": "expect_depth", "expected_width": "expect_width"},
		},
	}
	out := t.TempDir()
	var configs []string
	seen := map[string]bool{}
	for _, tt := range tests {
		if !seen[tt.config] {
			seen[tt.config] = true
			configs = append(configs, filepath.Join("..", "..", "configs", "paper", tt.config))
		}
	}
	r := tcforge(t, append([]string{"run", "--log-level", "warn", "--out", out}, configs...)...)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	// The paper's linear prediction 6·rounds + 2 and its misses: the
	// predict block's values, in the JSON report, against the paper.
	t.Run("predicted-depth", func(t *testing.T) {
		data, err := os.ReadFile(filepath.Join(out, "keccak-depth-deviation.json"))
		if err != nil {
			t.Fatal(err)
		}
		var rep struct {
			Rows []struct {
				Point   map[string]int   `json:"point"`
				Depth   int              `json:"depth"`
				Predict map[string]int64 `json:"predict"`
			} `json:"rows"`
		}
		if err := json.Unmarshal(data, &rep); err != nil {
			t.Fatal(err)
		}
		want := sdktest.Table(t, filepath.Join("testdata", "paper", "keccak_depth_deviation.csv"))
		if len(rep.Rows) != len(want) {
			t.Fatalf("%d rows, want %d", len(rep.Rows), len(want))
		}
		for i, w := range want {
			r := rep.Rows[i]
			pred, delta := strconv.FormatInt(r.Predict["depth"], 10), strconv.Itoa(r.Depth-int(r.Predict["depth"]))
			if strconv.Itoa(r.Point["log_w"]) != w["log_w"] || pred != w["depth_predicted_6n_plus_2"] || delta != w["delta"] {
				t.Errorf("row %v: predicted %s, delta %s; paper %v", r.Point, pred, delta, w)
			}
		}
	})
	for _, tt := range tests {
		t.Run(tt.pipeline, func(t *testing.T) {
			got := sdktest.Table(t, filepath.Join(out, tt.pipeline+".csv"))
			want := sdktest.Table(t, filepath.Join("testdata", "paper", tt.paper))
			if len(got) != len(want) {
				t.Fatalf("%d rows, the paper has %d", len(got), len(want))
			}
			for _, w := range want {
				var match map[string]string
				for _, g := range got {
					ok := true
					for _, k := range tt.keys {
						ok = ok && g[k] == w[k]
					}
					if ok {
						match = g
					}
				}
				if match == nil {
					t.Errorf("no row for paper row %v", w)
					continue
				}
				for pc, oc := range tt.cols {
					if match[oc] != w[pc] {
						t.Errorf("row %v: %s = %s, paper's %s = %s", w, oc, match[oc], pc, w[pc])
					}
				}
				if match["verified"] != "true" || match["expect_ok"] != "true" {
					t.Errorf("row %v: verified=%s expect_ok=%s", w, match["verified"], match["expect_ok"])
				}
			}
		})
	}
}

// adder is the example plugin's executable, built once per test binary.
var adder struct {
	once sync.Once
	exe  []byte
	err  error
}

// adderPlugin copies the example plugin's executable (built on first use)
// into a fresh plugin directory of the test and returns both paths.
func adderPlugin(t *testing.T) (dir, bin string) {
	t.Helper()
	adder.once.Do(func() {
		tmp, err := os.MkdirTemp("", "tcforge-adder")
		if err != nil {
			adder.err = err
			return
		}
		defer os.RemoveAll(tmp)
		exe := filepath.Join(tmp, "adder")
		build := exec.Command("go", "build", "-o", exe, "../../plugins/adder/cmd/tcforge-plugin-adder")
		build.Env = append(os.Environ(), childEnv+"=0")
		if out, err := build.CombinedOutput(); err != nil {
			adder.err = fmt.Errorf("go build: %w\n%s", err, out)
			return
		}
		adder.exe, adder.err = os.ReadFile(exe)
	})
	if adder.err != nil {
		t.Fatal(adder.err)
	}
	dir = t.TempDir()
	bin = filepath.Join(dir, "tcforge-plugin-adder")
	if err := os.WriteFile(bin, adder.exe, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, bin
}

// TestExternalPlugin builds the example plugin binary and runs a pipeline
// that uses it from a plugin directory.
func TestExternalPlugin(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds a plugin binary")
	}
	dir, bin := adderPlugin(t)
	r := tcforge(t, "plugins", "--plugin-dir", dir, "adder")
	if r.code != 0 || !strings.Contains(r.stdout, "adder (construction 1.0.0, "+bin+")") {
		t.Fatalf("plugins adder: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	out := t.TempDir()
	r = tcforge(t, "run", "--log-level", "warn", "--plugin-dir", dir, "--out", out, "../../configs/examples/adder.hcl")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	rows := sdktest.Table(t, filepath.Join(out, "adder.csv"))
	want := map[string][2]string{"1": {"3", "3"}, "2": {"4", "5"}, "4": {"6", "9"}, "8": {"10", "17"}, "16": {"18", "33"}}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(rows), len(want))
	}
	for _, row := range rows {
		w := want[row["n"]]
		if row["depth"] != w[0] || row["width"] != w[1] || row["verified"] != "true" || row["expect_ok"] != "true" {
			t.Errorf("n=%s: depth %s width %s verified %s expect_ok %s, want depth %s width %s", row["n"], row["depth"], row["width"], row["verified"], row["expect_ok"], w[0], w[1])
		}
	}
}

// TestPluginLock pins the external example plugin, then changes its
// executable: the host refuses to run it, naming it, and says why.
func TestPluginLock(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds a plugin binary")
	}
	dir, bin := adderPlugin(t)
	lock := filepath.Join(dir, "lock.hcl")
	r := tcforge(t, "plugins", "lock", "--lock", lock, "--plugin-dir", dir)
	if r.code != 0 || !strings.Contains(r.stdout, "  adder\n") {
		t.Fatalf("plugins lock: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	data, err := os.ReadFile(lock)
	if err != nil || !strings.Contains(string(data), `plugin "adder"`) || !strings.Contains(string(data), "sha256") {
		t.Fatalf("lock file: %v\n%s", err, data)
	}
	args := []string{"run", "--log-level", "warn", "--lock", lock, "--plugin-dir", dir, "../../configs/examples/adder.hcl"}
	if r := tcforge(t, args...); r.code != 0 {
		t.Fatalf("pinned plugin: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	f, err := os.OpenFile(bin, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte{0})
	f.Close()
	r = tcforge(t, args...)
	if r.code == 0 {
		t.Fatal("a changed plugin executable ran")
	}
	if w := `external plugin "adder" (` + bin + `) has SHA-256 `; !strings.Contains(r.stdout+r.stderr, w) || !strings.Contains(r.stdout+r.stderr, "refusing to run it") {
		t.Errorf("output lacks %q … refusing to run it:\n%s%s", w, r.stdout, r.stderr)
	}
}

// TestBadConfig: every mistake is a located diagnostic, the exit status is
// non-zero, and nothing is written.
func TestBadConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, src string
		want      []string // substrings of stderr
	}{
		{"typo", `pipeline "p" {
  construction "keccak" {
    log_w = 2
    rouds = 3
  }
  layerer "reifier" {}
}`, []string{`bad.hcl:4:5`, `Unsupported parameter "rouds"`, `Did you mean "rounds"?`}},
		{"log_w out of range", `pipeline "p" {
  matrix {
    lw = [2, 9]
  }
  construction "keccak" {
    log_w = matrix.lw
    rate  = 50
  }
  layerer "reifier" {}
}`, []string{`bad.hcl:6:13`, `must be at most 6, got 9`, `lw=9`}},
		{"rate zero", `pipeline "p" {
  construction "keccak" {
    log_w = 2
    rate  = 0
  }
  layerer "reifier" {}
}`, []string{`bad.hcl:4:13`, `must be at least 1, got 0`}},
		{"rate not below the state", `pipeline "p" {
  construction "keccak" {
    log_w = 2
    rate  = 100
  }
  layerer "reifier" {}
}`, []string{`bad.hcl:4:13`, `rate must be less than the state size 25w = 100`}},
		{"wrong type", `pipeline "p" {
  construction "keccak" {
    log_w = "two"
    rate  = 50
  }
  layerer "reifier" {}
}`, []string{`bad.hcl:3:13`, `log_w`}},
		{"unknown plugin", `pipeline "p" {
  construction "keccak" {
    log_w = 1
    rate  = 25
  }
  layerer "nosuch" {}
}`, []string{`bad.hcl:6:11`, `"nosuch"`}},
		{"impossible md, merkle and mapper values", `pipeline "ok" {
  construction "md" {
    log_w      = 1
    block_bits = 4
  }
  layerer "reifier" {}
}
pipeline "md" {
  construction "md" {
    log_w      = 2
    block_bits = 8
    chain_bits = 5000
  }
  layerer "reifier" {}
}
pipeline "leaves" {
  construction "merkle" {
    log_w      = 1
    block_bits = 4
    leaves     = 0
  }
  layerer "reifier" {}
}
pipeline "digest" {
  construction "merkle" {
    log_w       = 1
    block_bits  = 4
    digest_bits = 1000
  }
  layerer "reifier" {}
}
pipeline "beta" {
  construction "keccak" {
    log_w = 1
    rate  = 25
  }
  layerer "reifier" {}
  mapper "tokens-as-gates" {
    attention = "softmax"
    beta      = -1
  }
}`, []string{`bad.hcl:12:18`, `5000 is larger than the Keccak-p state of 25w = 100 bits`,
			`bad.hcl:20:18`, `needs at least one leaf, got 0`,
			`bad.hcl:28:19`, `digest_bits`, `larger than the Keccak-p state`,
			`bad.hcl:40:17`, `must be ≥ 0 and finite, got -1`}},
		{"syntax", `pipeline "p" {
  construction "keccak" {
    log_w = = 1
  }
}`, []string{`bad.hcl:3:13`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "bad.hcl")
			if err := os.WriteFile(path, []byte(tt.src), 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "out")
			r := tcforge(t, "run", "--out", out, path)
			if r.code == 0 {
				t.Fatalf("exit 0 on a bad config\n%s", r.stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("a bad config wrote %s", out)
			}
		})
	}
}

// TestInterrupt: a run cancelled mid-way (Ctrl-C) keeps the rows of the
// points that finished, marks the pipeline incomplete in every format,
// writes report.html, starts nothing more, exits 130, and leaves nothing
// of an earlier run in --out that could pass for this one's.
func TestInterrupt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg, outDir, mark := stoppedRun(t, dir)
	// Cancel once the "hangs" layerer is stuck in the second pipeline.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// A named pipe: opening it blocks until the plugin opens it to write.
	if err := syscall.Mkfifo(mark, 0o600); err != nil {
		t.Fatal(err)
	}
	go func() {
		if f, err := os.Open(mark); err == nil {
			f.Close()
		}
		cancel()
	}()
	defer func() { // release the reader if the plugin never got there
		if f, err := os.OpenFile(mark, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	}()
	var out, errb bytes.Buffer
	code := cli.Main(ctx, cli.Env{Stdout: &out, Stderr: &errb, Builtins: testBuiltins()},
		[]string{"run", "--log-level", "warn", "--jobs", "1", "--out", outDir, cfg})
	if code != 130 {
		t.Fatalf("exit %d, want 130\n%s%s", code, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), `pipeline "stuck" — incomplete (interrupted): 0 of 2 points finished`) {
		t.Errorf("the interrupted pipeline is not marked incomplete:\n%s", out.String())
	}
	if _, err := os.Stat(filepath.Join(outDir, "never.csv")); !os.IsNotExist(err) {
		t.Errorf("a pipeline after the interrupt ran:\n%s%s", out.String(), errb.String())
	}
	checkStopped(t, outDir, "interrupted")
}

// TestSizeGuard: a point over --max-edges is refused before anything is
// built, with the estimate in the message.
func TestSizeGuard(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "out")
	r := tcforge(t, "run", "--max-edges", "100000", "--out", out, "../../configs/sha3.hcl")
	if r.code == 0 {
		t.Fatal("exit 0 over the size limit")
	}
	for _, w := range []string{"Point too large", "sha3.hcl:", "estimates its logic circuit at matrix point preset=sha3-224 at ", "616", "over the limit of 100000 edges"} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Error("a refused run wrote results")
	}
}

// TestMisbehavingPlugins: plugins that panic, exit mid-call, hang, return
// malformed or wrong circuits, or speak another protocol are each reported
// by name in one line, and the other pipelines of the run still complete
// and write their results.
func TestMisbehavingPlugins(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	r := tcforge(t, "run", "--log-level", "warn", "--timeout", "3s", "--out", out, "testdata/misbehaving.hcl")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	tests := []struct {
		pipeline string
		verified string
		errs     []string // in the terminal table's error lines
	}{
		{"good-before", "true", nil},
		{"panics", "false", []string{`plugin "panics": Layer: plugin panicked: layering is hard (at cli/plugins_test.go:`}}, // where it panicked
		// The point whose call starts after the process died says "exited
		// before Layer" (likelier with other tests running beside).
		{"dies", "false", []string{`plugin "dies" exited `, `Layer: exit status 3`}},
		{"hangs", "false", []string{`plugin "hangs": Layer did not answer within 3s; the plugin process was killed`}},
		{"lies", "false", []string{`layerer "lies": layered circuit vs logic circuit: sample `}},
		{"bad-src", "false", []string{`plugin "bad-src": Layer: decoding layered circuit: `}},
		{"bad-outputs", "false", []string{`plugin "bad-outputs": Layer: decoding layered circuit: layered: output range "digest" exceeds the 11 outputs of the last level`}},
		{"cyclic", "false", []string{`plugin "cyclic": Build: decoding`}},
		{"oldproto", "false", []string{`layerer plugin "oldproto" failed to start`, `protocol`}},
		{"good-after", "true", nil},
	}
	for _, tt := range tests {
		t.Run(tt.pipeline, func(t *testing.T) {
			rows := sdktest.Table(t, filepath.Join(out, tt.pipeline+".csv"))
			if len(rows) != 2 {
				t.Fatalf("%d rows, want 2", len(rows))
			}
			for _, row := range rows {
				if row["verified"] != tt.verified || row["expect_ok"] != tt.verified {
					t.Errorf("%v: verified=%s expect_ok=%s, want %s", row, row["verified"], row["expect_ok"], tt.verified)
				}
				if tt.verified == "true" && (row["depth"] == "0" || row["width"] == "0") {
					t.Errorf("empty figures %v", row)
				}
				// Failed rows are not data: the error column says why.
				switch {
				case tt.verified == "true" && row["error"] != "":
					t.Errorf("error column of a good row: %q", row["error"])
				case tt.verified == "false" && !strings.Contains(row["error"], tt.errs[0]):
					t.Errorf("error column %q lacks %q", row["error"], tt.errs[0])
				}
				if measured := tt.pipeline == "lies"; tt.verified == "false" && !measured && (row["depth"] != "" || row["width"] != "") {
					t.Errorf("figures of a row never layered: depth %q width %q", row["depth"], row["width"])
				}
			}
			// Failed points are left out of the plots and named under them.
			plots, _ := filepath.Glob(filepath.Join(out, "plots", tt.pipeline+".*"))
			md, err := os.ReadFile(filepath.Join(out, tt.pipeline+".md"))
			if err != nil {
				t.Fatal(err)
			}
			if tt.verified == "true" {
				if len(plots) == 0 || strings.Contains(string(md), "Not plotted") {
					t.Errorf("plots %v of a good pipeline; Markdown:\n%s", plots, md)
				}
			} else {
				if len(plots) != 0 {
					t.Errorf("failed points plotted: %v", plots)
				}
				if want := "Not plotted (failed): rounds=1, " + layererOf(tt.pipeline) + "; rounds=2, " + layererOf(tt.pipeline) + "."; !strings.Contains(string(md), want) {
					t.Errorf("Markdown lacks %q:\n%s", want, md)
				}
				if !strings.Contains(string(md), "| error |") {
					t.Errorf("Markdown table has no error column:\n%s", md)
				}
			}
			var js struct {
				Rows []map[string]any `json:"rows"`
			}
			readJSON(t, filepath.Join(out, tt.pipeline+".json"), &js)
			for _, row := range js.Rows {
				if e, ok := row["error"].(string); !ok || (e == "") != (tt.verified == "true") {
					t.Errorf("JSON row error %#v", row["error"])
				}
			}
			section := r.stdout[strings.Index(r.stdout, "pipeline \""+tt.pipeline+"\""):]
			if i := strings.Index(section[1:], "\npipeline "); i >= 0 {
				section = section[:i+1]
			}
			for _, w := range tt.errs {
				if !strings.Contains(section, w) {
					t.Errorf("table lacks %q:\n%s", w, section)
				}
			}
		})
	}
}

// layererOf is the layerer of a pipeline of testdata/misbehaving.hcl.
func layererOf(pipeline string) string {
	if pipeline == "cyclic" {
		return "reifier"
	}
	return pipeline
}

// TestFullSHA3_512 sends a full-size SHA3-512 circuit (w = 64, 24 rounds)
// through the plugin processes: the logic circuit to the layerer, the
// layered circuit (millions of edges, streamed in chunks) back, both
// verified against crypto/sha3.
func TestFullSHA3_512(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "sha3.hcl")
	src := `pipeline "sha3-512" {
  samples = 64
  construction "keccak" {
    preset = "sha3-512"
  }
  layerer "reifier" {}
  expect "reifier" {
    depth = 2 + construction.blocks * (2 + 6 * construction.rounds)
    width = 11 * construction.b
  }
}`
	if err := os.WriteFile(cfg, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	r := tcforge(t, "run", "--log-level", "warn", "--out", dir, cfg)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	rows := sdktest.Table(t, filepath.Join(dir, "sha3-512.csv"))
	want := map[string]string{"depth": "148", "width": "17600", "gates": "695616", "copies": "39480", "edges": "5457336", "verified": "true", "expect_ok": "true"}
	for k, v := range want {
		if rows[0][k] != v {
			t.Errorf("%s = %s, want %s", k, rows[0][k], v)
		}
	}
}
