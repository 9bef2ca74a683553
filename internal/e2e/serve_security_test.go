package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/weir-sec/weir/internal/gateway"
)

// The security properties of `weir serve`, each checked against the real
// weir binary on real loopback HTTP, in front of a real Streamable HTTP MCP
// server (remoteUpstream, built here with the go-sdk) that records every
// request it receives.

// servePolicy labels the remote server's tools, and the fake stdio server's
// for TestServeLeakAcrossServeAndRun, explicitly: the tests are about the
// gateway, not about the heuristic reader.
const servePolicy = "version: 1\ntools:\n" +
	"  - {match: \"remote:read_record\", labels: [private]}\n" +
	"  - {match: \"remote:send_message\", labels: [sink]}\n" +
	"  - {match: \"fake:note\", labels: [private]}\n" +
	"  - {match: \"fake:echo\", labels: [sink]}\n"

// The tenants' tokens (WEIR_TOKENS wants at least 16 characters).
const (
	aliceToken = "alice-token-7f3c9a21d5e84b06"
	bobToken   = "bob-token-2b8e6d10c4f97a35"
)

// initializeBody opens a 2025-11-25 HTTP session.
const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"weir-e2e-raw","version":"1"}}}`

// upRequest is one HTTP request the upstream received.
type upRequest struct {
	method string      // HTTP method
	rpc    string      // the JSON-RPC method of a POST, "" for anything else
	header http.Header // as received
}

// remoteUpstream is a Streamable HTTP MCP server on loopback with
// a private read (read_record, which returns secretText), a sink
// (send_message) and a 10 KB answer (big_record). It records every request's headers and every message
// send_message was asked to send, so a test can tell what reached it.
type remoteUpstream struct {
	url string

	mu   sync.Mutex
	reqs []upRequest
	sent []string
}

type readRecordArgs struct {
	ID string `json:"id,omitempty" jsonschema:"the record to read"`
}

type sendMessageArgs struct {
	To   string `json:"to" jsonschema:"who receives the message"`
	Text string `json:"text" jsonschema:"the message"`
}

// newRemoteUpstream starts the server, stateful (2025-11-25 sessions)
// unless stateless (what a 2026-07-28 client needs).
func newRemoteUpstream(t *testing.T, stateless ...bool) *remoteUpstream {
	t.Helper()
	u := &remoteUpstream{}
	server := mcp.NewServer(&mcp.Implementation{Name: "remote-test", Version: "1.0.0"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "read_record", Description: "Read a customer record."},
		func(context.Context, *mcp.CallToolRequest, readRecordArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: secretText}}}, nil, nil
		})
	mcp.AddTool(server, &mcp.Tool{Name: "big_record", Description: "Read a large record."},
		func(context.Context, *mcp.CallToolRequest, readRecordArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("0123456789", 1<<10)}}}, nil, nil
		})
	mcp.AddTool(server, &mcp.Tool{Name: "send_message", Description: "Send a message to someone."},
		func(_ context.Context, _ *mcp.CallToolRequest, in sendMessageArgs) (*mcp.CallToolResult, any, error) {
			u.mu.Lock()
			u.sent = append(u.sent, in.Text)
			u.mu.Unlock()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sent to " + in.To}}}, nil, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{Stateless: len(stateless) > 0 && stateless[0]})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := upRequest{method: r.Method, header: r.Header.Clone()}
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			var m struct {
				Method string `json:"method"`
			}
			if json.Unmarshal(body, &m) == nil {
				rec.rpc = m.Method
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		u.mu.Lock()
		u.reqs = append(u.reqs, rec)
		u.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	u.url = srv.URL + "/mcp"
	return u
}

func (u *remoteUpstream) requests() []upRequest {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := make([]upRequest, len(u.reqs))
	copy(out, u.reqs)
	return out
}

// count is how many POSTs carrying the JSON-RPC method rpc arrived.
func (u *remoteUpstream) count(rpc string) int {
	n := 0
	for _, r := range u.requests() {
		if r.rpc == rpc {
			n++
		}
	}
	return n
}

func (u *remoteUpstream) messages() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.sent...)
}

// served is one running `weir serve`.
type served struct {
	base string // http://HOST:PORT
	out  *syncBuffer
}

func (s *served) endpoint() string { return s.base + "/mcp" }

// serveEnviron is the environment of a weir serve: e's, with no tokens
// and no default session unless e or extra sets them.
func serveEnviron(e *weirEnv, extra ...string) []string {
	return e.environ(append([]string{"WEIR_TOKENS=", "WEIR_SESSION=" + e.session}, extra...)...)
}

// startServeFlags runs `weir serve --name remote` in front of upstream on
// a free loopback port with flags and the extra environment, and waits
// until its /healthz answers 200.
func startServeFlags(t *testing.T, e *weirEnv, extraEnv []string, upstream string, flags ...string) *served {
	t.Helper()
	addr := freeLoopbackAddr(t)
	return startServeAt(t, e, extraEnv, addr, "http://"+addr, upstream, flags...)
}

// startServeAt runs weir serve on listen and waits on base's /healthz.
func startServeAt(t *testing.T, e *weirEnv, extraEnv []string, listen, base, upstream string, flags ...string) *served {
	t.Helper()
	argv := append([]string{weirBin, "serve", "--upstream", upstream, "--name", "remote", "--listen", listen}, flags...)
	out, done := startDaemon(t, serveEnviron(e, extraEnv...), argv...)
	awaitHealthy(t, "weir serve", base, out, done)
	return &served{base: base, out: out}
}

func writeServePolicy(t *testing.T) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(file, []byte(servePolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// headerTransport adds fixed headers to every request a client sends.
type headerTransport struct {
	header http.Header
	next   http.RoundTripper
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, vs := range h.header {
		r.Header[k] = vs
	}
	return h.next.RoundTrip(r)
}

// connectServe opens a 2025-11-25 session with the go-sdk client, sending
// header with every request.
func connectServe(t *testing.T, ctx context.Context, endpoint string, header http.Header) *mcp.ClientSession {
	t.Helper()
	return connectServeVersion(t, ctx, endpoint, header, "2025-11-25")
}

// connectServeVersion connects the go-sdk client asking for version: a
// 2025-11-25 HTTP session, or 2026-07-28 stateless requests.
func connectServeVersion(t *testing.T, ctx context.Context, endpoint string, header http.Header, version string) *mcp.ClientSession {
	t.Helper()
	hc := &http.Client{Transport: headerTransport{header: header, next: http.DefaultTransport}}
	client := mcp.NewClient(&mcp.Implementation{Name: "weir-e2e-serve", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connecting to %s: %v", endpoint, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func bearerAuth(token string) string { return "Bearer " + token }

// secHTTP sends one request and returns the response with its body read.
// hdr is name, value pairs; "Host" sets the request's Host.
func secHTTP(t *testing.T, method, url, body string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if http.CanonicalHeaderKey(hdr[i]) == "Host" {
			req.Host = hdr[i+1]
			continue
		}
		req.Header.Add(hdr[i], hdr[i+1])
	}
	resp, err := (&http.Client{Timeout: 20 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", method, url, err)
	}
	return resp, b
}

// secPost POSTs a JSON-RPC message as an MCP client does.
func secPost(t *testing.T, url, body string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	return secHTTP(t, http.MethodPost, url, body,
		append([]string{"Content-Type", "application/json", "Accept", "application/json, text/event-stream"}, hdr...)...)
}

// sseAnswer is the JSON-RPC message a POST's response carries: the body
// itself, or the SSE event whose data holds a message with an id.
func sseAnswer(t *testing.T, resp *http.Response, body []byte) msg {
	t.Helper()
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		return parse(t, body)
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data:")
		data = strings.TrimSpace(data)
		if !ok || data == "" {
			continue
		}
		if m := parse(t, []byte(data)); len(m.ID) > 0 && m.Method == "" {
			return m
		}
	}
	t.Fatalf("no JSON-RPC answer in the response (%s, %s):\n%s", resp.Status, resp.Header.Get("Content-Type"), body)
	return msg{}
}

// openHTTPSession opens an HTTP session with a raw initialize, requires 200 and
// a result, and returns the Mcp-Session-Id.
func openHTTPSession(t *testing.T, endpoint string, hdr ...string) string {
	t.Helper()
	resp, body := secPost(t, endpoint, initializeBody, hdr...)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("initialize %v: %s, want 200: %s", hdr, resp.Status, body)
	}
	if m := sseAnswer(t, resp, body); m.Error != nil || !strings.Contains(string(m.Result), `"protocolVersion"`) {
		t.Fatalf("initialize %v: want a result, got %s", hdr, body)
	}
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("initialize %v: no Mcp-Session-Id in the answer", hdr)
	}
	return sid
}

func wantHTTPStatus(t *testing.T, what string, resp *http.Response, body []byte, code int) {
	t.Helper()
	if resp.StatusCode != code {
		t.Errorf("%s: %s, want %d: %s", what, resp.Status, code, bytes.TrimSpace(body))
	}
}

// TestServeOriginForbidden: a cross-site page (a foreign Origin) and a DNS
// rebinding page (a foreign Host on loopback) cannot reach the endpoint,
// and neither refused request reaches the upstream; the same-origin page
// and an --allow-origin origin can.
func TestServeOriginForbidden(t *testing.T) {
	t.Parallel()
	up := newRemoteUpstream(t)
	s := startServeFlags(t, newWeirEnv(t), nil, up.url, "--allow-origin", "http://localhost:3000")
	host := strings.TrimPrefix(s.base, "http://")
	_, port, _ := net.SplitHostPort(host)

	allowed := 0
	for _, c := range []struct {
		what string
		hdr  []string
		code int
	}{
		{"a foreign Origin", []string{"Origin", "https://evil.example"}, http.StatusForbidden},
		{"a foreign Origin on Weir's port", []string{"Origin", "http://evil.example:" + port}, http.StatusForbidden},
		{"the opaque Origin null", []string{"Origin", "null"}, http.StatusForbidden},
		{"an origin next to the allowed one", []string{"Origin", "http://localhost:3001"}, http.StatusForbidden},
		{"a non-loopback Host (DNS rebinding)", []string{"Host", "evil.example:" + port}, http.StatusForbidden},
		{"a non-loopback Host with its own Origin", []string{"Host", "evil.example:" + port, "Origin", "http://evil.example:" + port}, http.StatusForbidden},
		{"the same origin", []string{"Origin", "http://" + host}, http.StatusOK},
		{"the --allow-origin origin", []string{"Origin", "http://localhost:3000"}, http.StatusOK},
		{"no Origin (a non-browser client)", nil, http.StatusOK},
		{"a Host under localhost's name", []string{"Host", "localhost.evil.example:" + port}, http.StatusForbidden},
		{"Host localhost", []string{"Host", "localhost:" + port}, http.StatusOK},
		{"Host [::1]", []string{"Host", "[::1]:" + port}, http.StatusOK},
	} {
		resp, body := secPost(t, s.endpoint(), initializeBody, c.hdr...)
		wantHTTPStatus(t, c.what, resp, body, c.code)
		switch {
		case c.code == http.StatusOK && resp.StatusCode == http.StatusOK:
			allowed++
			if m := sseAnswer(t, resp, body); m.Error != nil || len(m.Result) == 0 {
				t.Errorf("%s: initialize was not answered with a result: %s", c.what, body)
			}
		case c.code == http.StatusForbidden && resp.StatusCode == http.StatusForbidden:
			if !strings.Contains(string(body), "Origin") && !strings.Contains(string(body), "Host") {
				t.Errorf("%s: the 403 does not say what was refused: %s", c.what, body)
			}
		}
	}
	if n := up.count("initialize"); n != allowed {
		t.Errorf("the upstream received %d initialize requests; %d were allowed through: refused requests must not reach it", n, allowed)
	}
}

// TestServeTokens: with tokens configured every /mcp and /metrics request
// needs a valid bearer token (WEIR_TOKENS or --tokens-file), with the
// RFC 6750 challenge when it has none; /healthz needs none.
func TestServeTokens(t *testing.T) {
	t.Parallel()
	up := newRemoteUpstream(t)
	tokens := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte("# bob's token, hashed\nbob "+gateway.HashToken(bobToken)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServeFlags(t, newWeirEnv(t), []string{"WEIR_TOKENS=alice=" + aliceToken}, up.url, "--tokens-file", tokens)

	resp, body := secPost(t, s.endpoint(), initializeBody)
	wantHTTPStatus(t, "no Authorization", resp, body, http.StatusUnauthorized)
	if ch := resp.Header.Get("WWW-Authenticate"); !strings.HasPrefix(ch, "Bearer") || strings.Contains(ch, "invalid_token") {
		t.Errorf("no Authorization: WWW-Authenticate %q, want a Bearer challenge without an error", ch)
	}
	for _, auth := range []string{bearerAuth("not-a-token-of-anyone-here"), bearerAuth(aliceToken + "x"), bearerAuth(gateway.HashToken(bobToken))} {
		resp, body := secPost(t, s.endpoint(), initializeBody, "Authorization", auth)
		wantHTTPStatus(t, "Authorization "+auth, resp, body, http.StatusUnauthorized)
		if ch := resp.Header.Get("WWW-Authenticate"); !strings.HasPrefix(ch, "Bearer") || !strings.Contains(ch, `error="invalid_token"`) {
			t.Errorf("Authorization %s: WWW-Authenticate %q, want Bearer with error=\"invalid_token\"", auth, ch)
		}
	}
	resp, body = secPost(t, s.endpoint(), initializeBody, "Authorization", "Basic "+aliceToken)
	wantHTTPStatus(t, "a Basic credential", resp, body, http.StatusUnauthorized)
	if n := up.count("initialize"); n != 0 {
		t.Errorf("%d unauthenticated initialize requests reached the upstream", n)
	}

	openHTTPSession(t, s.endpoint(), "Authorization", bearerAuth(aliceToken)) // WEIR_TOKENS
	openHTTPSession(t, s.endpoint(), "Authorization", bearerAuth(bobToken))   // --tokens-file
	openHTTPSession(t, s.endpoint(), "Authorization", "bearer "+aliceToken)
	if n := up.count("initialize"); n != 3 {
		t.Errorf("the upstream received %d initialize requests, want the 3 authenticated ones", n)
	}

	resp, body = secHTTP(t, http.MethodGet, s.base+"/metrics", "")
	wantHTTPStatus(t, "/metrics without a token", resp, body, http.StatusUnauthorized)
	if strings.Contains(string(body), "weir_") {
		t.Errorf("/metrics without a token leaked metrics:\n%s", body)
	}
	resp, body = secHTTP(t, http.MethodGet, s.base+"/metrics", "", "Authorization", bearerAuth("wrong-token-0123456789"))
	wantHTTPStatus(t, "/metrics with a wrong token", resp, body, http.StatusUnauthorized)
	resp, body = secHTTP(t, http.MethodGet, s.base+"/metrics", "", "Authorization", bearerAuth(aliceToken))
	wantHTTPStatus(t, "/metrics with a token", resp, body, http.StatusOK)
	if !strings.Contains(string(body), "weir_sessions") {
		t.Errorf("/metrics with a token: no weir_sessions in:\n%.2000s", body)
	}
	resp, body = secHTTP(t, http.MethodGet, s.base+"/healthz", "")
	wantHTTPStatus(t, "/healthz without a token", resp, body, http.StatusOK)
	if !strings.Contains(string(body), `"status":"ok"`) {
		t.Errorf("/healthz: %s", body)
	}
	if strings.Contains(s.out.String(), aliceToken) || strings.Contains(s.out.String(), bobToken) {
		t.Errorf("a token appeared in weir serve's log:\n%s", s.out.String())
	}
}

// TestServeRefusesBeyondLoopbackWithoutTokens: on an address other
// machines can reach, weir serve without tokens exits at once, saying how
// to configure them, and never listens; with a token it serves there.
func TestServeRefusesBeyondLoopbackWithoutTokens(t *testing.T) {
	t.Parallel()
	e := newWeirEnv(t)
	for _, host := range []string{"0.0.0.0", "", "[::]"} {
		_, port, _ := net.SplitHostPort(freeLoopbackAddr(t))
		listen := host + ":" + port
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		cmd := exec.CommandContext(ctx, weirBin, "serve", "--upstream", "http://127.0.0.1:9/mcp", "--listen", listen)
		cmd.Env = serveEnviron(e)
		var out syncBuffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		timedOut := ctx.Err() != nil
		cancel()
		if timedOut {
			t.Errorf("--listen %s without tokens: weir serve was still running after 15s (serving?); output:\n%s", listen, out.String())
			continue
		}
		if err == nil || cmd.ProcessState.ExitCode() == 0 {
			t.Errorf("--listen %s without tokens: exit status 0, want non-zero; output:\n%s", listen, out.String())
		}
		if !contains(out.String(), "refusing to listen beyond loopback without credentials", "WEIR_TOKENS", "--tokens-file") {
			t.Errorf("--listen %s without tokens: the message does not say how to fix it:\n%s", listen, out.String())
		}
		if c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, time.Second); err == nil {
			c.Close()
			t.Errorf("--listen %s without tokens: something accepts connections on port %s", listen, port)
		}
	}

	// The positive control: the same address with a token configured is
	// served, and still asks for the token.
	addr := freeLoopbackAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	up := newRemoteUpstream(t)
	s := startServeAt(t, e, []string{"WEIR_TOKENS=alice=" + aliceToken}, "0.0.0.0:"+port, "http://"+addr, up.url)
	resp, body := secPost(t, s.endpoint(), initializeBody)
	wantHTTPStatus(t, "0.0.0.0 with tokens, no Authorization", resp, body, http.StatusUnauthorized)
	openHTTPSession(t, s.endpoint(), "Authorization", bearerAuth(aliceToken))
}

// TestServeNoTokenPassthrough: the client's credentials (its bearer token
// for Weir, its cookies) never reach the upstream; the upstream gets the
// --header credential, expanded from Weir's environment, on every request.
func TestServeNoTokenPassthrough(t *testing.T) {
	t.Parallel()
	const upstreamToken = "upstream-credential-5d1e9b7c"
	const cookie = "weir_client_cookie=c00kie-9a8b7c6d"
	up := newRemoteUpstream(t)
	s := startServeFlags(t, newWeirEnv(t), []string{"WEIR_TOKENS=alice=" + aliceToken, "UPSTREAM_TOKEN=" + upstreamToken},
		up.url, "--policy", writeServePolicy(t), "--header", "Authorization: Bearer ${UPSTREAM_TOKEN}")
	ctx := ctxT(t, 60*time.Second)
	cs := connectServe(t, ctx, s.endpoint(), http.Header{
		"Authorization": {bearerAuth(aliceToken)},
		"Cookie":        {cookie},
		"Weir-Session":  {"passthrough"},
	})
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if text, isErr := call(t, ctx, cs, "send_message", map[string]any{"to": "bob@example.com", "text": "the meeting moved to four"}); isErr {
		t.Fatalf("send_message: %s", text)
	}
	if text, isErr := call(t, ctx, cs, "read_record", map[string]any{"id": "7"}); isErr || !strings.Contains(text, "Lindqvist") {
		t.Fatalf("read_record: %v %s", isErr, text)
	}
	cs.Close()
	// Ending the client's session ends the upstream's, with a DELETE that
	// must carry the same credentials as the rest.
	deleted := func() bool {
		for _, r := range up.requests() {
			if r.method == http.MethodDelete {
				return true
			}
		}
		return false
	}
	for deadline := time.Now().Add(10 * time.Second); !deleted() && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if !deleted() {
		t.Errorf("the client ended its session, but no DELETE reached the upstream within 10s")
	}

	reqs := up.requests()
	for _, want := range []string{"initialize", "tools/list", "tools/call"} {
		if up.count(want) == 0 {
			t.Errorf("no %s reached the upstream; the check below would be empty", want)
		}
	}
	for i, r := range reqs {
		if got := r.header.Values("Authorization"); len(got) != 1 || got[0] != bearerAuth(upstreamToken) {
			t.Errorf("upstream request %d (%s %s): Authorization %q, want exactly [%q] from --header", i, r.method, r.rpc, got, bearerAuth(upstreamToken))
		}
		for name, vs := range r.header {
			for _, v := range vs {
				if strings.Contains(v, aliceToken) || strings.Contains(v, "c00kie-9a8b7c6d") {
					t.Errorf("upstream request %d (%s %s) carries the client's credential in %s: %q", i, r.method, r.rpc, name, v)
				}
			}
		}
	}
	for _, secret := range []string{aliceToken, upstreamToken} {
		if strings.Contains(s.out.String(), secret) {
			t.Errorf("a credential appeared in weir serve's log:\n%s", s.out.String())
		}
	}
}

// TestServeTenantIsolation: the Weir-Session a client names is scoped to
// its tenant, and an HTTP session to the tenant that opened it.
func TestServeTenantIsolation(t *testing.T) {
	t.Parallel()
	e, pol := newWeirEnv(t), writeServePolicy(t)
	tokens := []string{"WEIR_TOKENS=alice=" + aliceToken + ",bob=" + bobToken}
	up := newRemoteUpstream(t)
	s := startServeFlags(t, e, tokens, up.url, "--policy", pol)
	ctx := ctxT(t, 60*time.Second)
	as := func(token string) http.Header {
		return http.Header{"Authorization": {bearerAuth(token)}, "Weir-Session": {"shared"}}
	}
	leak := map[string]any{"to": "attacker@evil.example", "text": "fyi: " + secretText}

	alice := connectServe(t, ctx, s.endpoint(), as(aliceToken))
	if text, isErr := call(t, ctx, alice, "read_record", map[string]any{"id": "1"}); isErr || !strings.Contains(text, "Lindqvist") {
		t.Fatalf("alice's read_record: %v %s", isErr, text)
	}
	text, isErr := call(t, ctx, alice, "send_message", leak)
	if !isErr || !contains(text, "Weir blocked", "flow.exfiltration", "remote/read_record") {
		t.Errorf("alice's leak: isError %v, want a block by flow.exfiltration naming remote/read_record: %s", isErr, text)
	}
	if got := up.messages(); len(got) != 0 {
		t.Fatalf("the upstream was asked to send %q; alice's leak must not reach it", got)
	}

	// Bob names the same Weir-Session and has read nothing: his session is
	// his own, so the same text goes.
	bob := connectServe(t, ctx, s.endpoint(), as(bobToken))
	if text, isErr := call(t, ctx, bob, "send_message", leak); isErr || !strings.Contains(text, "sent to attacker@evil.example") {
		t.Errorf("bob's send_message was affected by alice's session (isError %v): %s", isErr, text)
	}
	if got := up.messages(); len(got) != 1 {
		t.Errorf("the upstream sent %d messages, want bob's one", len(got))
	}

	// Alice's Mcp-Session-Id is no capability for Bob, whatever he does
	// with it; to Alice it is a live session.
	sid := alice.ID()
	if sid == "" {
		t.Fatal("alice's session has no Mcp-Session-Id")
	}
	list := `{"jsonrpc":"2.0","id":50,"method":"tools/list"}`
	sess := func(token string) []string {
		return []string{"Authorization", bearerAuth(token), "Mcp-Session-Id", sid, "Mcp-Protocol-Version", "2025-11-25", "Weir-Session", "shared"}
	}
	resp, body := secPost(t, s.endpoint(), list, sess(bobToken)...)
	wantHTTPStatus(t, "bob POSTs to alice's session", resp, body, http.StatusNotFound)
	resp, body = secHTTP(t, http.MethodGet, s.endpoint(), "", append(sess(bobToken), "Accept", "text/event-stream")...)
	wantHTTPStatus(t, "bob GETs alice's session", resp, body, http.StatusNotFound)
	resp, body = secHTTP(t, http.MethodDelete, s.endpoint(), "", sess(bobToken)...)
	wantHTTPStatus(t, "bob DELETEs alice's session", resp, body, http.StatusNotFound)
	resp, body = secPost(t, s.endpoint(), list, sess(aliceToken)...)
	wantHTTPStatus(t, "alice POSTs to her own session", resp, body, http.StatusOK)
	if resp.StatusCode == http.StatusOK {
		if m := sseAnswer(t, resp, body); m.Error != nil || !strings.Contains(string(m.Result), "send_message") {
			t.Errorf("alice's tools/list on her own session: %s", body)
		}
	}
	if _, err := alice.ListTools(ctx, nil); err != nil {
		t.Errorf("alice's session did not survive bob's DELETE: %v", err)
	}

	// The positive control: a second HTTP session of Alice's under the same
	// Weir-Session shares her taint, so the namespacing is what isolates Bob.
	alice2 := connectServe(t, ctx, s.endpoint(), as(aliceToken))
	if alice2.ID() == sid {
		t.Fatal("alice's second session got the first one's Mcp-Session-Id")
	}
	text, isErr = call(t, ctx, alice2, "send_message", leak)
	if !isErr || !contains(text, "flow.exfiltration", "remote/read_record") {
		t.Errorf("alice's leak through a second HTTP session of Weir-Session shared: isError %v, want a block: %s", isErr, text)
	}
	// And another Weir-Session of Alice's own has not read anything.
	alice3 := connectServe(t, ctx, s.endpoint(), http.Header{"Authorization": {bearerAuth(aliceToken)}, "Weir-Session": {"elsewhere"}})
	if text, isErr := call(t, ctx, alice3, "send_message", leak); isErr {
		t.Errorf("alice's other Weir-Session was blocked: %s", text)
	}
	if got := up.messages(); len(got) != 2 {
		t.Errorf("the upstream sent %d messages, want 2 (bob's, and alice's from the untainted session)", len(got))
	}

	// A session cannot leave its taint by naming another Weir-Session.
	resp, body = secPost(t, s.endpoint(), list, "Authorization", bearerAuth(aliceToken), "Mcp-Session-Id", sid,
		"Mcp-Protocol-Version", "2025-11-25", "Weir-Session", "elsewhere")
	wantHTTPStatus(t, "alice's session under another Weir-Session", resp, body, http.StatusBadRequest)

	// The same holds for 2026-07-28 stateless requests, which carry no HTTP
	// session, here through a replica (a second weir serve on the same
	// WEIR_HOME) in front of a stateless upstream: Bob's Weir-Session shared
	// is his own, Alice's is the one she read in.
	upStateless := newRemoteUpstream(t, true)
	replica := startServeFlags(t, e, tokens, upStateless.url, "--policy", pol)
	bobStateless := connectServeVersion(t, ctx, replica.endpoint(), as(bobToken), "2026-07-28")
	if id, v := bobStateless.ID(), bobStateless.InitializeResult().ProtocolVersion; id != "" || v != "2026-07-28" {
		t.Fatalf("the stateless client got Mcp-Session-Id %q, protocol %q: it did not speak 2026-07-28", id, v)
	}
	if text, isErr := call(t, ctx, bobStateless, "send_message", leak); isErr {
		t.Errorf("bob's stateless send_message was affected by alice's session: %s", text)
	}
	aliceStateless := connectServeVersion(t, ctx, replica.endpoint(), as(aliceToken), "2026-07-28")
	text, isErr = call(t, ctx, aliceStateless, "send_message", leak)
	if !isErr || !contains(text, "flow.exfiltration", "remote/read_record") {
		t.Errorf("alice's stateless leak under Weir-Session shared: isError %v, want a block: %s", isErr, text)
	}
	if got := upStateless.messages(); len(got) != 1 {
		t.Errorf("the stateless upstream sent %d messages, want bob's one", len(got))
	}
}

// TestServeBodyAndHeaderCaps: an oversized body gets 413 with a JSON-RPC
// error naming the limit, oversized headers 431, and the proxy keeps
// serving after both.
func TestServeBodyAndHeaderCaps(t *testing.T) {
	t.Parallel()
	up := newRemoteUpstream(t)
	s := startServeFlags(t, newWeirEnv(t), nil, up.url, "--max-message-bytes", "4096")

	big := `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"` +
		strings.Repeat("x", 10<<10) + `","version":"1"}}}`
	resp, body := secPost(t, s.endpoint(), big)
	wantHTTPStatus(t, "a 10 KB body", resp, body, http.StatusRequestEntityTooLarge)
	var e struct {
		JSONRPC string `json:"jsonrpc"`
		Error   *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.JSONRPC != "2.0" || e.Error == nil {
		t.Errorf("the 413 body is not a JSON-RPC error (%v): %s", err, body)
	} else if !strings.Contains(e.Error.Message, "4096") {
		t.Errorf("the 413 error does not name the limit: %q", e.Error.Message)
	}
	// The same body with no Content-Length (chunked): the limit is on what
	// is read, not on what the client declares.
	req, err := http.NewRequest(http.MethodPost, s.endpoint(), io.MultiReader(strings.NewReader(big)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if req.ContentLength != 0 {
		t.Fatalf("the request declares Content-Length %d; it must go chunked", req.ContentLength)
	}
	chunked, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("a chunked 10 KB body: %v", err)
	}
	cbody, _ := io.ReadAll(chunked.Body)
	chunked.Body.Close()
	wantHTTPStatus(t, "a chunked 10 KB body", chunked, cbody, http.StatusRequestEntityTooLarge)
	if n := up.count("initialize"); n != 0 {
		t.Errorf("the oversized initialize reached the upstream (%d)", n)
	}
	openHTTPSession(t, s.endpoint())

	resp, body = secPost(t, s.endpoint(), initializeBody, "X-Padding", strings.Repeat("p", 64<<10))
	wantHTTPStatus(t, "64 KB of headers", resp, body, http.StatusRequestHeaderFieldsTooLarge)
	openHTTPSession(t, s.endpoint())
	if n := up.count("initialize"); n != 2 {
		t.Errorf("the upstream received %d initialize requests, want the 2 within the limits", n)
	}

	// The limit holds the other way too: a 10 KB answer from the upstream
	// is refused with an error, promptly, and the session goes on.
	ctx := ctxT(t, 60*time.Second)
	cs := connectServe(t, ctx, s.endpoint(), http.Header{"Weir-Session": {"caps"}})
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "big_record", Arguments: map[string]any{}})
	cancel()
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		t.Errorf("a 10 KB answer over --max-message-bytes 4096 was not answered within 15s: %v", err)
	case err == nil && !res.IsError:
		t.Errorf("a 10 KB answer over --max-message-bytes 4096 reached the client: %d content items", len(res.Content))
	case err != nil && !strings.Contains(err.Error(), "4096"):
		t.Errorf("the error for the oversized answer does not name the limit: %v", err)
	}
	if text, isErr := call(t, ctx, cs, "send_message", map[string]any{"to": "a@example.com", "text": "after the big answer"}); isErr {
		t.Errorf("the session did not survive the oversized answer: %s", text)
	}
}

