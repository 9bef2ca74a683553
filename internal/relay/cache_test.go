package relay

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weir-sec/weir/internal/audit"
	"github.com/weir-sec/weir/internal/engine"
	"github.com/weir-sec/weir/internal/policy/policyfile"
	"github.com/weir-sec/weir/internal/recording"
	"github.com/weir-sec/weir/internal/store"
)

// TestListCacheDefs: a definition read again comes from the cache, one
// changed by a byte is read afresh, and a nil cache reads every time.
func TestListCacheDefs(t *testing.T) {
	cache := NewListCache()
	list := func(schema string) ([]engine.ToolDef, []engine.ToolDef) {
		t.Helper()
		tools, elems, err := engine.ReadToolList("mail", []byte(`{"tools":[{"name":"send","inputSchema":`+schema+`}]}`))
		if err != nil {
			t.Fatal(err)
		}
		var none *ListCache
		return []engine.ToolDef{cache.def("mail", tools[0], elems[0])}, []engine.ToolDef{none.def("mail", tools[0], elems[0])}
	}
	for _, tt := range []struct {
		schema string
		params []string
	}{
		{`{"type":"object","properties":{"to":{"type":"string"}}}`, []string{"to"}},
		{`{"type":"object","properties":{"to":{"type":"string"}}}`, []string{"to"}},
		{`{"type":"object","properties":{"to":{"type":"string"},"bcc":{"type":"string"}}}`, []string{"bcc", "to"}},
		{`{"type":"object","properties":{"to":{"type":"string"}}}`, []string{"to"}},
	} {
		cached, fresh := list(tt.schema)
		if !slices.Equal(cached[0].Params, tt.params) || !slices.Equal(fresh[0].Params, tt.params) {
			t.Errorf("%s: params %q (cached) %q (no cache), want %q", tt.schema, cached[0].Params, fresh[0].Params, tt.params)
		}
	}
	if len(cache.defs) != 2 {
		t.Errorf("%d definitions cached, want 2", len(cache.defs))
	}
}

// TestListRecordedOnChange: a tool list is recorded when it differs from
// the last one recorded or the policy changed, not on every listing:
// replay reads the latest definitions, which an unchanged list repeats.
func TestListRecordedOnChange(t *testing.T) {
	sq, err := store.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sq.Close() })
	log, err := audit.Open(filepath.Join(t.TempDir(), "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	var clock atomic.Int64
	clock.Store(time.Now().UnixMilli())
	x := newHarness(t, sq, nil, func(o *Options) {
		o.Audit, o.Recorder = log, sq
		o.Now = func() time.Time { return time.UnixMilli(clock.Load()) }
	})
	id := 0
	list := func(tools string) {
		t.Helper()
		id++
		x.client(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, id))
		x.serverGot()
		x.server(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"tools":[%s]}}`, id, tools))
		x.clientGot()
	}
	a := `{"name":"read_note","inputSchema":{"type":"object"}}`
	b := `{"name":"send_email","inputSchema":{"type":"object","properties":{"to":{"type":"string"}}}}`
	list(a)
	list(a)
	list(a + "," + b)
	list(a + "," + b)
	reloaded, err := policyfile.Preset("strict")
	if err != nil {
		t.Fatal(err)
	}
	x.r.SetPolicy(reloaded, nil)
	list(a + "," + b)
	list(a)
	list(a)
	clock.Add(listRecordEvery.Milliseconds())
	list(a)

	x.r.flushAudit()
	x.r.flushRecordings(true)
	var tools []int
	if err := sq.Records(context.Background(), 0, "s1", func(r store.Rec) error {
		if r.Kind == recording.KindList {
			var l recording.List
			if err := json.Unmarshal(r.Body, &l); err != nil {
				return err
			}
			tools = append(tools, len(l.Tools))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// The first list, the one that added a tool, the one under the
	// reloaded policy, the one that dropped a tool again, and that one
	// again an hour later (recordings are pruned by age).
	if want := []int{1, 2, 2, 1, 1}; !slices.Equal(tools, want) {
		t.Errorf("list recordings of %v tools, want %v", tools, want)
	}
}

// TestListMemo: a tool list with the same bytes as the last is answered
// as the last was without being decided again, until a pin changes —
// through another handle on the store, as `weir pins approve` does — or
// the policy does; then it is decided afresh.
func TestListMemo(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	sq, err := store.OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sq.Close() })
	x := newHarness(t, sq, nil, func(o *Options) { o.Identity = "srv" })
	id := 0
	list := func(tools string) string {
		t.Helper()
		id++
		x.client(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, id))
		x.serverGot()
		x.server(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"tools":[%s]}}`, id, tools))
		var m struct{ Result json.RawMessage }
		if err := json.Unmarshal([]byte(x.clientGot()), &m); err != nil {
			t.Fatal(err)
		}
		return string(m.Result)
	}
	decided := func() int {
		x.r.mu.Lock()
		defer x.r.mu.Unlock()
		return x.r.listsDecided
	}
	v1 := `{"name":"read_note","description":"Read a note.","inputSchema":{"type":"object"}}`
	v2 := `{"name":"read_note","description":"Read one note, by its name.","inputSchema":{"type":"object"}}`
	// A list that writes pins moves the pins version: the next is decided
	// again, and that one is kept.
	first := list(v1)
	for range 3 {
		if again := list(v1); again != first || decided() != 2 {
			t.Errorf("the same list again: decided %d times, want 2; answer %s, want %s", decided(), again, first)
		}
	}
	changed := list(v2)
	if strings.Contains(changed, "read_note") {
		t.Fatalf("a changed definition was listed: %s", changed)
	}
	for range 2 {
		if again := list(v2); again != changed || decided() != 4 {
			t.Errorf("the changed list again: decided %d times, want 4; answer %s", decided(), again)
		}
	}

	// `weir pins approve`, from another process.
	other, err := store.OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if n, err := other.ApprovePins(ctx, "srv", "", time.Now().UnixMilli()); err != nil || n != 1 {
		t.Fatalf("approve: %d, %v", n, err)
	}
	if got := list(v2); !strings.Contains(got, "read_note") || decided() != 5 {
		t.Errorf("after the approval: decided %d times, want 5; answer %s", decided(), got)
	}
	if list(v2); decided() != 5 {
		t.Errorf("the approved list again: decided %d times, want 5", decided())
	}

	// A policy reload decides afresh.
	pol, err := policyfile.Preset("strict")
	if err != nil {
		t.Fatal(err)
	}
	x.r.SetPolicy(pol, nil)
	if list(v2); decided() != 6 {
		t.Errorf("after a reload: decided %d times, want 6", decided())
	}
}
