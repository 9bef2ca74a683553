package transport

import (
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// replicaPair is two fronts with one install key, as two replicas of a
// gateway are.
func replicaPair(t *testing.T) (a, b *frontFixture) {
	key := make([]byte, 32)
	rand.Read(key)
	return newFrontFixture(t, FrontOptions{Key: key}), newFrontFixture(t, FrontOptions{Key: key})
}

// initParams is initBody's params as the relay reads them.
const initParams = `"params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`

// TestFrontResumesSealedSession: a session opened on replica A is served
// by replica B, which has never seen it: B initialises its relay with the
// client's own initialize parameters, then serves the request under the
// same taint session. Concurrent first requests on B resume it once.
func TestFrontResumesSealedSession(t *testing.T) {
	a, b := replicaPair(t)
	sid := a.open("alice")
	if !strings.HasPrefix(sid, sealedPrefix) {
		t.Fatalf("a front with a key minted %q, not a sealed id", sid)
	}
	resp := a.post(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, HeaderSession, sid, "X-Test-Principal", "alice")
	taintA := messages(t, resp)[0]["result"].(map[string]any)["taint"]

	var wg sync.WaitGroup
	taints := make([]any, 4)
	for i := range taints {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp := b.post(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, HeaderSession, sid, "X-Test-Principal", "alice")
			if resp.StatusCode != http.StatusOK {
				t.Errorf("replica B: HTTP %d, want 200", resp.StatusCode)
				return
			}
			msgs := messages(t, resp)
			if len(msgs) != 1 || msgs[0]["id"] != float64(2) {
				t.Errorf("replica B's answer %v, want one answer under the client's id", msgs)
				return
			}
			taints[i] = msgs[0]["result"].(map[string]any)["taint"]
		}()
	}
	wg.Wait()
	for _, tb := range taints {
		if tb != taintA {
			t.Errorf("taint session on B %v, on A %v: a resumed session must decide under the same one", tb, taintA)
		}
	}
	b.relay.mu.Lock()
	seen := append([]string(nil), b.relay.seen...)
	infos := append([]FrontSession(nil), b.relay.infos...)
	b.relay.mu.Unlock()
	if len(infos) != 1 || infos[0].HTTP != sid || infos[0].Principal != "alice" {
		t.Fatalf("replica B opened %d relays (%+v), want one for alice's session", len(infos), infos)
	}
	if len(seen) != 6 || !strings.Contains(seen[0], `"method":"initialize"`) || !strings.Contains(seen[0], initParams) ||
		!strings.Contains(seen[1], "notifications/initialized") {
		t.Errorf("replica B's relay read %q: want initialize with the client's parameters, notifications/initialized, then the 4 requests", seen)
	}
	b.front.mu.Lock()
	c := b.front.sessions[sid]
	b.front.mu.Unlock()
	if v := c.version(); v != "2025-11-25" {
		t.Errorf("resumed session's protocol version %q", v)
	}
}

// TestFrontRefusesForeignSessionIDs: an id is resumed only for the
// principal it was minted for, only by a front with the same key, only
// whole, and only within SessionMaxAge; anything else is a session that
// does not exist.
func TestFrontRefusesForeignSessionIDs(t *testing.T) {
	a, b := replicaPair(t)
	other := newFrontFixture(t, FrontOptions{Key: []byte("another install's key, 32 bytes!")})
	unkeyed := newFrontFixture(t, FrontOptions{})
	sid := a.open("alice")
	raw, _ := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(sid, sealedPrefix))
	raw[len(raw)/2] ^= 1
	flipped := sealedPrefix + base64.RawURLEncoding.EncodeToString(raw)
	for _, tc := range []struct {
		name           string
		f              *frontFixture
		sid, principal string
	}{
		{"another principal", b, sid, "bob"},
		{"no principal", b, sid, ""},
		{"another key", other, sid, "alice"},
		{"a front without a key", unkeyed, sid, "alice"},
		{"a flipped bit", b, flipped, "alice"},
		{"cut short", b, sid[:len(sid)-4], "alice"},
		{"a random id", b, sealedPrefix + rand.Text(), "alice"},
	} {
		resp := tc.f.post(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, HeaderSession, tc.sid, "X-Test-Principal", tc.principal)
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s: HTTP %d, want 404", tc.name, resp.StatusCode)
		}
	}
	if len(b.relay.infos)+len(other.relay.infos)+len(unkeyed.relay.infos) != 0 {
		t.Errorf("a refused id opened a relay")
	}
	if _, ok := b.front.openID(sid, "alice", time.Now().Add(SessionMaxAge+time.Hour)); ok {
		t.Error("an id older than SessionMaxAge was resumed")
	}
	if _, ok := b.front.openID(sid, "alice", time.Now().Add(SessionMaxAge-time.Hour)); !ok {
		t.Error("an id younger than SessionMaxAge was refused")
	}
}

// TestFrontResumeFailsClosed: when the relay's upstream refuses the
// resumed session's initialize, the request is answered 503 and nothing of
// it reaches the relay; a DELETE of a sealed id another replica serves is
// answered 204.
func TestFrontResumeFailsClosed(t *testing.T) {
	a, b := replicaPair(t)
	sid := a.open("")
	b.relay.mu.Lock()
	b.relay.failInit = true
	b.relay.mu.Unlock()
	resp := b.post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"send"}}`, HeaderSession, sid)
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("upstream refused initialize: HTTP %d, want 503", resp.StatusCode)
	}
	b.relay.mu.Lock()
	for _, m := range b.relay.seen {
		if strings.Contains(m, "tools/call") {
			t.Errorf("the relay read the call of a session that did not resume: %s", m)
		}
	}
	b.relay.mu.Unlock()
	if b.front.Sessions.Load() != 0 {
		t.Errorf("%d sessions open on B after a failed resume", b.front.Sessions.Load())
	}
	req, _ := http.NewRequest(http.MethodDelete, b.url, nil)
	req.Header.Set(HeaderSession, sid)
	dr, err := http.DefaultClient.Do(req)
	if err != nil || dr.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE on the replica that does not serve it: %v %v", dr, err)
	}
	dr.Body.Close()
}
