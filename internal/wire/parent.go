package wire

import (
	"os"
	"strconv"
	"time"
)

// parentPoll is how often a plugin process checks that its host is alive.
const parentPoll = 200 * time.Millisecond

// watchParent makes a plugin process end on its own within about a second
// of its host's death, however the host died (SIGKILL included): a plugin
// is useless without its host and would otherwise run forever. On Linux
// the kernel sends the plugin SIGKILL when the host dies (dieWithParent,
// PR_SET_PDEATHSIG); everywhere, a goroutine polls the parent process ID,
// which changes when the host is gone (the plugin is re-parented to init
// or a subreaper), and exits then.
//
// A host that died before the plugin got here (a SIGTERM in its first
// milliseconds) left it re-parented already: the host's process ID, which
// the host passes in HostPIDEnv, then names no process, and the plugin
// exits at once (before, it served no one for good).
func watchParent() {
	ppid := os.Getppid()
	dieWithParent()
	host, _ := strconv.Atoi(os.Getenv(HostPIDEnv))
	if host > 0 && !processAlive(host) {
		os.Exit(1) // the host is gone already
	}
	if os.Getppid() != ppid || ppid == 1 {
		// The host died before the kernel was told to watch it (or the
		// plugin was started by init, with no host to watch).
		if ppid != 1 {
			os.Exit(1)
		}
		return
	}
	go func() {
		for range time.Tick(parentPoll) {
			if os.Getppid() != ppid {
				os.Exit(1)
			}
		}
	}()
}

// HostPIDEnv is the environment variable through which Launch tells a
// plugin process its host's process ID (see watchParent).
const HostPIDEnv = "TCFORGE_PLUGIN_HOST_PID"
