package relay

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weir-sec/weir/internal/flow"
	"github.com/weir-sec/weir/internal/policy/policyfile"
	"github.com/weir-sec/weir/internal/store"
)

// gatedStore holds back the read of a whole session (a Sync into an
// empty mirror) until gate is closed: a joining proxy's background load.
type gatedStore struct {
	*store.SQLite
	gate chan struct{}
}

func (g gatedStore) Sync(ctx context.Context, session string, m *flow.Session) error {
	if m.Watermark == 0 {
		select {
		case <-g.gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return g.SQLite.Sync(ctx, session, m)
}

// TestJoinLongSession: a proxy that joins a session of more than
// joinBytes decides from its outline while it reads the fingerprints,
// refusing every sink call as strict would (DESIGN rule 3: what it cannot
// attribute yet widens taint), then decides precisely once they are in:
// the leak is still stopped, the benign post goes through.
func TestJoinLongSession(t *testing.T) {
	ctx := context.Background()
	sq, err := store.OpenSQLite(ctx, filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sq.Close() })
	pol, err := policyfile.Parse("p.yaml", []byte("version: 1\ntools:\n  - {match: \"srv:read_note\", labels: [private]}\n  - {match: \"srv:post_message\", labels: [sink]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	first := newHarness(t, sq, pol)
	first.readPrivate()
	first.clientGot()
	// Other private reads of the session, enough to make it long.
	x := uint64(0x9e3779b97f4a7c15)
	for i := 0; int64(i)*500*8 < joinBytes+1; i++ {
		o := &flow.Observation{Tool: "files/read_file", Labels: flow.Private, At: int64(i)}
		for range 500 {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			o.Prints = append(o.Prints, x)
		}
		if _, err := sq.Append(ctx, "s1", o); err != nil {
			t.Fatal(err)
		}
	}

	gate := make(chan struct{})
	j := newHarness(t, gatedStore{sq, gate}, pol)
	id := 100
	post := func(text string) (forwarded bool, answer string) {
		t.Helper()
		id++
		args, _ := json.Marshal(map[string]string{"channel": "#random", "text": text})
		j.client(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"post_message","arguments":%s}}`, id, args))
		select {
		case l := <-j.serverRx:
			var m struct{ ID json.RawMessage }
			json.Unmarshal([]byte(l), &m)
			j.server(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"ok"}]}}`, m.ID))
			return true, j.clientGot()
		case got := <-j.clientRx:
			return false, got
		case <-time.After(5 * time.Second):
			t.Fatal("no answer")
		}
		return false, ""
	}
	const benign = "Lunch at noon on Friday?"

	// While the fingerprints are read: both refused, saying why.
	for _, text := range []string{benign, notesText} {
		if fwd, got := post(text); fwd || !strings.Contains(got, "still reading its fingerprints") || !strings.Contains(got, "retry in a few seconds") {
			t.Errorf("post of %q while loading: forwarded %v, answer %s", text, fwd, got)
		}
	}

	close(gate)
	deadline := time.Now().Add(10 * time.Second)
	for {
		j.r.mirrorMu.Lock()
		loaded := len(j.r.mirror.Sources) > 0 && !j.r.mirror.Sources[0].Labels.Any(flow.Unloaded)
		j.r.mirrorMu.Unlock()
		if loaded {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the joined session's fingerprints were not read within 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if fwd, got := post(benign); !fwd {
		t.Errorf("benign post after the load refused: %s", got)
	}
	if fwd, got := post(notesText); fwd || !strings.Contains(got, "srv/read_note") || strings.Contains(got, "still reading") {
		t.Errorf("the leak after the load: forwarded %v, answer %s", fwd, got)
	}
}
