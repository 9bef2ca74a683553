package relay

import (
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/weir-sec/weir/internal/engine"
	"github.com/weir-sec/weir/internal/jsonrpc"
)

// The relay owns the request-id space toward the server. Every client
// request is forwarded under an id of Weir's own, 1, 2, 3..., and the
// answer is sent back under the client's id exactly as the client wrote
// it. So two client requests that share an id stay apart, a second answer
// to one request is not relayed, an answer to an id Weir never sent is
// dropped and logged, and an answer is always matched to the request it
// answers — whatever ids the client chooses. The ids the server chooses
// for its own requests (roots/list, sampling, elicitation) pass through
// unchanged: each relay has one client.

// pending is a client request forwarded to the server and not yet answered.
type pending struct {
	// clientID is the id exactly as the client wrote it; clientKey the
	// same id canonical (numbers by value), for the client's cancellations.
	clientID  []byte
	clientKey string
	method    string
	tool      string
	labels    engine.ToolLabels
	modern    bool // made under protocol 2026-07-28 or later
	timer     *time.Timer

	// For an escalation: the call's _meta declares elicitation (2026-07-28),
	// its progress token (raw JSON, nil if none), and what a retry brought
	// back for Weir's question.
	elicits  bool
	progress []byte
	retry    *retry

	// scan, set by onResult, starts the result's scan; fromServer runs it
	// once the answer is written (or could not be), so that the scan does
	// not compete with the write for the proxy's threads.
	scan func()
}

// idTable maps Weir's ids toward the server to the requests they carry.
type idTable struct {
	mu       sync.Mutex
	next     int64
	waiting  map[int64]*pending
	byClient map[string][]int64 // clientKey → Weir's ids in flight
	gone     error              // set once the server side has ended
}

func newIDTable() *idTable {
	return &idTable{waiting: map[int64]*pending{}, byClient: map[string][]int64{}}
}

// add assigns p an id of Weir's own, and starts the timer that calls
// expire with that id if no answer comes within timeout (none when timeout
// is not positive). It returns the server's end as the error when the
// server side is gone.
func (t *idTable) add(p *pending, timeout time.Duration, expire func(int64)) (int64, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.gone != nil {
		return 0, t.gone
	}
	t.next++
	p.timer = requestTimer(timeout, t.next, expire)
	t.waiting[t.next] = p
	t.byClient[p.clientKey] = append(t.byClient[p.clientKey], t.next)
	return t.next, nil
}

// take removes and returns the request waiting under id, or nil: every
// request is taken once, so it is answered once.
func (t *idTable) take(id int64) *pending {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.takeLocked(id)
}

func (t *idTable) takeLocked(id int64) *pending {
	p := t.waiting[id]
	if p == nil {
		return nil
	}
	delete(t.waiting, id)
	ids := t.byClient[p.clientKey]
	for i, x := range ids {
		if x == id {
			ids = append(ids[:i], ids[i+1:]...)
			break
		}
	}
	if len(ids) == 0 {
		delete(t.byClient, p.clientKey)
	} else {
		t.byClient[p.clientKey] = ids
	}
	if p.timer != nil {
		p.timer.Stop()
	}
	return p
}

// peek returns the request in flight under Weir's id, leaving it there.
func (t *idTable) peek(id int64) *pending {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.waiting[id]
}

// only returns the one request in flight, if exactly one is.
func (t *idTable) only() (int64, *pending) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.waiting) != 1 {
		return 0, nil
	}
	for id, p := range t.waiting {
		return id, p
	}
	return 0, nil
}

// latest returns Weir's id of the newest request in flight under the
// client's id key.
func (t *idTable) latest(clientKey string) (int64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ids := t.byClient[clientKey]
	if len(ids) == 0 {
		return 0, false
	}
	return ids[len(ids)-1], true
}

// end marks the server side gone and returns every request still waiting,
// oldest first.
func (t *idTable) end(cause error) []*pending {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.gone = cause
	var out []*pending
	for _, id := range slices.Sorted(maps.Keys(t.waiting)) {
		out = append(out, t.takeLocked(id))
	}
	return out
}

// weirID reads the id of a server's answer as one of Weir's: an integer,
// or the same integer as a decimal string (the TypeScript SDK takes "5"
// for 5, so a server may answer that way).
func weirID(id jsonrpc.ID) (int64, bool) {
	switch v := id.Raw().(type) {
	case int64:
		return v, v > 0
	case string:
		n, err := strconv.ParseInt(v, 10, 64)
		return n, err == nil && n > 0 && strconv.FormatInt(n, 10) == v
	}
	return 0, false
}

// rawWeirID is weirID for an id as raw JSON (from a message that could not
// be parsed whole).
func rawWeirID(raw []byte) (int64, bool) {
	id, err := jsonrpc.ParseID(raw)
	if raw == nil || err != nil {
		return 0, false
	}
	return weirID(id)
}

// clientKey is an id's canonical form: two ids a client would take for the
// same request get the same key.
func clientKey(id jsonrpc.ID) string {
	switch v := id.Raw().(type) {
	case string:
		return "s" + v
	case int64:
		return "n" + strconv.FormatInt(v, 10)
	}
	return ""
}
