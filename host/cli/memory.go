package cli

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"time"

	"github.com/tcforge/tcforge/internal/wire"
)

// memoryPoll is how often the host compares its own resident memory with
// its bound.
const memoryPoll = 200 * time.Millisecond

// hostMemory returns the memory bound in bytes the host holds itself to
// and where it comes from: --memory MiB when set (> 0), else the
// environment's GOMEMLIMIT, else its share of what the machine gives it
// (machineShare); 0 where none is known.
func hostMemory(flagMiB int64) (int64, string) {
	if flagMiB > 0 {
		return flagMiB << 20, "--memory"
	}
	if os.Getenv("GOMEMLIMIT") != "" {
		if l := debug.SetMemoryLimit(-1); l > 0 && l < 1<<62 {
			return l, "GOMEMLIMIT"
		}
	}
	return machineShare(physicalMemory(), addressSpaceLeft(), cgroupMemoryLimit())
}

// machineShare returns half of the least of the bounds the machine puts
// on this process — its physical memory ram, the address space as that
// RLIMIT_AS (ulimit -v, prlimit --as) leaves it, and its cgroup's memory
// limit cg
// (a Slurm job's --mem, a container's limit) — and which it was: the
// plugin processes share the machine and the cgroup, and an address space
// holds more than the memory in use (the Go runtime's reservations, the
// mapped answers). A bound that is 0 is unknown or none. Before, the
// share was of the physical memory alone: under ulimit -v 8 GB a model
// check that could not fit ran until a process died of it.
func machineShare(ram, as, cg int64) (int64, string) {
	least, from := int64(0), "none"
	for _, b := range []struct {
		n    int64
		what string
	}{{ram, "the physical memory"}, {as, "the address space RLIMIT_AS (ulimit -v) leaves"}, {cg, "the cgroup's memory limit"}} {
		if b.n > 0 && (least == 0 || b.n < least) {
			least, from = b.n, b.what
		}
	}
	if least == 0 {
		return 0, "none"
	}
	return least / 2, "half of " + from
}

// defaultPluginMemory is --plugin-memory's default in bytes: 8 GiB, or
// less where the process's address space or cgroup is bounded (half of
// the least, as machineShare): a plugin then meets its own bound, and is
// killed with a message naming it, before the kernel or the Go runtime
// refuses it memory and it crashes.
func defaultPluginMemory() int64 {
	const def = 8192 << 20
	if share, _ := machineShare(0, addressSpaceLeft(), cgroupMemoryLimit()); share > 0 {
		return min(def, share)
	}
	return def
}

// maxMiB is the largest MiB count a flag takes: its bytes fit an int64.
const maxMiB = math.MaxInt64 >> 20

// mapBudget is the part of the host's memory bound limit (see
// hostMemory) that bundled plugins' answers may be mapped into rather
// than read (registry.Options.MapBudget): a sixteenth, at most 256 MiB,
// none without a bound. The mappings are held until the run ends (a full
// SHA3-256 layered circuit is 55 MB of them), so the budget is what a
// long run's peak grows by: configs/mappers.hcl peaked at 5.16 GB with a
// sixteenth of 12 GB against 4.45 GB without. They are outside the Go
// heap, so boundMemory gives the collector the rest.
func mapBudget(limit int64) int64 { return min(limit/16, 256<<20) }

// boundMemory holds the host to limit bytes (see hostMemory): the Go
// runtime's soft limit (debug.SetMemoryLimit, so the garbage collector
// works to stay under it), less the mapping budget (mapBudget), unless
// GOMEMLIMIT sets one, and a watchdog that
// samples the process's resident size and, over the bound, stops the run
// as a signal does (stop, with the sizes): the finished rows are written,
// the manifest says why. The model checks' own estimate (run's
// MemoryLimit) keeps them under it in the first place; this is the
// backstop. The watchdog ends with ctx; restore puts the runtime's
// limit back (Main may run again in one process, as tests do).
func boundMemory(ctx context.Context, limit int64, stop func(stopCause)) (restore func()) {
	restore = func() {}
	if limit <= 0 {
		return restore
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		old := debug.SetMemoryLimit(limit - mapBudget(limit))
		restore = func() { debug.SetMemoryLimit(old) }
	}
	if _, ok := selfResident(); !ok {
		return restore
	}
	go func() {
		t := time.NewTicker(memoryPoll)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if rss, ok := selfResident(); ok && rss > limit {
				stop(stopCause{code: 1, why: fmt.Sprintf("the host grew to %d MiB, over its memory bound of %d MiB (--memory)", rss>>20, limit>>20)})
				return
			}
		}
	}()
	return restore
}

// selfResident returns this process's resident set size (VmRSS).
func selfResident() (int64, bool) { return wire.ProcessMemory(os.Getpid(), "VmRSS") }

// selfPeak returns this process's peak resident set size (VmHWM).
func selfPeak() (int64, bool) { return wire.ProcessMemory(os.Getpid(), "VmHWM") }
