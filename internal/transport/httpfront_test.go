package transport

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weir-sec/weir/internal/jsonrpc"
)

// echoRelay stands in for a relay behind the front: it answers each
// request with what it saw (its id as the front rewrote it, the method and
// the session), sends a progress notification first when the request has
// a progress token, holds "slow" until release is closed, answers "fail"
// with method-not-found, and on the notification "notify" sends one
// message that belongs to no request.
type echoRelay struct {
	release chan struct{}
	mu      sync.Mutex
	seen    []string // every message the relay read
	infos   []FrontSession
	// failInit makes initialize fail, as an upstream that refuses it.
	failInit bool
}

func (e *echoRelay) serve(ctx context.Context, s FrontSession, c Transport) {
	e.mu.Lock()
	e.infos = append(e.infos, s)
	e.mu.Unlock()
	for {
		line, err := c.Read(ctx)
		if err != nil {
			return
		}
		line = append([]byte(nil), line...)
		e.mu.Lock()
		e.seen = append(e.seen, string(line))
		e.mu.Unlock()
		m, err := jsonrpc.Parse(line)
		if err != nil {
			continue
		}
		req, ok := m.(*jsonrpc.Request)
		if !ok {
			continue
		}
		if !req.ID.IsValid() {
			if req.Method == "notify" {
				_ = c.Write(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hello"}}`))
			}
			continue
		}
		id := string(jsonrpc.EncodeID(req.ID))
		go func() {
			var p struct {
				Meta struct {
					Token json.RawMessage `json:"progressToken"`
				} `json:"_meta"`
			}
			_ = json.Unmarshal(req.Params, &p)
			if len(p.Meta.Token) > 0 {
				_ = c.Write(ctx, []byte(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":1}}`, p.Meta.Token)))
			}
			switch req.Method {
			case "slow":
				<-e.release
			case "fail":
				_ = c.Write(ctx, jsonrpc.ErrorResponse([]byte(id), jsonrpc.CodeMethodNotFound, "no such method"))
				return
			case "initialize":
				e.mu.Lock()
				fail := e.failInit
				e.mu.Unlock()
				if fail {
					_ = c.Write(ctx, jsonrpc.ErrorResponse([]byte(id), jsonrpc.CodeInvalidParams, "unsupported protocol version"))
					return
				}
				_ = c.Write(ctx, []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"echo","version":"1"}}}`, id)))
				return
			}
			_ = c.Write(ctx, []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"relayID":%s,"method":%q,"taint":%q}}`, id, id, req.Method, s.Taint)))
		}()
	}
}

type frontFixture struct {
	t     *testing.T
	url   string
	relay *echoRelay
	front *Front
}

// newFrontFixture serves a Front on loopback; the X-Test-Principal header
// plays the authenticating handler.
func newFrontFixture(t *testing.T, opts FrontOptions) *frontFixture {
	e := &echoRelay{release: make(chan struct{})}
	opts.Serve = e.serve
	f := NewFront(opts)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.ServeHTTP(w, r.WithContext(WithPrincipal(r.Context(), r.Header.Get("X-Test-Principal"))))
	}))
	t.Cleanup(func() {
		select {
		case <-e.release:
		default:
			close(e.release)
		}
		srv.Close()
		f.Close()
	})
	return &frontFixture{t: t, url: srv.URL, relay: e, front: f}
}

func (f *frontFixture) post(body string, hdr ...string) *http.Response {
	f.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, f.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// messages reads the messages of a response: the JSON body, or the SSE
// events that carry data.
func messages(t *testing.T, resp *http.Response) []map[string]any {
	t.Helper()
	var out []map[string]any
	if mediaType(resp.Header.Get("Content-Type")) == "application/json" {
		var m map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
			t.Fatal(err)
		}
		return append(out, m)
	}
	r := newSSEReader(resp.Body, 1<<20)
	for {
		ev, err := r.Next()
		if err != nil {
			return out
		}
		if len(ev.Data) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(ev.Data, &m); err != nil {
			t.Fatalf("event data %q: %v", ev.Data, err)
		}
		out = append(out, m)
	}
}