// TestServeRateLimit: a tenant's burst beyond --rate is refused with 429
// and Retry-After, every request gets an answer, the refused ones never
// reach the upstream, another tenant is not held back, and after
// Retry-After the first tenant is served again.
func TestServeRateLimit(t *testing.T) {
	t.Parallel()
	up := newRemoteUpstream(t)
	s := startServeFlags(t, newWeirEnv(t), []string{"WEIR_TOKENS=alice=" + aliceToken + ",bob=" + bobToken}, up.url, "--rate", "2")

	const n = 20
	type result struct {
		code       int
		retryAfter string
		body       []byte
		err        error
	}
	results := make([]result, n)
	client := &http.Client{Timeout: 20 * time.Second}
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, err := http.NewRequest(http.MethodPost, s.endpoint(), strings.NewReader(initializeBody))
			if err != nil {
				results[i].err = err
				return
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Authorization", bearerAuth(aliceToken))
			resp, err := client.Do(req)
			if err != nil {
				results[i].err = err
				return
			}
			defer resp.Body.Close()
			results[i].body, results[i].err = io.ReadAll(resp.Body)
			results[i].code, results[i].retryAfter = resp.StatusCode, resp.Header.Get("Retry-After")
		}()
	}
	wg.Wait()
	ok, limited, wait := 0, 0, 0
	for i, r := range results {
		switch {
		case r.err != nil:
			t.Errorf("request %d got no answer: %v", i, r.err)
		case r.code == http.StatusOK:
			ok++
			if !strings.Contains(string(r.body), `"protocolVersion"`) {
				t.Errorf("request %d: 200 without an initialize result: %s", i, r.body)
			}
		case r.code == http.StatusTooManyRequests:
			limited++
			secs, err := strconv.Atoi(r.retryAfter)
			if err != nil || secs < 1 {
				t.Errorf("request %d: 429 with Retry-After %q, want a number of seconds", i, r.retryAfter)
			}
			wait = max(wait, secs)
		default:
			t.Errorf("request %d: status %d, want 200 or 429: %s", i, r.code, r.body)
		}
	}
	t.Logf("%d served, %d refused with 429", ok, limited)
	if limited == 0 || ok == 0 || ok > 8 {
		t.Errorf("a burst of %d at --rate 2 (burst 4): %d served and %d refused; want a few served and the rest refused", n, ok, limited)
	}
	if got := up.count("initialize"); got != ok {
		t.Errorf("the upstream received %d initialize requests, want the %d served", got, ok)
	}
	if t.Failed() {
		return
	}
	// The limit is the tenant's: Bob is served while Alice waits, and
	// the refusals are counted.
	openHTTPSession(t, s.endpoint(), "Authorization", bearerAuth(bobToken))
	resp, body := secHTTP(t, http.MethodGet, s.base+"/metrics", "", "Authorization", bearerAuth(bobToken))
	wantHTTPStatus(t, "bob's /metrics", resp, body, http.StatusOK)
	if m, found := findSample(parseMetrics(string(body)), "weir_http_requests_total", map[string]string{"tenant": "alice", "code": "429"}); !found || int(m.value) != limited {
		t.Errorf("weir_http_requests_total{tenant=\"alice\",code=\"429\"} = %v (found %v), want %d", m.value, found, limited)
	}
	// The limit refills: after Retry-After Alice is served again.
	time.Sleep(time.Duration(wait) * time.Second)
	openHTTPSession(t, s.endpoint(), "Authorization", bearerAuth(aliceToken))
}

