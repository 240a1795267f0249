// Command tcforge compiles hash constructions into layered threshold
// circuits and transformer weights. See `tcforge --help`.
package main

import (
	"context"
	"os"

	"github.com/tcforge/tcforge/host/cli"
)

func main() {
	os.Exit(cli.Main(context.Background(), cli.Env{Stdout: os.Stdout, Stderr: os.Stderr}, os.Args[1:]))
}
