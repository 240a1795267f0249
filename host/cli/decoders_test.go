package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/tcforge/tcforge/sdk/sdktest"
)

// TestDecodersConfig runs configs/decoders.hcl end to end (tokens as
// time): SHA-256 at two rounds and toy Keccak at three, each at three
// levels a step, every decoder checked by greedy generation token by token
// in float32 and float64 (exit 0 only if all were), and the trade-off the
// parameter makes: the layers are the levels a step, and the generated
// tokens fall as they grow.
func TestDecodersConfig(t *testing.T) {
	if testing.Short() {
		t.Skip("maps and checks six decoders (about 10 s)")
	}
	out := t.TempDir()
	r := tcforge(t, "run", "--log-level", "warn", "--out", out, filepath.Join("..", "..", "configs", "decoders.hcl"))
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	for _, pipeline := range []string{"decoder-sha256", "decoder-keccak"} {
		var res struct {
			Rows []struct {
				Point  map[string]any `json:"vars"`
				Models []struct {
					Blocks    int    `json:"blocks"`
					Generated int    `json:"generated_tokens"`
					Vocab     int    `json:"vocab"`
					Verified  bool   `json:"model_verified"`
					ExactIn   string `json:"exact_in"`
				} `json:"models"`
			} `json:"rows"`
		}
		data, err := os.ReadFile(filepath.Join(out, pipeline+".json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &res); err != nil {
			t.Fatal(err)
		}
		if len(res.Rows) != 3 {
			t.Fatalf("%s: %d rows, want 3", pipeline, len(res.Rows))
		}
		prev := 1 << 30
		for i, row := range res.Rows {
			if len(row.Models) != 1 {
				t.Fatalf("%s row %d: %d models", pipeline, i, len(row.Models))
			}
			m := row.Models[0]
			if !m.Verified || m.ExactIn != "fp64 fp32" || m.Vocab != 256 {
				t.Errorf("%s row %d: verified %v, exact in %q, vocabulary %d", pipeline, i, m.Verified, m.ExactIn, m.Vocab)
			}
			if i > 0 && m.Blocks <= res.Rows[i-1].Models[0].Blocks {
				t.Errorf("%s row %d: %d layers after %d: more levels a step, more layers", pipeline, i, m.Blocks, res.Rows[i-1].Models[0].Blocks)
			}
			if m.Generated >= prev {
				t.Errorf("%s row %d: %d generated tokens after %d: more levels a step, fewer tokens", pipeline, i, m.Generated, prev)
			}
			prev = m.Generated
		}
	}
}

// TestDecodersFull runs configs/decoders-full.hcl (heavy: minutes): full
// SHA-256 and SHA3-256 with the decoder's defaults, 64 random messages each,
// every generated token exact in float32 and float64, within issue 35's
// shapes: at most 12 layers and d_model 1,024, a byte vocabulary, and for
// SHA-256 at most 2,048 generated tokens.
func TestDecodersFull(t *testing.T) {
	sdktest.Heavy(t, "maps and checks full SHA-256 and SHA3-256 decoders on 64 messages each (minutes)")
	out := t.TempDir()
	r := tcforge(t, "run", "--log-level", "warn", "--out", out, filepath.Join("..", "..", "configs", "decoders-full.hcl"))
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	for _, tc := range []struct {
		pipeline  string
		generated int // at most
	}{{"decoder-sha256-full", 2048}, {"decoder-sha3-256-full", 1 << 20}} {
		data, err := os.ReadFile(filepath.Join(out, tc.pipeline+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var res struct {
			Rows []struct {
				Models []struct {
					Blocks    int    `json:"blocks"`
					DModel    int    `json:"d_model"`
					Generated int    `json:"generated_tokens"`
					Vocab     int    `json:"vocab"`
					Samples   int    `json:"samples"`
					Verified  bool   `json:"model_verified"`
					ExactIn   string `json:"exact_in"`
				} `json:"models"`
			} `json:"rows"`
		}
		if err := json.Unmarshal(data, &res); err != nil {
			t.Fatal(err)
		}
		if len(res.Rows) != 1 || len(res.Rows[0].Models) != 1 {
			t.Fatalf("%s: want one row with one model", tc.pipeline)
		}
		m := res.Rows[0].Models[0]
		if !m.Verified || m.ExactIn != "fp64 fp32" || m.Samples < 64 || m.Vocab > 260 || m.Blocks > 12 || m.DModel > 1024 || m.Generated > tc.generated {
			t.Errorf("%s: verified %v, exact in %q on %d samples, vocabulary %d, %d layers, d_model %d, %d generated tokens; want verified, fp64 fp32 on ≥ 64, ≤ 260, ≤ 12, ≤ 1,024, ≤ %d",
				tc.pipeline, m.Verified, m.ExactIn, m.Samples, m.Vocab, m.Blocks, m.DModel, m.Generated, tc.generated)
		}
	}
}