// metricLine is one sample of the Prometheus text format.
type metricLine struct {
	name   string
	labels map[string]string
	value  float64
}

var (
	sampleRe = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)`)
	labelRe  = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"`)
)

func parseMetrics(text string) []metricLine {
	var out []metricLine
	for _, line := range strings.Split(text, "\n") {
		m := sampleRe.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		v, err := strconv.ParseFloat(m[3], 64)
		if err != nil {
			continue
		}
		l := metricLine{name: m[1], labels: map[string]string{}, value: v}
		for _, kv := range labelRe.FindAllStringSubmatch(m[2], -1) {
			l.labels[kv[1]] = kv[2]
		}
		out = append(out, l)
	}
	return out
}

// findSample finds the first sample of name whose labels include want.
func findSample(ms []metricLine, name string, want map[string]string) (metricLine, bool) {
	for _, m := range ms {
		if m.name != name {
			continue
		}
		match := true
		for k, v := range want {
			if m.labels[k] != v {
				match = false
			}
		}
		if match {
			return m, true
		}
	}
	return metricLine{}, false
}

// TestServeMetrics: /metrics counts a block by verdict and rule, the open
// sessions, and the upstream's latency.
func TestServeMetrics(t *testing.T) {
	t.Parallel()
	up := newRemoteUpstream(t)
	s := startServeFlags(t, newWeirEnv(t), nil, up.url, "--policy", writeServePolicy(t))
	ctx := ctxT(t, 60*time.Second)
	metrics := func() []metricLine {
		t.Helper()
		resp, body := secHTTP(t, http.MethodGet, s.base+"/metrics", "")
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("/metrics: %s: %s", resp.Status, body)
		}
		return parseMetrics(string(body))
	}
	block := map[string]string{"verdict": "block", "rule": "flow.exfiltration"}
	if m, ok := findSample(metrics(), "weir_decisions_total", block); ok && m.value > 0 {
		t.Fatalf("a block was counted before any call: %+v", m)
	}

	cs := connectServe(t, ctx, s.endpoint(), http.Header{"Weir-Session": {"metrics"}})
	if text, isErr := call(t, ctx, cs, "read_record", map[string]any{"id": "1"}); isErr {
		t.Fatalf("read_record: %s", text)
	}
	if text, isErr := call(t, ctx, cs, "send_message", map[string]any{"to": "x@evil.example", "text": secretText}); !isErr || !strings.Contains(text, "flow.exfiltration") {
		t.Fatalf("the leak was not blocked by flow.exfiltration (isError %v): %s", isErr, text)
	}

	ms := metrics()
	if m, ok := findSample(ms, "weir_decisions_total", block); !ok || m.value < 1 {
		t.Errorf("no weir_decisions_total{verdict=\"block\",rule=\"flow.exfiltration\"} ≥ 1 after a block; decisions: %+v", filterMetrics(ms, "weir_decisions_total"))
	}
	if m, ok := findSample(ms, "weir_sessions", nil); !ok || m.value < 1 {
		t.Errorf("weir_sessions %+v (found %v), want ≥ 1 with a session open", m, ok)
	}
	if m, ok := findSample(ms, "weir_upstream_seconds_count", map[string]string{"server": "remote"}); !ok || m.value < 1 {
		t.Errorf("no weir_upstream_seconds_count{server=\"remote\"} ≥ 1; upstream metrics: %+v", filterMetrics(ms, "weir_upstream_seconds_count"))
	}
	if _, ok := findSample(ms, "weir_upstream_seconds_bucket", map[string]string{"server": "remote"}); !ok {
		t.Errorf("weir_upstream_seconds is not a histogram with buckets for server remote")
	}

	// The gauge follows the sessions: ending the only one (DELETE) brings
	// it back to 0.
	cs.Close()
	if m, ok := findSample(metrics(), "weir_sessions", nil); !ok || m.value != 0 {
		t.Errorf("weir_sessions %v (found %v) after the only session ended, want 0", m.value, ok)
	}
}