const initBody = `{"jsonrpc":"2.0","id":"init-1","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

func (f *frontFixture) open(principal string) string {
	f.t.Helper()
	resp := f.post(initBody, "X-Test-Principal", principal)
	if resp.StatusCode != 200 {
		f.t.Fatalf("initialize: HTTP %d", resp.StatusCode)
	}
	sid := resp.Header.Get(HeaderSession)
	if len(sid) < 20 {
		f.t.Fatalf("session id %q is too short to be unguessable", sid)
	}
	msgs := messages(f.t, resp)
	if len(msgs) != 1 || msgs[0]["id"] != "init-1" {
		f.t.Fatalf("initialize answer = %v, want one answer under the client's id", msgs)
	}
	return sid
}

func TestFrontSessionLifecycle(t *testing.T) {
	f := newFrontFixture(t, FrontOptions{})
	sid := f.open("")
	resp := f.post(`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`, HeaderSession, sid)
	msgs := messages(t, resp)
	if len(msgs) != 1 || msgs[0]["id"] != float64(7) {
		t.Fatalf("answer = %v, want id 7 as the client wrote it", msgs)
	}
	res := msgs[0]["result"].(map[string]any)
	if res["taint"] != "http:"+sid {
		t.Errorf("taint session = %v, want http:%s (no Weir-Session, no default)", res["taint"], sid)
	}
	// Notifications and responses are accepted with 202.
	if r := f.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, HeaderSession, sid); r.StatusCode != http.StatusAccepted {
		t.Errorf("notification: HTTP %d, want 202", r.StatusCode)
	}
	// Without a session, a 2025 request is refused; an unknown one is 404.
	if r := f.post(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); r.StatusCode != http.StatusBadRequest {
		t.Errorf("no session: HTTP %d, want 400", r.StatusCode)
	}
	if r := f.post(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, HeaderSession, "nope"); r.StatusCode != http.StatusNotFound {
		t.Errorf("unknown session: HTTP %d, want 404", r.StatusCode)
	}
	// DELETE ends it.
	req, _ := http.NewRequest(http.MethodDelete, f.url, nil)
	req.Header.Set(HeaderSession, sid)
	dr, err := http.DefaultClient.Do(req)
	if err != nil || dr.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %v %v", dr, err)
	}
	dr.Body.Close()
	if r := f.post(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, HeaderSession, sid); r.StatusCode != http.StatusNotFound {
		t.Errorf("after DELETE: HTTP %d, want 404", r.StatusCode)
	}
}

// A session belongs to the principal that opened it: another gets 404, as
// for a session that does not exist.
func TestFrontSessionBoundToPrincipal(t *testing.T) {
	f := newFrontFixture(t, FrontOptions{})
	sid := f.open("alice")
	if r := f.post(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, HeaderSession, sid, "X-Test-Principal", "bob"); r.StatusCode != http.StatusNotFound {
		t.Errorf("bob with alice's session: HTTP %d, want 404", r.StatusCode)
	}
	if r := f.post(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, HeaderSession, sid, "X-Test-Principal", "alice"); r.StatusCode != http.StatusOK {
		t.Errorf("alice: HTTP %d, want 200", r.StatusCode)
	}
	// Named taint sessions are namespaced by principal.
	f.post(initBody, "X-Test-Principal", "alice", HeaderWeirSession, "shared")
	f.post(initBody, "X-Test-Principal", "", HeaderWeirSession, "shared")
	f.relay.mu.Lock()
	defer f.relay.mu.Unlock()
	var taints []string
	for _, s := range f.relay.infos {
		taints = append(taints, s.Taint)
	}
	got := strings.Join(taints, " ")
	if !strings.Contains(got, "alice/env:shared") || !strings.Contains(got, " env:shared") {
		t.Errorf("taint sessions %q: want alice/env:shared and env:shared", got)
	}
}

// Two requests in flight under the same client id each get their own
// answer: the front gives the relay ids of its own.
func TestFrontDuplicateIDs(t *testing.T) {
	f := newFrontFixture(t, FrontOptions{})
	sid := f.open("")
	var wg sync.WaitGroup
	relayIDs := make([]float64, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			msgs := messages(t, f.post(`{"jsonrpc":"2.0","id":1,"method":"same"}`, HeaderSession, sid))
			if len(msgs) != 1 || msgs[0]["id"] != float64(1) {
				t.Errorf("answer %d = %v", i, msgs)
				return
			}
			relayIDs[i] = msgs[0]["result"].(map[string]any)["relayID"].(float64)
		}()
	}
	wg.Wait()
	if relayIDs[0] == relayIDs[1] {
		t.Errorf("both requests reached the relay under id %v", relayIDs[0])
	}
}

// Progress goes on the stream of its request, before the answer.
func TestFrontProgressOnRequestStream(t *testing.T) {
	f := newFrontFixture(t, FrontOptions{})
	sid := f.open("")
	msgs := messages(t, f.post(`{"jsonrpc":"2.0","id":3,"method":"work","params":{"_meta":{"progressToken":"tok"}}}`, HeaderSession, sid))
	if len(msgs) != 2 || msgs[0]["method"] != "notifications/progress" || msgs[1]["id"] != float64(3) {
		t.Fatalf("stream = %v, want progress then the answer", msgs)
	}
}

// A stream broken before its answer resumes with GET and Last-Event-ID.
func TestFrontResume(t *testing.T) {
	f := newFrontFixture(t, FrontOptions{})
	sid := f.open("")
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.url, strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"slow"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(HeaderSession, sid)
	req.Header.Set(HeaderProtocol, "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	prime, err := newSSEReader(resp.Body, 1<<20).Next()
	if err != nil || prime.ID == "" || len(prime.Data) != 0 {
		t.Fatalf("first event = %+v, %v; want a priming event with an id", prime, err)
	}
	cancel() // the client goes away; this is not a cancellation
	resp.Body.Close()
	close(f.relay.release)

	get, _ := http.NewRequest(http.MethodGet, f.url, nil)
	get.Header.Set("Accept", "text/event-stream")
	get.Header.Set(HeaderSession, sid)
	get.Header.Set(HeaderLastEventID, prime.ID)
	gr, err := http.DefaultClient.Do(get)
	if err != nil || gr.StatusCode != 200 {
		t.Fatalf("resume: %v %v", gr, err)
	}
	defer gr.Body.Close()
	msgs := messages(t, gr)
	if len(msgs) != 1 || msgs[0]["id"] != float64(9) {
		t.Fatalf("resumed stream = %v, want the answer to 9", msgs)
	}
	for _, s := range f.relay.seen {
		if strings.Contains(s, "notifications/cancelled") {
			t.Errorf("a 2025 client's disconnection was taken as a cancellation: %s", s)
		}
	}
}

// What belongs to no request goes to the GET stream, waiting there until
// one opens.
func TestFrontStandaloneStream(t *testing.T) {
	f := newFrontFixture(t, FrontOptions{})
	sid := f.open("")
	if r := f.post(`{"jsonrpc":"2.0","method":"notify"}`, HeaderSession, sid); r.StatusCode != 202 {
		t.Fatalf("notify: %d", r.StatusCode)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	get, _ := http.NewRequestWithContext(ctx, http.MethodGet, f.url, nil)
	get.Header.Set("Accept", "text/event-stream")
	get.Header.Set(HeaderSession, sid)
	gr, err := http.DefaultClient.Do(get)
	if err != nil || gr.StatusCode != 200 {
		t.Fatalf("GET: %v %v", gr, err)
	}
	defer gr.Body.Close()
	ev, err := newSSEReader(gr.Body, 1<<20).Next()
	if err != nil || !strings.Contains(string(ev.Data), "notifications/message") {
		t.Fatalf("GET stream event = %q, %v", ev.Data, err)
	}
	// One GET stream per session.
	get2, _ := http.NewRequest(http.MethodGet, f.url, nil)
	get2.Header.Set("Accept", "text/event-stream")
	get2.Header.Set(HeaderSession, sid)
	gr2, err := http.DefaultClient.Do(get2)
	if err != nil {
		t.Fatal(err)
	}
	gr2.Body.Close()
	if gr2.StatusCode != http.StatusConflict {
		t.Errorf("second GET: HTTP %d, want 409", gr2.StatusCode)
	}
}

func modernBody(id int, method, extra string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{%s"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`, id, method, extra)
}

