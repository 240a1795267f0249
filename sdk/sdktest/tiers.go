package sdktest

import (
	"os"
	"testing"
)

// HeavyEnv is the environment variable that turns on the heavy test tier:
// with HeavyEnv=1, `go test ./...` also runs the full-size checks that take
// minutes (full SHA3-256 at one level a round, every mapping of full
// SHA3-256, the figures of docs/results.md that need minutes). The tiers:
//
//	go test -short ./...          the edit loop (about a minute)
//	go test ./...                 what CI runs (no test over a minute alone)
//	TCFORGE_HEAVY=1 go test ./... the full-size checks besides
const HeavyEnv = "TCFORGE_HEAVY"

// Heavy skips t, saying what it skips and how to run it, unless the
// environment sets TCFORGE_HEAVY=1 (and the run is not -short): what
// costs minutes runs only in the heavy tier.
func Heavy(t testing.TB, what string) {
	t.Helper()
	if !IsHeavy() {
		t.Skipf("%s: set %s=1 (without -short) to run it", what, HeavyEnv)
	}
}

// IsHeavy reports whether this run is the heavy tier (TCFORGE_HEAVY=1,
// not -short), for a test that runs in both tiers at different sizes.
func IsHeavy() bool { return !testing.Short() && os.Getenv(HeavyEnv) == "1" }

// Short skips t under -short, saying what it skips: what costs more than
// a few seconds stays out of the edit loop (go test -short ./...).
func Short(t testing.TB, what string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("-short: %s", what)
	}
}