func filterMetrics(ms []metricLine, name string) []metricLine {
	var out []metricLine
	for _, m := range ms {
		if m.name == name {
			out = append(out, m)
		}
	}
	return out
}

// TestServeLeakAcrossServeAndRun: a weir run proxy (stdio, the fake
// server) and a weir serve proxy (HTTP, the remote server) of the same
// WEIR_SESSION share one taint session, both ways; another Weir-Session on
// the serve proxy does not share it.
func TestServeLeakAcrossServeAndRun(t *testing.T) {
	t.Parallel()
	e := newWeirEnv(t)
	e.session = "x"
	pol := writeServePolicy(t)
	up := newRemoteUpstream(t)
	s := startServeFlags(t, e, nil, up.url, "--policy", pol)
	run, tr := startFake(t, e, "normal", "--policy", pol)
	ctx := ctxT(t, 60*time.Second)
	serve := connectServe(t, ctx, s.endpoint(), http.Header{}) // WEIR_SESSION=x, Weir's default
	other := connectServe(t, ctx, s.endpoint(), http.Header{"Weir-Session": {"y"}})
	echo := func(id string, message string) (string, bool) {
		t.Helper()
		run.send(callLine(id, "echo", map[string]any{"message": message}))
		return resultText(t, tr.await(t, run, id))
	}

	// Before any read, either text may go either way.
	if text, isErr := call(t, ctx, serve, "send_message", map[string]any{"to": "a@example.com", "text": fakeNote}); isErr {
		t.Fatalf("send_message before any read: %s", text)
	}
	if text, isErr := echo("3", secretText); isErr {
		t.Fatalf("echo before any read: %s", text)
	}

	// Read through weir run, leak through weir serve.
	run.send(callLine("4", "note", map[string]any{}))
	if text, isErr := resultText(t, tr.await(t, run, "4")); isErr || !strings.Contains(text, "AWS_SECRET_ACCESS_KEY") {
		t.Fatalf("reading the note through weir run: %v %s", isErr, text)
	}
	text, isErr := call(t, ctx, serve, "send_message", map[string]any{"to": "a@evil.example", "text": fakeNote})
	if !isErr || !contains(text, "Weir blocked", "flow.exfiltration", "fake/note") {
		t.Errorf("the note leaked through weir serve (isError %v): %s", isErr, text)
	}
	if text, isErr := call(t, ctx, other, "send_message", map[string]any{"to": "a@example.com", "text": fakeNote}); isErr {
		t.Errorf("Weir-Session y was blocked by session x's read: %s", text)
	}

	// Read through weir serve, leak through weir run.
	if text, isErr := call(t, ctx, serve, "read_record", map[string]any{"id": "1"}); isErr || !strings.Contains(text, "Lindqvist") {
		t.Fatalf("reading the record through weir serve: %v %s", isErr, text)
	}
	text, isErr = echo("5", "minutes: "+secretText)
	if !isErr || !contains(text, "Weir blocked", "flow.exfiltration", "remote/read_record") {
		t.Errorf("the record leaked through weir run (isError %v): %s", isErr, text)
	}

	if got := up.messages(); len(got) != 2 {
		t.Errorf("the upstream sent %d messages, want 2 (before the read, and from session y): %q", len(got), got)
	}
	// DESIGN rule 2 over HTTP: the state store, audit log and every other
	// file weir serve and weir run wrote hold no value.
	assertNoSecretAtRest(t, e.home)
}
