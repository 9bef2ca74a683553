package store

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/weir-sec/weir/internal/flow"
	"github.com/weir-sec/weir/internal/pin"
)

// Memory is a state store held in memory: the same operations as SQLite,
// for a process that decides alone and keeps nothing (`weir policy check`,
// which dry-runs one decision against a session described in a file). It
// is safe for concurrent use.
type Memory struct {
	mu    sync.Mutex
	seq   int64
	obs   map[string][]memRow           // session → rows in sequence order
	rates map[[2]string][]int64         // (session, key) → event times, ms
	pins  map[string]map[string]pin.Pin // identity → tool → pin
	appr  *memApprovals
}

type memRow struct {
	seq int64
	o   *flow.Observation
}

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory {
	return &Memory{obs: map[string][]memRow{}, rates: map[[2]string][]int64{}, pins: map[string]map[string]pin.Pin{}}
}

// Append records an observation for session and returns its sequence
// number.
func (m *Memory) Append(_ context.Context, session string, o *flow.Observation) (int64, error) {
	if session == "" {
		return 0, fmt.Errorf("memory store: append: empty session key")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seq++
	m.obs[session] = append(m.obs[session], memRow{m.seq, o})
	return m.seq, nil
}

// Sync applies the session's observations above the mirror's watermark.
func (m *Memory) Sync(_ context.Context, session string, mirror *flow.Session) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range m.obs[session] {
		mirror.Apply(r.seq, r.o)
	}
	return nil
}

// Take counts one call against a limit of n calls per window, as
// [SQLite.Take] does: ok when fewer than n calls were let through in the
// window ending at now.
func (m *Memory) Take(_ context.Context, session, key string, n int, per time.Duration, now time.Time) (bool, time.Duration, error) {
	if session == "" || key == "" || n < 1 || per < time.Millisecond {
		return false, 0, fmt.Errorf("memory store: take %q: want a session, a key, n ≥ 1 and a window of at least 1ms", key)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	k := [2]string{session, key}
	at, from := now.UnixMilli(), now.UnixMilli()-per.Milliseconds()
	ev := slices.DeleteFunc(m.rates[k], func(t int64) bool { return t <= from })
	if len(ev) < n {
		m.rates[k] = append(ev, at)
		return true, 0, nil
	}
	m.rates[k] = ev
	return false, time.Duration(ev[len(ev)-n]-from) * time.Millisecond, nil
}

// Pins returns the pins of one server identity, by tool name.
func (m *Memory) Pins(_ context.Context, identity string) (map[string]pin.Pin, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.pins[identity]), nil
}

// AllPins returns every pin of server ("" for all), ordered by server,
// identity and tool.
func (m *Memory) AllPins(_ context.Context, server string) ([]pin.Pin, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []pin.Pin
	for _, tools := range m.pins {
		for _, p := range tools {
			if server == "" || p.Server == server {
				out = append(out, p)
			}
		}
	}
	slices.SortFunc(out, func(a, b pin.Pin) int {
		return cmp.Or(cmp.Compare(a.Server, b.Server), cmp.Compare(a.Identity, b.Identity), cmp.Compare(a.Tool, b.Tool))
	})
	return out, nil
}

// PutPin writes pins, replacing the one for each one's identity and tool.
func (m *Memory) PutPin(_ context.Context, ps ...pin.Pin) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range ps {
		if m.pins[p.Identity] == nil {
			m.pins[p.Identity] = map[string]pin.Pin{}
		}
		m.pins[p.Identity][p.Tool] = p
	}
	return nil
}
