//go:build race

package cli_test

// raceEnabled says the race detector is on: every plugin process is this
// test binary, instrumented, and starts several times slower.
const raceEnabled = true