func TestFrontStateless(t *testing.T) {
	f := newFrontFixture(t, FrontOptions{})
	h := []string{HeaderProtocol, Stateless, HeaderMethod, "tools/list"}

	// No session named: refused, not guessed.
	r := f.post(modernBody(1, "tools/list", ""), h...)
	msgs := messages(t, r)
	if r.StatusCode != 400 || !strings.Contains(fmt.Sprint(msgs), "Weir-Session") || msgs[0]["id"] != float64(1) {
		t.Errorf("no Weir-Session: HTTP %d %v", r.StatusCode, msgs)
	}
	h = append(h, HeaderWeirSession, "s1")
	msgs = messages(t, f.post(modernBody(2, "tools/list", ""), h...))
	if len(msgs) != 1 || msgs[0]["result"].(map[string]any)["taint"] != "env:s1" {
		t.Fatalf("stateless answer = %v", msgs)
	}
	// Headers that disagree with the body: -32020 under 400.
	for name, hdr := range map[string][]string{
		"method":  {HeaderProtocol, Stateless, HeaderMethod, "tools/call", HeaderWeirSession, "s1"},
		"missing": {HeaderProtocol, Stateless, HeaderWeirSession, "s1"},
		"version": {HeaderProtocol, "2099-01-01", HeaderMethod, "tools/list", HeaderWeirSession, "s1"},
	} {
		r := f.post(modernBody(3, "tools/list", ""), hdr...)
		msgs := messages(t, r)
		code := msgs[0]["error"].(map[string]any)["code"]
		if r.StatusCode != 400 || code != float64(CodeHeaderMismatch) || msgs[0]["id"] != float64(3) {
			t.Errorf("%s: HTTP %d, %v", name, r.StatusCode, msgs)
		}
	}
	// Mcp-Name must match the tool.
	call := modernBody(4, "tools/call", `"name":"echo","arguments":{},`)
	if r := f.post(call, HeaderProtocol, Stateless, HeaderMethod, "tools/call", HeaderName, "other", HeaderWeirSession, "s1"); r.StatusCode != 400 {
		t.Errorf("Mcp-Name mismatch: HTTP %d", r.StatusCode)
	}
	if r := f.post(call, HeaderProtocol, Stateless, HeaderMethod, "tools/call", HeaderName, "echo", HeaderWeirSession, "s1"); r.StatusCode != 200 {
		t.Errorf("Mcp-Name match: HTTP %d", r.StatusCode)
	}
	// A protocol error from behind the front keeps its 2026-07-28 status.
	r = f.post(modernBody(5, "fail", ""), HeaderProtocol, Stateless, HeaderMethod, "fail", HeaderWeirSession, "s1")
	if r.StatusCode != 404 || mediaType(r.Header.Get("Content-Type")) != "application/json" {
		t.Errorf("method not found: HTTP %d %s, want 404 JSON", r.StatusCode, r.Header.Get("Content-Type"))
	}
	// All of one taint session's stateless requests share one relay.
	f.relay.mu.Lock()
	n := 0
	for _, s := range f.relay.infos {
		if s.HTTP == "" {
			n++
		}
	}
	f.relay.mu.Unlock()
	if n != 1 {
		t.Errorf("%d stateless relays for one taint session, want 1", n)
	}
}

