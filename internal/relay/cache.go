package relay

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"maps"
	"slices"
	"sync"

	"github.com/weir-sec/weir/internal/detect"
	"github.com/weir-sec/weir/internal/engine"
	"github.com/weir-sec/weir/internal/pin"
)

// ListCache keeps what a tools/list costs to work out — each definition's
// pin encoding and the detectors' findings over the catalogue — by the
// bytes they were worked out from, so a client that lists the same tools
// again (most do, often) pays for the reading and the pins only. A
// definition that changed by one byte misses, so nothing stale is used.
// It is safe for concurrent use; its size is bounded.
type ListCache struct {
	mu       sync.Mutex
	encoded  map[[32]byte]pin.Encoded
	findings map[[32]byte]map[string][]detect.Finding
	defs     map[[32]byte]engine.ToolDef
}

// maxCached bounds each map; past it the map starts afresh.
const maxCached = 4096

// NewListCache returns an empty cache.
func NewListCache() *ListCache {
	return &ListCache{encoded: map[[32]byte]pin.Encoded{}, findings: map[[32]byte]map[string][]detect.Finding{}, defs: map[[32]byte]engine.ToolDef{}}
}

func keyOf(parts ...[]byte) [32]byte {
	h := sha256.New()
	for _, p := range parts {
		writeLen(h, len(p))
		h.Write(p)
	}
	var k [32]byte
	h.Sum(k[:0])
	return k
}

func writeLen(h hash.Hash, n int) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(n))
	h.Write(b[:])
}

// encode fills l.Encoded, from the cache where it can.
func (c *ListCache) encode(l *engine.List) {
	l.Encoded = make([]pin.Encoded, len(l.Tools))
	ins := []byte(l.Instructions)
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, t := range l.Tools {
		if i >= len(l.Elems) {
			enc, hash := pin.Encode(t, l.Instructions)
			l.Encoded[i] = pin.Encoded{Enc: enc, Hash: hash}
			continue
		}
		k := keyOf([]byte(t.Server), ins, l.Elems[i])
		e, ok := c.encoded[k]
		if !ok {
			enc, hash := pin.Encode(t, l.Instructions)
			e = pin.Encoded{Enc: enc, Hash: hash}
			if len(c.encoded) >= maxCached {
				clear(c.encoded)
			}
			c.encoded[k] = e
		}
		l.Encoded[i] = e
	}
}

// def returns what labelling reads of tool t, whose definition is elem
// (nil: not cached), from the cache where it can; a nil cache keeps
// nothing. Its slices are shared: callers do not change them.
func (c *ListCache) def(server string, t detect.Tool, elem []byte) engine.ToolDef {
	if c == nil || elem == nil {
		return engine.DefOf(t)
	}
	return cached(&c.mu, c.defs, keyOf([]byte(server), elem), func() engine.ToolDef { return engine.DefOf(t) })
}

// cached returns m[k], or computes, stores and returns it (outside the
// lock: two callers may both compute, and store the same value).
func cached[V any](mu *sync.Mutex, m map[[32]byte]V, k [32]byte, compute func() V) V {
	mu.Lock()
	v, ok := m[k]
	mu.Unlock()
	if ok {
		return v
	}
	v = compute()
	mu.Lock()
	if len(m) >= maxCached {
		clear(m)
	}
	m[k] = v
	mu.Unlock()
	return v
}

// catalogueKey keys the detectors' findings: everything ScanCatalogue
// reads.
func catalogueKey(server string, cat detect.Catalogue, elems [][]byte, others map[string][]string) [32]byte {
	parts := [][]byte{[]byte(server), []byte(cat.Instructions)}
	parts = append(parts, elems...)
	for _, group := range [][]detect.NamedText{cat.Prompts, cat.Resources} {
		parts = append(parts, []byte{byte(len(group))})
		for _, p := range group {
			parts = append(parts, []byte(p.Name), []byte(p.Description))
		}
	}
	for _, srv := range slices.Sorted(maps.Keys(others)) {
		parts = append(parts, []byte(srv))
		for _, n := range others[srv] {
			parts = append(parts, []byte(n))
		}
	}
	return keyOf(parts...)
}

// scan returns the findings over a catalogue whose tools are elems, from
// the cache or by scanning.
func (c *ListCache) scan(server string, cat detect.Catalogue, elems [][]byte, others map[string][]string) map[string][]detect.Finding {
	return cached(&c.mu, c.findings, catalogueKey(server, cat, elems, others), func() map[string][]detect.Finding {
		cat.Server = server
		return detect.ScanCatalogue(cat, others)
	})
}
