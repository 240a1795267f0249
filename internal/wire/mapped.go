package wire

import (
	"os"
	"sync"
)

// Mapped holds the blob files a process maps into its memory rather than
// reading them: the host, its trusted plugins' answers (Client.SetMapped);
// a plugin, the host's requests (requestMapBudget). An answer's arrays are then views of
// the page cache the plugin wrote them to, with no copy and no page fault
// for each 4 KiB of fresh memory. On the SHA3-256 point, the layered
// circuit's 55 MB flat blob takes 8.5–9.6 ms to receive mapped against
// 33–35 ms read into fresh memory in a new process
// (BenchmarkLayeredReceiveFresh in host/registry), and the plugin sends it
// flat, without encoding it (sdk/serve), since the host takes it in place.
//
// A mapping cannot be given back while anything still uses what was
// decoded from it, and Go's collector does not see into it, so the owner
// releases them all at once when nothing received through its clients is
// used any more (the registry, when it closes). Up to budget bytes are
// mapped; blob files beyond that are read as before. The mappings are
// private (copy on write): the host may change what it received. The
// plugin could still change a file it wrote while it is mapped, so only
// plugins the host trusts as it trusts its own code (the bundled ones)
// get one.
type Mapped struct {
	mu     sync.Mutex
	budget int64
	used   int64
	maps   [][]byte
}

// NewMapped returns a Mapped that maps up to budget bytes in all.
func NewMapped(budget int64) *Mapped { return &Mapped{budget: budget} }

// mapFile maps size bytes of f if there is budget left for them, and
// reports whether it did: a file that cannot be mapped (a file system
// without mmap) is left to be read.
func (m *Mapped) mapFile(f *os.File, size int64) ([]byte, bool) {
	if m == nil || size <= 0 {
		return nil, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.used+size > m.budget {
		return nil, false
	}
	b, err := mapPrivate(f, size)
	if err != nil || b == nil {
		return nil, false
	}
	m.used += size
	m.maps = append(m.maps, b)
	return b, true
}

// drop unmaps b, a mapping of m's that nothing uses (a blob refused).
func (m *Mapped) drop(b []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, x := range m.maps {
		if len(x) > 0 && &x[0] == &b[0] {
			m.maps = append(m.maps[:i], m.maps[i+1:]...)
			m.used -= int64(len(b))
			unmap(b)
			return
		}
	}
}

// room reports whether m may map anything more: while it may, the host
// asks trusted plugins for flat layered answers (a flat one read into
// fresh memory costs more than a packed one).
func (m *Mapped) room() bool {
	if m == nil {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.used < m.budget
}

// Mapped returns the bytes mapped so far.
func (m *Mapped) Mapped() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.used
}

// Release unmaps every file: nothing decoded from them may be used
// afterwards. Later blob files are read, not mapped.
func (m *Mapped) Release() {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, b := range m.maps {
		unmap(b)
	}
	m.maps, m.budget = nil, 0
}

// requestMapBudget is how many bytes of the host's requests a plugin
// process maps rather than reads (the logic circuit a layerer gets: 7.6 MB
// for SHA3-256, read in 5–6 ms into fresh memory), for a process whose Go
// memory limit is limit (math.MaxInt64 for none): a sixteenth of it, at
// most 256 MiB. The plugin trusts the host, which wrote the file, and
// never releases them: a plugin func may keep what it was given, and the
// mappings go with the process.
func requestMapBudget(limit int64) int64 {
	return min(limit/16, 256<<20)
}
