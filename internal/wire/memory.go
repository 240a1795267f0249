package wire

import (
	"fmt"
	"strings"
	"time"
)

// memoryPoll is how often a plugin process's memory is compared with its
// bound.
const memoryPoll = 100 * time.Millisecond

// MemoryError reports a call whose plugin process grew over the memory
// bound the host sets (SetMemoryLimit) and was killed.
type MemoryError struct {
	Plugin string
	Call   string
	Limit  int64 // bytes
	RSS    int64 // bytes resident when it was killed
	// Shared names the other plugins of its process, if it shared one.
	Shared []string
}

// Error implements error.
func (e *MemoryError) Error() string {
	shared := ""
	if len(e.Shared) > 0 {
		shared = fmt.Sprintf(" (shared with %s)", strings.Join(e.Shared, ", "))
	}
	return fmt.Sprintf("plugin %q: %s: the plugin process%s grew to %d MiB, over the memory bound of %d MiB (--plugin-memory); it was killed", e.Plugin, e.Call, shared, e.RSS>>20, e.Limit>>20)
}

// SetMemoryLimit bounds the plugin process's resident memory to limit
// bytes (0: no bound): it is sampled every 100 ms and the process is killed
// when over it; the call running then fails with a *MemoryError. A plugin
// that estimates its circuit is refused before it builds one too large;
// this bounds the others. Where the resident size cannot be read (no
// /proc), there is no bound. Call it once, before using the plugin.
//
// The bound is the process's: for plugins sharing one (LaunchGroup), the
// first call sets it.
func (c *Client) SetMemoryLimit(limit int64) {
	if limit <= 0 || c.cmd.Process == nil {
		return
	}
	c.memOnce.Do(func() { c.watchMemory(limit) })
}

// watchMemory polls the process's resident size against limit.
func (p *proc) watchMemory(limit int64) {
	c := p
	pid := c.cmd.Process.Pid
	if _, ok := residentBytes(pid); !ok {
		return
	}
	c.memLimit = limit
	go func() {
		t := time.NewTicker(memoryPoll)
		defer t.Stop()
		for range t.C {
			if c.closed.Load() || c.pc.Exited() {
				return
			}
			rss, ok := residentBytes(pid)
			if !ok {
				return
			}
			if rss > limit {
				c.overMemory.Store(rss)
				c.quiet.Store(true) // the call's error says why
				c.cmd.Process.Kill()
				return
			}
		}
	}()
}