func TestFrontBadRequests(t *testing.T) {
	f := newFrontFixture(t, FrontOptions{MaxMessage: 1024})
	sid := f.open("")
	cases := []struct {
		name string
		body string
		hdr  []string
		want int
	}{
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, []string{HeaderSession, sid}, 400},
		{"not JSON", `{"jsonrpc":`, []string{HeaderSession, sid}, 400},
		{"duplicate member", `{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`, []string{HeaderSession, sid}, 400},
		{"too large", `{"jsonrpc":"2.0","id":1,"method":"x","params":{"p":"` + strings.Repeat("a", 2000) + `"}}`, []string{HeaderSession, sid}, 413},
		{"content type", `{}`, []string{"Content-Type", "text/plain"}, 415},
		{"accept", `{}`, []string{"Accept", "application/json"}, 406},
		{"unknown version", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, []string{HeaderSession, sid, HeaderProtocol, "1999-01-01"}, 400},
		{"POST with Last-Event-ID", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, []string{HeaderSession, sid, HeaderLastEventID, "1_1"}, 400},
		{"initialize in a session", initBody, []string{HeaderSession, sid}, 400},
	}
	for _, c := range cases {
		if r := f.post(c.body, c.hdr...); r.StatusCode != c.want {
			b, _ := io.ReadAll(r.Body)
			t.Errorf("%s: HTTP %d (%s), want %d", c.name, r.StatusCode, b, c.want)
		}
	}
	// The session still works.
	if msgs := messages(t, f.post(`{"jsonrpc":"2.0","id":8,"method":"ok"}`, HeaderSession, sid)); len(msgs) != 1 {
		t.Errorf("after bad requests: %v", msgs)
	}
}

