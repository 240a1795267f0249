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
//
// The process leads a process group (ownGroup): once it has exited, what
// is left of its group (a script's children) is killed, also because it
// may hold the pipes go-plugin waits on.
func stopProcess(pc *plugin.Client, cmd *exec.Cmd) {
	pid := 0
	if cmd != nil && cmd.Process != nil {
		pid = cmd.Process.Pid
		defer killGroup(pid)
	}
	done := make(chan struct{})
	go func() {
		pc.Kill()
		close(done)
	}()
	// wait waits for go-plugin's Kill for at most killGrace, killing
	// the group as soon as its leader has exited.
	wait := func() bool {
		t := time.NewTimer(killGrace)
		defer t.Stop()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return true
			case <-t.C:
				return false
			case <-tick.C:
				if pc.Exited() {
					killGroup(pid)
				}
			}
		}
	}
	if wait() {
		return
	}
	if cmd != nil && cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
	killGroup(pid)
	wait()
}
