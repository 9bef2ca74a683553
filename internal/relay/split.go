package relay

import (
	"container/list"
	"encoding/json"
	"slices"
	"sync"

	"github.com/weir-sec/weir/internal/engine"
	"github.com/weir-sec/weir/internal/flow"
)

// What the session's earlier calls to each sink tool carried, for leaks
// split across calls (engine.Earlier): the end of their payloads, in this
// process's memory only, never written (DESIGN rule 2). Bounded: at most
// maxSinkTools tools, the least recently called dropped first, and
// sinkTail bytes each — enough for a dozen pieces of 20–40 characters, so
// a note leaked 30 characters at a time is caught by its second or third
// piece, and a 35-character run across any number of calls is joined.
const (
	sinkTail     = 512
	maxSinkTools = 64
)

// sinkHistory is the history of the relay's sink tools.
type sinkHistory struct {
	mu    sync.Mutex
	tools map[string]*list.Element // tool → its *sinkTrail in lru
	lru   list.List                // most recently called first
}

// sinkTrail is what one sink tool received: the end of each call's
// payload still in the tail, oldest first.
type sinkTrail struct {
	tool  string
	parts []string
	n     int // bytes in parts
}

// earlier is what tool received before, or nil.
func (h *sinkHistory) earlier(tool string) *engine.Earlier {
	h.mu.Lock()
	defer h.mu.Unlock()
	el, ok := h.tools[tool]
	if !ok {
		return nil
	}
	t := el.Value.(*sinkTrail)
	return &engine.Earlier{Parts: slices.Clone(t.parts)}
}

// add keeps the end of what a call that reached tool carried.
func (h *sinkHistory) add(tool string, args json.RawMessage) {
	payload := engine.SinkPayload(args)
	if payload == "" {
		return
	}
	if len(payload) > sinkTail {
		payload = payload[len(payload)-sinkTail:]
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.tools == nil {
		h.tools = make(map[string]*list.Element)
	}
	el, ok := h.tools[tool]
	if ok {
		h.lru.MoveToFront(el)
	} else {
		if h.lru.Len() >= maxSinkTools {
			old := h.lru.Back()
			delete(h.tools, old.Value.(*sinkTrail).tool)
			h.lru.Remove(old)
		}
		el = h.lru.PushFront(&sinkTrail{tool: tool})
		h.tools[tool] = el
	}
	t := el.Value.(*sinkTrail)
	t.parts = append(t.parts, payload)
	t.n += len(payload)
	for t.n > sinkTail {
		over := t.n - sinkTail
		if over >= len(t.parts[0]) {
			t.n -= len(t.parts[0])
			t.parts = t.parts[1:]
			continue
		}
		t.parts[0] = t.parts[0][over:]
		t.n -= over
	}
}

// size is how many tools and bytes the history holds.
func (h *sinkHistory) size() (tools, bytes int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for el := h.lru.Front(); el != nil; el = el.Next() {
		bytes += el.Value.(*sinkTrail).n
	}
	return h.lru.Len(), bytes
}

// isSink reports a call the flow checks judge as a sink.
func isSink(l engine.ToolLabels) bool { return l.Labels.Has(flow.Sink) }
