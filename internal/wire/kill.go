package wire

import (
	"os/exec"
	"time"

	"github.com/hashicorp/go-plugin"
)

// killGrace is how long stopProcess lets go-plugin stop a plugin
// gracefully before it kills the process itself, and then how long it
// waits for go-plugin to notice. go-plugin's Kill first sends a Shutdown
// RPC that has no deadline: a frozen plugin (SIGSTOPped, or wedged in the
// kernel) never answers it, and the host would wait for good.
const killGrace = 2 * time.Second

// stopProcess stops the plugin process of pc (started from cmd) within
// about 2 × killGrace whatever state it is in: go-plugin's graceful
// shutdown first, SIGKILL (which a stopped process receives too) when that
// has not finished within killGrace. It returns without waiting longer
// for go-plugin's own goroutines, which end once the process is gone.
func stopProcess(pc *plugin.Client, cmd *exec.Cmd) {
	done := make(chan struct{})
	go func() {
		pc.Kill()
		close(done)
	}()
	t := time.NewTimer(killGrace)
	defer t.Stop()
	select {
	case <-done:
		return
	case <-t.C:
	}
	if cmd != nil && cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
	t.Reset(killGrace)
	select {
	case <-done:
	case <-t.C:
	}
}