// A client's cancellation names the request by the client's id; the
// relay gets it under the front's.
func TestFrontCancelMapsID(t *testing.T) {
	f := newFrontFixture(t, FrontOptions{})
	sid := f.open("")
	done := make(chan struct{})
	go func() {
		defer close(done)
		resp := f.post(`{"jsonrpc":"2.0","id":"mine","method":"slow"}`, HeaderSession, sid)
		io.Copy(io.Discard, bufio.NewReader(resp.Body))
	}()
	deadline := time.Now().Add(5 * time.Second)
	var relayID string
	for relayID == "" && time.Now().Before(deadline) {
		f.relay.mu.Lock()
		for _, s := range f.relay.seen {
			if strings.Contains(s, `"slow"`) {
				m, _ := jsonrpc.Parse([]byte(s))
				relayID = string(jsonrpc.EncodeID(m.(*jsonrpc.Request).ID))
			}
		}
		f.relay.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
	f.post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"mine"}}`, HeaderSession, sid)
	// The front has queued it (202); the relay reads it in its own time.
	var got string
	for deadline := time.Now().Add(5 * time.Second); got == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		f.relay.mu.Lock()
		for _, s := range f.relay.seen {
			if strings.Contains(s, "notifications/cancelled") {
				got = s
			}
		}
		f.relay.mu.Unlock()
	}
	close(f.relay.release)
	<-done
	if !strings.Contains(got, `"requestId":`+relayID) {
		t.Errorf("relay got %q, want a cancellation with requestId %s", got, relayID)
	}
}

// Whatever a client POSTs, the front answers with a status and does not
// panic or hang.
func FuzzFrontPost(f *testing.F) {
	f.Add([]byte(initBody), "")
	f.Add([]byte(modernBody(1, "tools/list", "")), Stateless)
	f.Add([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{"a":1}}}`), "")
	f.Add([]byte(`[1,2]`), "2025-11-25")
	e := &echoRelay{release: make(chan struct{})}
	close(e.release)
	front := NewFront(FrontOptions{Serve: e.serve, MaxMessage: 4096, DefaultSession: "fuzz"})
	defer front.Close()
	f.Fuzz(func(t *testing.T, body []byte, version string) {
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(string(body)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if version != "" {
			req.Header.Set(HeaderProtocol, version)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		w := httptest.NewRecorder()
		front.ServeHTTP(w, req.WithContext(ctx))
		if w.Code < 200 || w.Code > 599 {
			t.Fatalf("status %d", w.Code)
		}
	})
}

// Concurrent first requests of one taint session open one relay.
func TestFrontStatelessConcurrentOpen(t *testing.T) {
	f := newFrontFixture(t, FrontOptions{})
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := f.post(modernBody(i, "tools/list", ""), HeaderProtocol, Stateless, HeaderMethod, "tools/list", HeaderWeirSession, "race")
			if r.StatusCode != 200 {
				t.Errorf("request %d: HTTP %d", i, r.StatusCode)
			}
		}()
	}
	wg.Wait()
	f.relay.mu.Lock()
	defer f.relay.mu.Unlock()
	if len(f.relay.infos) != 1 {
		t.Errorf("%d relays for one taint session, want 1", len(f.relay.infos))
	}
	if n := f.front.Sessions.Load(); n != 1 {
		t.Errorf("%d sessions counted, want 1", n)
	}
}
