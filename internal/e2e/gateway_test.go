package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// `weir gateway` end to end: the real binary serving real servers behind
// one endpoint, on its own stdio (--stdio) and over Streamable HTTP. The
// upstreams are server-filesystem (npm, stdio), the go-sdk conformance
// everything-server (Streamable HTTP), the misbehaving fake server (stdio,
// for restarts) and gwHook, a go-sdk Streamable HTTP server defined here
// with a private read and a sink that records what reached it.

// gwPolicy labels the hook's tools and the filesystem's write explicitly:
// these tests are about the gateway's routing and shared session, not the
// heuristic labeller. fs is the filesystem behind a gateway, files the
// same server behind a weir run proxy.
const gwPolicy = "version: 1\ntools:\n" +
	"  - {match: \"hook:fetch_record\", labels: [private]}\n" +
	"  - {match: \"hook:post\", labels: [sink]}\n" +
	"  - {match: \"fs:write_file\", labels: [sink]}\n" +
	"  - {match: \"files:write_file\", labels: [sink]}\n"

// The private texts: a note in the filesystem upstream's directory and the
// record the hook's fetch_record returns. Both are long enough to
// fingerprint.
const (
	gwNote   = "Quarterly forecast, do not circulate: the Tromsø plant closes in September and forty-two contracts end with it, announcement on the ninth."
	gwRecord = "Payroll record 4471: Ingrid Halvorsen, salary 84,200 EUR a year, account NO93 8601 1117 947, performance review moved to the second week of May."
)

// gwHook is a stateful Streamable HTTP MCP server on loopback with a
// private read (fetch_record, which returns gwRecord) and a sink (post,
// which records the body it was given).
type gwHook struct {
	url string

	mu    sync.Mutex
	posts []string
}

type gwFetchArgs struct {
	ID string `json:"id,omitempty" jsonschema:"the record to fetch"`
}

type gwPostArgs struct {
	To   string `json:"to" jsonschema:"the web hook"`
	Body string `json:"body" jsonschema:"what to post"`
}

func newGWHook(t *testing.T) *gwHook {
	t.Helper()
	h := &gwHook{}
	server := mcp.NewServer(&mcp.Implementation{Name: "gw-hook", Version: "1.0.0"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "fetch_record", Description: "Fetch a payroll record."},
		func(context.Context, *mcp.CallToolRequest, gwFetchArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: gwRecord}}}, nil, nil
		})
	mcp.AddTool(server, &mcp.Tool{Name: "post", Description: "Post a message to a web hook."},
		func(_ context.Context, _ *mcp.CallToolRequest, in gwPostArgs) (*mcp.CallToolResult, any, error) {
			h.mu.Lock()
			h.posts = append(h.posts, in.Body)
			h.mu.Unlock()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "posted to " + in.To}}}, nil, nil
		})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	h.url = srv.URL + "/mcp"
	return h
}

// received is every body post was called with.
func (h *gwHook) received() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.posts...)
}

// gwReceivedAny reports whether any body the hook received holds one of
// the needles.
func (h *gwHook) receivedAny(needles ...string) bool {
	for _, b := range h.received() {
		for _, n := range needles {
			if strings.Contains(b, n) {
				return true
			}
		}
	}
	return false
}

// gwCommand is a gateway.yaml server entry for a stdio server. JSON is
// YAML, so argv and env go in as JSON.
func gwCommand(name string, argv []string, env map[string]string) string {
	a, _ := json.Marshal(argv)
	s := "  " + name + ": {command: " + string(a)
	if len(env) > 0 {
		e, _ := json.Marshal(env)
		s += ", env: " + string(e)
	}
	return s + "}\n"
}

// gwURL is a gateway.yaml server entry for a Streamable HTTP server.
func gwURL(name, url string) string {
	u, _ := json.Marshal(url)
	return "  " + name + ": {url: " + string(u) + "}\n"
}

// writeGatewayConfig writes a gateway.yaml with the policy (a file written
// next to it, none when "") and the server entries.
func writeGatewayConfig(t *testing.T, policy string, servers ...string) string {
	t.Helper()
	dir := t.TempDir()
	cfg := ""
	if policy != "" {
		if err := os.WriteFile(filepath.Join(dir, "policy.yaml"), []byte(policy), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg += "policy: policy.yaml\n" // relative to the configuration file
	}
	cfg += "servers:\n" + strings.Join(servers, "")
	path := filepath.Join(dir, "gateway.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// gwDir is a temporary directory (symlinks resolved, as the filesystem
// server reports paths) holding note.md with gwNote.
func gwDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		dir = d
	}
	if err := os.WriteFile(filepath.Join(dir, "note.md"), []byte(gwNote+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// gwStdio is one client of `weir gateway --stdio`, speaking raw JSON-RPC.
type gwStdio struct {
	t    *testing.T
	p    *peer
	tr   *transcript
	next int
	init msg // the answer to initialize
}

// startGatewayStdio runs `weir gateway --config cfg --stdio` under env and
// initializes it.
func startGatewayStdio(t *testing.T, env []string, cfg string) *gwStdio {
	t.Helper()
	g := &gwStdio{t: t, p: startPeer(t, env, weirBin, "gateway", "--config", cfg, "--stdio"), tr: &transcript{}, next: 1}
	g.init = g.req("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]string{"name": "weir-e2e-gateway", "version": "1"}})
	if g.init.Error != nil {
		t.Fatalf("initialize: %s; stderr:\n%s", g.init.Error.Message, g.p.stderr.String())
	}
	g.p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return g
}

// line sends one request and returns its id, without waiting.
func (g *gwStdio) line(method string, params any) string {
	g.t.Helper()
	g.next++
	id := strconv.Itoa(g.next)
	line := `{"jsonrpc":"2.0","id":` + id + `,"method":` + string(gwJSON(method))
	if params != nil {
		line += `,"params":` + string(gwJSON(params))
	}
	g.p.send(line + "}")
	return id
}

// req sends one request and waits for its answer.
func (g *gwStdio) req(method string, params any) msg {
	g.t.Helper()
	return g.tr.await(g.t, g.p, g.line(method, params))
}

// call is tools/call; a JSON-RPC error fails the test.
func (g *gwStdio) call(tool string, args map[string]any) (string, bool) {
	g.t.Helper()
	m := g.req("tools/call", map[string]any{"name": tool, "arguments": args})
	if m.Error != nil {
		g.t.Fatalf("tools/call %s: error %d %s", tool, m.Error.Code, m.Error.Message)
	}
	return gwResultText(g.t, m.Result)
}

// names lists method (tools/list, …) and returns each item's key (name,
// uri, uriTemplate).
func (g *gwStdio) names(method, items, key string) []string {
	g.t.Helper()
	m := g.req(method, nil)
	if m.Error != nil {
		g.t.Fatalf("%s: error %d %s", method, m.Error.Code, m.Error.Message)
	}
	return gwItemNames(g.t, m.Result, items, key)
}

// awaitNotification reads until a notification with method arrives, or d
// passes (false), answering requests on the way. Notifications that came
// in earlier (while awaiting answers) count.
func (g *gwStdio) awaitNotification(method string, since int, d time.Duration) ([]byte, bool) {
	g.t.Helper()
	for _, l := range g.tr.lines[since:] {
		if m := parse(g.t, l); m.isNotification() && m.Method == method {
			return l, true
		}
	}
	deadline := time.After(d)
	for {
		select {
		case l, ok := <-g.p.lines:
			if !ok {
				g.t.Fatalf("the gateway closed its output while waiting for %s; stderr:\n%s", method, g.p.stderr.String())
			}
			g.tr.lines = append(g.tr.lines, l)
			m := parse(g.t, l)
			if m.isRequest() {
				g.p.send(answerServerRequest(m))
			}
			if m.isNotification() && m.Method == method {
				return l, true
			}
		case <-deadline:
			return nil, false
		}
	}
}

func gwJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// gwVerifyAudit checks the audit log's hash chain.
func gwVerifyAudit(t *testing.T, home string) {
	t.Helper()
	out, err := exec.Command(weirBin, "audit", "verify", "--file", filepath.Join(home, "audit.log")).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "intact") {
		t.Errorf("weir audit verify: %v\n%s", err, out)
	}
}

// gwResultText is the text of a tools/call result and its isError.
func gwResultText(t *testing.T, result json.RawMessage) (string, bool) {
	t.Helper()
	var r struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		t.Fatalf("tools/call result %s: %v", result, err)
	}
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String(), r.IsError
}

func gwItemNames(t *testing.T, result json.RawMessage, items, key string) []string {
	t.Helper()
	var r map[string][]map[string]any
	if err := json.Unmarshal(result, &r); err != nil {
		t.Fatalf("list result %s: %v", result, err)
	}
	var out []string
	for _, it := range r[items] {
		s, _ := it[key].(string)
		out = append(out, s)
	}
	return out
}

// gwWithPrefix keeps the names that start with prefix, prefix cut off.
func gwWithPrefix(names []string, prefix string) []string {
	var out []string
	for _, n := range names {
		if rest, ok := strings.CutPrefix(n, prefix); ok {
			out = append(out, rest)
		}
	}
	slices.Sort(out)
	return out
}

// gwGoCall is a tools/call through a go-sdk session; a protocol error
// fails the test.
func gwGoCall(t *testing.T, ctx context.Context, cs *mcp.ClientSession, tool string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("calling %s: %v", tool, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// gwHeaders adds fixed headers to every request of a client.
type gwHeaders struct {
	header http.Header
	next   http.RoundTripper
}

func (h gwHeaders) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, vs := range h.header {
		r.Header[k] = vs
	}
	return h.next.RoundTrip(r)
}

// gwConnect opens a go-sdk Streamable HTTP session with endpoint under
// protocol version, sending header with every request.
func gwConnect(t *testing.T, ctx context.Context, endpoint string, header http.Header, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	hc := &http.Client{Transport: gwHeaders{header: header, next: http.DefaultTransport}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "weir-e2e-gateway-go", Version: "1.0.0"}, opts).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connecting to %s (%s): %v", endpoint, version, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// gwHTTP is one running `weir gateway` in HTTP mode.
type gwHTTP struct {
	base string // http://HOST:PORT
	out  *syncBuffer
	done <-chan struct{}
	cmd  *exec.Cmd
}

func (g *gwHTTP) endpoint() string { return g.base + "/mcp" }

// startGatewayHTTP runs `weir gateway --config cfg --listen ADDR` under
// env on a free loopback port and waits until /healthz answers 200.
func startGatewayHTTP(t *testing.T, env []string, cfg string) *gwHTTP {
	t.Helper()
	addr := freeLoopbackAddr(t)
	cmd, out, done := startDaemonCmd(t, env, weirBin, "gateway", "--config", cfg, "--listen", addr)
	g := &gwHTTP{base: "http://" + addr, out: out, done: done, cmd: cmd}
	awaitHealthy(t, "weir gateway", g.base, out, done)
	return g
}

// gwHealth is what /healthz answers.
type gwHealth struct {
	Status    string          `json:"status"`
	Upstreams map[string]bool `json:"upstreams"`
}

func (g *gwHTTP) health() (int, gwHealth, error) {
	var h gwHealth
	resp, err := (&http.Client{Timeout: 2 * time.Second}).Get(g.base + "/healthz")
	if err != nil {
		return 0, h, err
	}
	defer resp.Body.Close()
	err = json.NewDecoder(resp.Body).Decode(&h)
	return resp.StatusCode, h, err
}

// gwEnv is e's environment for a gateway: no tokens, and WEIR_SESSION
// only when e names one.
func gwEnv(e *weirEnv, extra ...string) []string {
	return e.environ(append([]string{"WEIR_TOKENS=", "WEIR_SESSION=" + e.session}, extra...)...)
}

// TestGatewayStdio: one `weir gateway --stdio` in front of
// server-filesystem (stdio) and the go-sdk everything-server (HTTP). The
// client sees both servers' tools, prompts and resources under their
// prefixes, every name it is given routes back to its server, and a name
// no server has gets an error that says how names are made.
func TestGatewayStdio(t *testing.T) {
	t.Parallel()
	dir := gwDir(t)
	ev := startEverything(t, false)
	cfg := writeGatewayConfig(t, "", gwCommand("fs", serverFilesystem(t, dir), nil), gwURL("ev", ev))
	g := startGatewayStdio(t, gwEnv(newWeirEnv(t)), cfg)

	// The everything-server directly, for comparison.
	ctx := ctxT(t, 90*time.Second)
	direct := gwConnect(t, ctx, ev, nil, "2025-11-25", nil)

	t.Run("initialize", func(t *testing.T) {
		var r struct {
			ProtocolVersion string                    `json:"protocolVersion"`
			ServerInfo      struct{ Name string }     `json:"serverInfo"`
			Capabilities    map[string]map[string]any `json:"capabilities"`
		}
		if err := json.Unmarshal(g.init.Result, &r); err != nil {
			t.Fatal(err)
		}
		if r.ServerInfo.Name != "weir-gateway" || r.ProtocolVersion != "2025-11-25" {
			t.Errorf("initialize: serverInfo %q, protocol %q: %s", r.ServerInfo.Name, r.ProtocolVersion, g.init.Result)
		}
		for _, c := range []string{"tools", "prompts", "resources"} {
			if r.Capabilities[c]["listChanged"] != true {
				t.Errorf("capabilities.%s.listChanged is not true (a restarted server's lists change): %s", c, g.init.Result)
			}
		}
	})

	t.Run("tools", func(t *testing.T) {
		names := g.names("tools/list", "tools", "name")
		for _, n := range names {
			if !strings.HasPrefix(n, "fs__") && !strings.HasPrefix(n, "ev__") {
				t.Errorf("tool %q carries neither server's prefix", n)
			}
		}
		fs := gwWithPrefix(names, "fs__")
		for _, want := range []string{"read_text_file", "write_file", "list_directory"} {
			if !slices.Contains(fs, want) {
				t.Errorf("no fs__%s among the tools: %v", want, names)
			}
		}
		res, err := direct.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, tool := range res.Tools {
			want = append(want, tool.Name)
		}
		slices.Sort(want)
		if got := gwWithPrefix(names, "ev__"); !slices.Equal(got, want) {
			t.Errorf("the ev__ tools are not the everything-server's:\n  got  %v\n  want %v", got, want)
		}
	})

	t.Run("call routes by prefix", func(t *testing.T) {
		text, isErr := g.call("fs__read_text_file", map[string]any{"path": filepath.Join(dir, "note.md")})
		if isErr || !strings.Contains(text, gwNote) {
			t.Errorf("fs__read_text_file: isError %v, %q", isErr, text)
		}
		res, err := direct.CallTool(ctx, &mcp.CallToolParams{Name: "test_simple_text"})
		if err != nil {
			t.Fatal(err)
		}
		want := res.Content[0].(*mcp.TextContent).Text
		if text, isErr := g.call("ev__test_simple_text", map[string]any{}); isErr || text != want {
			t.Errorf("ev__test_simple_text: isError %v, %q, want %q", isErr, text, want)
		}
		// A name holding the separator again still splits at the first.
		if text, isErr := g.call("fs__list_directory", map[string]any{"path": dir}); isErr || !strings.Contains(text, "note.md") {
			t.Errorf("fs__list_directory: isError %v, %q", isErr, text)
		}
	})

	t.Run("prompts", func(t *testing.T) {
		names := g.names("prompts/list", "prompts", "name")
		res, err := direct.ListPrompts(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, p := range res.Prompts {
			want = append(want, p.Name)
		}
		slices.Sort(want)
		if got := gwWithPrefix(names, "ev__"); !slices.Equal(got, want) || len(got) != len(names) {
			t.Errorf("prompts %v, want the everything-server's %v prefixed ev__", names, want)
		}
		m := g.req("prompts/get", map[string]any{"name": "ev__test_simple_prompt"})
		if m.Error != nil || !strings.Contains(string(m.Result), `"messages"`) {
			t.Errorf("prompts/get ev__test_simple_prompt: %+v %s", m.Error, m.Result)
		}
	})

	t.Run("resources", func(t *testing.T) {
		uris := g.names("resources/list", "resources", "uri")
		for _, want := range []string{"ev+test://static-text", "ev+test://static-binary"} {
			if !slices.Contains(uris, want) {
				t.Errorf("no %s among the resources: %v", want, uris)
			}
		}
		if names := g.names("resources/list", "resources", "name"); !slices.Contains(names, "ev__static-text") {
			t.Errorf("resource names %v, want ev__static-text", names)
		}
		if tmpl := g.names("resources/templates/list", "resourceTemplates", "uriTemplate"); !slices.Contains(tmpl, "ev+test://template/{id}/data") {
			t.Errorf("resource templates %v, want ev+test://template/{id}/data", tmpl)
		}
		for uri, want := range map[string]string{
			"ev+test://static-text":      "This is the content of the static text resource.",
			"ev+test://template/42/data": "42",
		} {
			m := g.req("resources/read", map[string]any{"uri": uri})
			if m.Error != nil {
				t.Errorf("resources/read %s: error %d %s", uri, m.Error.Code, m.Error.Message)
				continue
			}
			var r struct {
				Contents []struct{ URI, Text string }
			}
			if err := json.Unmarshal(m.Result, &r); err != nil || len(r.Contents) == 0 {
				t.Errorf("resources/read %s: %s", uri, m.Result)
				continue
			}
			if r.Contents[0].URI != uri || !strings.Contains(r.Contents[0].Text, want) {
				t.Errorf("resources/read %s: contents %+v, want its own URI back and %q", uri, r.Contents[0], want)
			}
		}
	})

	t.Run("resource updates name the resource as listed", func(t *testing.T) {
		since := len(g.tr.lines)
		if m := g.req("resources/subscribe", map[string]any{"uri": "ev+test://watched-resource"}); m.Error != nil {
			t.Fatalf("resources/subscribe: %d %s", m.Error.Code, m.Error.Message)
		}
		// The everything-server updates it every 3 seconds.
		raw, ok := g.awaitNotification("notifications/resources/updated", since, 10*time.Second)
		if !ok {
			t.Fatal("no notifications/resources/updated within 10s of subscribing")
		}
		if !strings.Contains(string(raw), `"uri":"ev+test://watched-resource"`) {
			t.Errorf("resource update does not name ev+test://watched-resource: %s", raw)
		}
		g.req("resources/unsubscribe", map[string]any{"uri": "ev+test://watched-resource"})
	})

	t.Run("completion routes by prompt", func(t *testing.T) {
		m := g.req("completion/complete", map[string]any{
			"ref":      map[string]any{"type": "ref/prompt", "name": "ev__test_prompt_with_arguments"},
			"argument": map[string]any{"name": "arg1", "value": "a"},
		})
		if m.Error != nil || !strings.Contains(string(m.Result), `"completion"`) {
			t.Errorf("completion/complete: %+v %s", m.Error, m.Result)
		}
	})

	t.Run("ping", func(t *testing.T) {
		if m := g.req("ping", nil); m.Error != nil || string(m.Result) != "{}" {
			t.Errorf("ping: %+v %s", m.Error, m.Result)
		}
	})

	t.Run("unknown names", func(t *testing.T) {
		for _, c := range []struct {
			method string
			params map[string]any
			want   []string
		}{
			{"tools/call", map[string]any{"name": "nope__read_text_file", "arguments": map[string]any{}}, []string{`no such tool "nope__read_text_file"`, "SERVER__NAME", "fs, ev"}},
			{"tools/call", map[string]any{"name": "read_text_file", "arguments": map[string]any{}}, []string{`no such tool "read_text_file"`, "SERVER__NAME"}},
			{"tools/call", map[string]any{"name": "fs__", "arguments": map[string]any{}}, []string{`no such tool "fs__"`}},
			{"prompts/get", map[string]any{"name": "nope__test_simple_prompt"}, []string{`no such prompt "nope__test_simple_prompt"`}},
			{"resources/read", map[string]any{"uri": "nope+test://static-text"}, []string{`no such resource "nope+test://static-text"`, "SERVER+URI"}},
			{"resources/read", map[string]any{"uri": "test://static-text"}, []string{`no such resource "test://static-text"`}},
		} {
			m := g.req(c.method, c.params)
			if m.Error == nil {
				t.Errorf("%s %v: want an error, got %s", c.method, c.params, m.Result)
				continue
			}
			if m.Error.Code != -32602 || !contains(m.Error.Message, c.want...) {
				t.Errorf("%s %v: error %d %q, want -32602 naming %q", c.method, c.params, m.Error.Code, m.Error.Message, c.want)
			}
		}
		// The server's own unknown tool is the server's answer.
		m := g.req("tools/call", map[string]any{"name": "ev__no_such_tool", "arguments": map[string]any{}})
		if m.Error == nil {
			if _, isErr := gwResultText(t, m.Result); !isErr {
				t.Errorf("ev__no_such_tool: want an error, got %s", m.Result)
			}
		}
	})

	if code := g.p.close(); code != 0 {
		t.Errorf("weir gateway --stdio exited %d when its client closed its input; stderr:\n%s", code, g.p.stderr.String())
	}
}

// TestGatewayLeakAcrossUpstreams: all of a client's servers behind one
// gateway decide in one taint session. What one upstream gave (a private
// file from the filesystem over stdio, a record from the hook over HTTP)
// cannot leave through another's sink, in either direction; the block
// names the rule and the source, and the sink never receives the text.
// The same holds between `weir gateway` (HTTP) and a `weir run` proxy
// sharing WEIR_SESSION; another session is unaffected.
func TestGatewayLeakAcrossUpstreams(t *testing.T) {
	t.Parallel()

	t.Run("stdio gateway", func(t *testing.T) {
		t.Parallel()
		dir := gwDir(t)
		hook := newGWHook(t)
		cfg := writeGatewayConfig(t, gwPolicy, gwCommand("fs", serverFilesystem(t, dir), nil), gwURL("hook", hook.url))
		e := newWeirEnv(t)
		g := startGatewayStdio(t, gwEnv(e), cfg)

		// Before any private read, the sink works.
		if text, isErr := g.call("hook__post", map[string]any{"to": "https://hooks.example/a", "body": "build 88 is green"}); isErr {
			t.Fatalf("a benign post before any read was refused: %s", text)
		}

		// Stdio upstream → HTTP upstream.
		if text, isErr := g.call("fs__read_text_file", map[string]any{"path": filepath.Join(dir, "note.md")}); isErr || !strings.Contains(text, gwNote) {
			t.Fatalf("reading the note: isError %v, %q", isErr, text)
		}
		text, isErr := g.call("hook__post", map[string]any{"to": "https://hooks.example/a", "body": "fyi: " + gwNote})
		if !isErr || !contains(text, "Weir blocked this call to hook/post", "flow.exfiltration", "fs/read_text_file") {
			t.Errorf("the note leaked through hook__post (isError %v): %s", isErr, text)
		}
		if strings.Contains(text, "Tromsø") {
			t.Errorf("the block message quotes the note: %s", text)
		}
		if hook.receivedAny("Tromsø", gwNote[:40]) {
			t.Errorf("the hook received the note: %q", hook.received())
		}
		// Unrelated posts still go.
		if text, isErr := g.call("hook__post", map[string]any{"to": "https://hooks.example/a", "body": "build 89 is green"}); isErr {
			t.Errorf("a benign post after the read was refused: %s", text)
		}

		// HTTP upstream → stdio upstream.
		if text, isErr := g.call("hook__fetch_record", map[string]any{"id": "4471"}); isErr || text != gwRecord {
			t.Fatalf("fetching the record: isError %v, %q", isErr, text)
		}
		out := filepath.Join(dir, "exported.txt")
		text, isErr = g.call("fs__write_file", map[string]any{"path": out, "content": gwRecord})
		if !isErr || !contains(text, "Weir blocked this call to fs/write_file", "flow.exfiltration", "hook/fetch_record") {
			t.Errorf("the record leaked through fs__write_file (isError %v): %s", isErr, text)
		}
		if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the filesystem server wrote %s: %v", out, err)
		}

		// Another client session (another gateway process, another
		// WEIR_SESSION) has read nothing: the same post goes there.
		other := *e
		other.session = e.session + "-other"
		g2 := startGatewayStdio(t, gwEnv(&other), cfg)
		if text, isErr := g2.call("hook__post", map[string]any{"to": "https://hooks.example/b", "body": "fyi: " + gwNote}); isErr {
			t.Errorf("another session's post was refused: %s", text)
		}
		if !hook.receivedAny("Tromsø") {
			t.Errorf("the other session's post did not reach the hook: %q", hook.received())
		}
		gwVerifyAudit(t, e.home)
	})

	t.Run("http gateway and weir run", func(t *testing.T) {
		t.Parallel()
		dir := gwDir(t)
		hook := newGWHook(t)
		cfg := writeGatewayConfig(t, gwPolicy, gwURL("hook", hook.url))
		e := newWeirEnv(t)
		e.session = "shared-" + strconv.FormatInt(time.Now().UnixNano(), 36)
		gw := startGatewayHTTP(t, gwEnv(e), cfg)
		ctx := ctxT(t, 90*time.Second)

		// weir run, same WEIR_HOME, WEIR_SESSION and policy.
		cmd := exec.Command(weirBin, append([]string{"run", "--name", "files", "--policy", filepath.Join(filepath.Dir(cfg), "policy.yaml"), "--"}, serverFilesystem(t, dir)...)...)
		cmd.Env = gwEnv(e)
		stderr := &syncBuffer{}
		cmd.Stderr = stderr
		files, err := mcp.NewClient(&mcp.Implementation{Name: "weir-e2e-gateway-run", Version: "1.0.0"}, nil).
			Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatalf("connecting to weir run: %v\n%s", err, stderr.String())
		}
		t.Cleanup(func() { files.Close() })

		// WEIR_SESSION is the gateway's default session, as it is weir run's.
		gateway := gwConnect(t, ctx, gw.endpoint(), nil, "2025-11-25", nil)
		other := gwConnect(t, ctx, gw.endpoint(), http.Header{"Weir-Session": {"someone-else"}}, "2025-11-25", nil)

		// weir run → weir gateway.
		if text, isErr := gwGoCall(t, ctx, files, "read_text_file", map[string]any{"path": filepath.Join(dir, "note.md")}); isErr || !strings.Contains(text, gwNote) {
			t.Fatalf("reading the note through weir run: isError %v, %q", isErr, text)
		}
		text, isErr := gwGoCall(t, ctx, gateway, "hook__post", map[string]any{"to": "https://hooks.example/a", "body": gwNote})
		if !isErr || !contains(text, "Weir blocked this call to hook/post", "flow.exfiltration", "files/read_text_file") {
			t.Errorf("the note read through weir run leaked through the gateway (isError %v): %s", isErr, text)
		}
		if hook.receivedAny("Tromsø") {
			t.Errorf("the hook received the note: %q", hook.received())
		}

		// weir gateway → weir run.
		if text, isErr := gwGoCall(t, ctx, gateway, "hook__fetch_record", map[string]any{}); isErr || text != gwRecord {
			t.Fatalf("fetching the record through the gateway: isError %v, %q", isErr, text)
		}
		out := filepath.Join(dir, "exported.txt")
		text, isErr = gwGoCall(t, ctx, files, "write_file", map[string]any{"path": out, "content": gwRecord})
		if !isErr || !contains(text, "Weir blocked this call to files/write_file", "flow.exfiltration", "hook/fetch_record") {
			t.Errorf("the record fetched through the gateway leaked through weir run (isError %v): %s", isErr, text)
		}
		if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the filesystem server wrote %s: %v", out, err)
		}

		// A session named otherwise shares nothing.
		if text, isErr := gwGoCall(t, ctx, other, "hook__post", map[string]any{"to": "https://hooks.example/b", "body": gwNote}); isErr {
			t.Errorf("a post in another Weir-Session was refused: %s", text)
		}
		if !hook.receivedAny("Tromsø") {
			t.Errorf("the other session's post did not reach the hook: %q", hook.received())
		}
		if strings.Contains(gw.out.String(), "Tromsø") || strings.Contains(gw.out.String(), "Halvorsen") {
			t.Errorf("a private text appeared in the gateway's log:\n%s", gw.out.String())
		}
		gwVerifyAudit(t, e.home)
	})
}

// TestGatewayRestart: a stdio upstream that exits (the fake server's crash
// tool) is restarted with backoff. Every call gets an answer, the other
// upstream keeps working while it is down, the client is told to list
// again, later calls reach the new process, and in HTTP mode /healthz
// reports the upstream down, then up.
func TestGatewayRestart(t *testing.T) {
	t.Parallel()
	ev := startEverything(t, false)
	fakeEntry := gwCommand("fake", fake(), map[string]string{"WEIR_E2E_FAKE": "normal"})

	t.Run("stdio", func(t *testing.T) {
		t.Parallel()
		cfg := writeGatewayConfig(t, "", fakeEntry, gwURL("ev", ev))
		g := startGatewayStdio(t, gwEnv(newWeirEnv(t)), cfg)
		tools := g.names("tools/list", "tools", "name")
		if !slices.Contains(tools, "fake__echo") || !slices.Contains(tools, "fake__crash") || !slices.Contains(tools, "ev__test_simple_text") {
			t.Fatalf("tools %v", tools)
		}
		if text, isErr := g.call("fake__echo", map[string]any{"round": 0}); isErr || !strings.Contains(text, `"round":0`) {
			t.Fatalf("fake__echo before the crash: isError %v, %q", isErr, text)
		}

		for round := 1; round <= 2; round++ {
			since := len(g.tr.lines)
			m := g.req("tools/call", map[string]any{"name": "fake__crash", "arguments": map[string]any{}})
			if m.Error == nil {
				if _, isErr := gwResultText(t, m.Result); !isErr {
					t.Errorf("round %d: fake__crash answered with a result: %s", round, m.Result)
				}
			} else if !strings.Contains(m.Error.Message, "fake") {
				t.Errorf("round %d: fake__crash: error %d %q does not name the server", round, m.Error.Code, m.Error.Message)
			}
			// The other upstream works while fake is down.
			if text, isErr := g.call("ev__test_simple_text", map[string]any{}); isErr || text == "" {
				t.Errorf("round %d: ev__test_simple_text while fake restarts: isError %v, %q", round, isErr, text)
			}
			// (Calls to fake sent while it goes down: the next subtest.)
			if _, ok := g.awaitNotification("notifications/tools/list_changed", since, 20*time.Second); !ok {
				t.Fatalf("round %d: no notifications/tools/list_changed within 20s of the crash; stderr:\n%s", round, g.p.stderr.String())
			}
			if tools := g.names("tools/list", "tools", "name"); !slices.Contains(tools, "fake__echo") || !slices.Contains(tools, "ev__test_simple_text") {
				t.Errorf("round %d: tools after the restart: %v", round, tools)
			}
			if text, isErr := g.call("fake__echo", map[string]any{"round": round}); isErr || !strings.Contains(text, fmt.Sprintf(`"round":%d`, round)) {
				t.Errorf("round %d: fake__echo after the restart: isError %v, %q", round, isErr, text)
			}
		}
		if !strings.Contains(g.p.stderr.String(), "restarting") {
			t.Errorf("the gateway did not log the restart; stderr:\n%s", g.p.stderr.String())
		}
	})

	// Calls in flight and queued when the server exits: each one answered
	// exactly once (a result, or an error saying the server is down and
	// restarting), none lost, and the server comes back.
	t.Run("stdio calls in flight", func(t *testing.T) {
		t.Parallel()
		cfg := writeGatewayConfig(t, "", fakeEntry, gwURL("ev", ev))
		g := startGatewayStdio(t, gwEnv(newWeirEnv(t)), cfg)
		g.names("tools/list", "tools", "name")
		since := len(g.tr.lines)
		ids := []string{g.line("tools/call", map[string]any{"name": "fake__crash", "arguments": map[string]any{}})}
		for i := range 20 {
			ids = append(ids, g.line("tools/call", map[string]any{"name": "fake__echo", "arguments": map[string]any{"i": i}}))
		}
		answers := map[string]int{}
		deadline := time.After(20 * time.Second)
		for len(answers) < len(ids) {
			select {
			case l, ok := <-g.p.lines:
				if !ok {
					t.Fatalf("the gateway closed its output; stderr:\n%s", g.p.stderr.String())
				}
				g.tr.lines = append(g.tr.lines, l)
				if m := parse(t, l); !m.isRequest() && !m.isNotification() {
					answers[string(m.ID)]++
					if m.Error != nil && string(m.ID) != ids[0] && !contains(m.Error.Message, `"fake"`) {
						t.Errorf("id %s: error %d %q does not name the server", m.ID, m.Error.Code, m.Error.Message)
					}
				}
			case <-deadline:
				var lost []string
				for _, id := range ids {
					if answers[id] == 0 {
						lost = append(lost, id)
					}
				}
				// Calls queued for a member's relay as it stopped reading
				// are answered by the mux when the relay ends.
				t.Fatalf("%d of %d tools/call requests pipelined to a stdio upstream as it exited were never answered (ids %v; %s was fake__crash) within 20s; stderr:\n%s",
					len(lost), len(ids), lost, ids[0], g.p.stderr.String())
			}
		}
		for id, n := range answers {
			if n != 1 {
				t.Errorf("id %s answered %d times", id, n)
			}
		}
		if _, ok := g.awaitNotification("notifications/tools/list_changed", since, 20*time.Second); !ok {
			t.Fatal("no notifications/tools/list_changed after the crash")
		}
		if text, isErr := g.call("fake__echo", map[string]any{"after": true}); isErr || !strings.Contains(text, `"after":true`) {
			t.Errorf("fake__echo after the restart: isError %v, %q", isErr, text)
		}
	})

	t.Run("http healthz", func(t *testing.T) {
		t.Parallel()
		cfg := writeGatewayConfig(t, "", fakeEntry, gwURL("ev", ev))
		e := newWeirEnv(t)
		e.session = ""
		gw := startGatewayHTTP(t, gwEnv(e), cfg)
		ctx := ctxT(t, 90*time.Second)
		changed := make(chan struct{}, 16)
		cs := gwConnect(t, ctx, gw.endpoint(), nil, "2025-11-25", &mcp.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
				select {
				case changed <- struct{}{}:
				default:
				}
			},
		})
		if text, isErr := gwGoCall(t, ctx, cs, "fake__echo", map[string]any{"n": 1}); isErr || !strings.Contains(text, `"n":1`) {
			t.Fatalf("fake__echo: isError %v, %q", isErr, text)
		}
		code, h, err := gw.health()
		if err != nil || code != http.StatusOK || !h.Upstreams["fake"] || !h.Upstreams["ev"] || h.Status != "ok" {
			t.Fatalf("/healthz before the crash: %d %+v %v", code, h, err)
		}

		// Watch /healthz through the crash and the restart.
		type sample struct {
			code int
			fake bool
		}
		var (
			mu      sync.Mutex
			samples []sample
		)
		stop := make(chan struct{})
		watched := make(chan struct{})
		go func() {
			defer close(watched)
			for {
				select {
				case <-stop:
					return
				case <-time.After(10 * time.Millisecond):
				}
				if code, h, err := gw.health(); err == nil {
					mu.Lock()
					samples = append(samples, sample{code, h.Upstreams["fake"]})
					mu.Unlock()
				}
			}
		}()

		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fake__crash", Arguments: map[string]any{}})
		if err == nil && !res.IsError {
			t.Errorf("fake__crash answered with a result")
		}
		if text, isErr := gwGoCall(t, ctx, cs, "ev__test_simple_text", map[string]any{}); isErr || text == "" {
			t.Errorf("ev__test_simple_text while fake restarts: isError %v, %q", isErr, text)
		}
		select {
		case <-changed:
		case <-time.After(20 * time.Second):
			t.Errorf("no notifications/tools/list_changed reached the go-sdk client within 20s of the crash")
		}
		// Down, then up again: /healthz says so, and calls reach the new
		// process.
		var down, up int
		deadline := time.Now().Add(20 * time.Second)
		for {
			mu.Lock()
			down = slices.IndexFunc(samples, func(s sample) bool { return !s.fake })
			up = -1
			if down >= 0 {
				up = slices.IndexFunc(samples[down:], func(s sample) bool { return s.fake && s.code == http.StatusOK })
			}
			n := len(samples)
			mu.Unlock()
			if up >= 0 {
				break
			}
			if time.Now().After(deadline) {
				close(stop)
				<-watched
				if down < 0 {
					t.Fatalf("/healthz never reported fake down in %d samples; output:\n%s", n, gw.out.String())
				}
				t.Fatalf("/healthz did not report fake up again within 20s of it going down; output:\n%s", gw.out.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
		close(stop)
		<-watched
		mu.Lock()
		if s := samples[down]; s.code != http.StatusServiceUnavailable {
			t.Errorf("/healthz with fake down answered %d, want 503", s.code)
		}
		mu.Unlock()
		if text, isErr := gwGoCall(t, ctx, cs, "fake__echo", map[string]any{"n": 2}); isErr || !strings.Contains(text, `"n":2`) {
			t.Errorf("fake__echo after the restart: isError %v, %q", isErr, text)
		}
		if code, h, err := gw.health(); err != nil || code != http.StatusOK || h.Status != "ok" {
			t.Errorf("/healthz after the restart: %d %+v %v", code, h, err)
		}
	})
}

// gwTSClient is a TypeScript SDK Streamable HTTP client run on the
// gateway: argv[1] is the endpoint, argv[2] the note's path.
const gwTSClient = `
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
const [url, notePath] = process.argv.slice(1);
const text = (c) => (c ?? []).filter((x) => x.type === "text").map((x) => x.text).join("");
const transport = new StreamableHTTPClientTransport(new URL(url));
const client = new Client({ name: "weir-e2e-gateway-ts", version: "1.0.0" });
await client.connect(transport);
const out = { serverName: client.getServerVersion()?.name ?? null, sessionId: !!transport.sessionId };
out.tools = (await client.listTools()).tools.map((t) => t.name).sort();
const simple = await client.callTool({ name: "ev__test_simple_text", arguments: {} });
out.simple = text(simple.content);
const note = await client.callTool({ name: "fs__read_text_file", arguments: { path: notePath } });
out.note = text(note.content);
out.prompts = (await client.listPrompts()).prompts.map((p) => p.name).sort();
const res = await client.readResource({ uri: "ev+test://static-text" });
out.resourceUri = res.contents[0]?.uri ?? null;
out.resourceText = res.contents[0]?.text ?? null;
try {
  await client.callTool({ name: "nope__x", arguments: {} });
  out.unknown = "no error";
} catch (e) {
  out.unknown = String(e?.message ?? e);
}
await transport.terminateSession().catch(() => {});
await client.close();
process.stdout.write(JSON.stringify(out) + "\n");
`

// TestGatewayHTTP: weir gateway over Streamable HTTP, driven by the go-sdk
// client (a 2025-11-25 session, and 2026-07-28 stateless requests) and by
// the TypeScript SDK client.
func TestGatewayHTTP(t *testing.T) {
	t.Parallel()
	dir := gwDir(t)
	ev := startEverything(t, false)
	cfg := writeGatewayConfig(t, "", gwCommand("fs", serverFilesystem(t, dir), nil), gwURL("ev", ev))
	e := newWeirEnv(t)
	e.session = ""
	gw := startGatewayHTTP(t, gwEnv(e), cfg)
	note := filepath.Join(dir, "note.md")

	t.Run("go-sdk session", func(t *testing.T) {
		ctx := ctxT(t, 60*time.Second)
		cs := gwConnect(t, ctx, gw.endpoint(), nil, "2025-11-25", nil)
		if info := cs.InitializeResult(); info == nil || info.ServerInfo.Name != "weir-gateway" {
			t.Errorf("initialize result %+v", info)
		}
		var names []string
		for tool, err := range cs.Tools(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, tool.Name)
		}
		if !slices.Contains(names, "fs__read_text_file") || !slices.Contains(names, "ev__test_simple_text") {
			t.Errorf("tools %v", names)
		}
		if text, isErr := gwGoCall(t, ctx, cs, "fs__read_text_file", map[string]any{"path": note}); isErr || !strings.Contains(text, gwNote) {
			t.Errorf("fs__read_text_file: isError %v, %q", isErr, text)
		}
		if text, isErr := gwGoCall(t, ctx, cs, "ev__test_simple_text", map[string]any{}); isErr || text != "This is a simple text response for testing." {
			t.Errorf("ev__test_simple_text: isError %v, %q", isErr, text)
		}
		prompts, err := cs.ListPrompts(ctx, nil)
		if err != nil || !slices.ContainsFunc(prompts.Prompts, func(p *mcp.Prompt) bool { return p.Name == "ev__test_simple_prompt" }) {
			t.Errorf("prompts/list: %v", err)
		}
		if p, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "ev__test_simple_prompt"}); err != nil || len(p.Messages) == 0 {
			t.Errorf("prompts/get ev__test_simple_prompt: %v", err)
		}
		r, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "ev+test://static-text"})
		if err != nil || len(r.Contents) == 0 || r.Contents[0].URI != "ev+test://static-text" || r.Contents[0].Text == "" {
			t.Errorf("resources/read ev+test://static-text: %v %+v", err, r)
		}
		_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "nope__x", Arguments: map[string]any{}})
		if err == nil || !strings.Contains(err.Error(), `no such tool "nope__x"`) {
			t.Errorf("calling nope__x: %v, want the gateway's no such tool error", err)
		}
	})

	t.Run("go-sdk stateless", func(t *testing.T) {
		ctx := ctxT(t, 60*time.Second)
		cs := gwConnect(t, ctx, gw.endpoint(), http.Header{"Weir-Session": {"stateless-" + t.Name()}}, "2026-07-28", nil)
		tools, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		if !slices.ContainsFunc(tools.Tools, func(tool *mcp.Tool) bool { return tool.Name == "fs__read_text_file" }) ||
			!slices.ContainsFunc(tools.Tools, func(tool *mcp.Tool) bool { return tool.Name == "ev__test_simple_text" }) {
			t.Errorf("tools/list over stateless requests lacks a server's tools")
		}
		if text, isErr := gwGoCall(t, ctx, cs, "fs__read_text_file", map[string]any{"path": note}); isErr || !strings.Contains(text, gwNote) {
			t.Errorf("fs__read_text_file: isError %v, %q", isErr, text)
		}
		if text, isErr := gwGoCall(t, ctx, cs, "ev__test_simple_text", map[string]any{}); isErr || text != "This is a simple text response for testing." {
			t.Errorf("ev__test_simple_text: isError %v, %q", isErr, text)
		}
	})

	t.Run("go-sdk concurrent sessions", func(t *testing.T) {
		ctx := ctxT(t, 60*time.Second)
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "weir-e2e-gateway-many", Version: "1.0.0"}, nil).
					Connect(ctx, &mcp.StreamableClientTransport{Endpoint: gw.endpoint()}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
				if err != nil {
					errs <- err
					return
				}
				defer cs.Close()
				for j := range 5 {
					res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ev__test_simple_text", Arguments: map[string]any{}})
					if err != nil || res.IsError {
						errs <- fmt.Errorf("session %d call %d: %v", i, j, err)
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})

	t.Run("typescript sdk", func(t *testing.T) {
		npm := npmPeer(t, "node_modules/@modelcontextprotocol/sdk/package.json")
		ctx := ctxT(t, time.Minute)
		cmd := exec.CommandContext(ctx, npm[0], "--input-type=module", "-e", gwTSClient, gw.endpoint(), note)
		cmd.Dir = filepath.Join(repoRoot, "testdata", "npm") // where the SDK resolves from
		stderr := &syncBuffer{}
		cmd.Stderr = stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("TypeScript client: %v\nstderr:\n%s\ngateway:\n%s", err, stderr.String(), gw.out.String())
		}
		var r struct {
			ServerName   string   `json:"serverName"`
			SessionID    bool     `json:"sessionId"`
			Tools        []string `json:"tools"`
			Simple       string   `json:"simple"`
			Note         string   `json:"note"`
			Prompts      []string `json:"prompts"`
			ResourceURI  string   `json:"resourceUri"`
			ResourceText string   `json:"resourceText"`
			Unknown      string   `json:"unknown"`
		}
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatalf("TypeScript client printed %q: %v", out, err)
		}
		if r.ServerName != "weir-gateway" || !r.SessionID {
			t.Errorf("server %q, session id %v", r.ServerName, r.SessionID)
		}
		if !slices.Contains(r.Tools, "fs__read_text_file") || !slices.Contains(r.Tools, "ev__test_simple_text") {
			t.Errorf("tools %v", r.Tools)
		}
		if r.Simple != "This is a simple text response for testing." || !strings.Contains(r.Note, gwNote) {
			t.Errorf("calls: simple %q, note %q", r.Simple, r.Note)
		}
		if !slices.Contains(r.Prompts, "ev__test_simple_prompt") {
			t.Errorf("prompts %v", r.Prompts)
		}
		if r.ResourceURI != "ev+test://static-text" || r.ResourceText == "" {
			t.Errorf("resource %q %q", r.ResourceURI, r.ResourceText)
		}
		if !strings.Contains(r.Unknown, "no such tool") {
			t.Errorf("calling nope__x: %q, want the gateway's no such tool error", r.Unknown)
		}
	})

	if code, h, err := gw.health(); err != nil || code != http.StatusOK || !h.Upstreams["fs"] || !h.Upstreams["ev"] {
		t.Errorf("/healthz at the end: %d %+v %v", code, h, err)
	}
}

// TestGatewayConfigErrors: a configuration weir gateway cannot serve stops
// it before it starts anything, with exit status 2 and a message naming
// the file, line and key. (cmd/weir/testdata/script/gateway.txtar holds
// the exact messages.)
func TestGatewayConfigErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, yaml string
		want       []string
	}{
		{"unknown key", "servers:\n  fs: {command: [echo]}\nlisen: 127.0.0.1:1\n", []string{"gateway.yaml:3:1: lisen: unknown key"}},
		{"unknown server key", "servers:\n  fs: {command: [echo], cmd: [x]}\n", []string{"gateway.yaml:2:25: servers.fs.cmd: unknown key"}},
		{"bad server name", "servers:\n  my_server: {command: [echo]}\n", []string{"gateway.yaml:2:3: servers.my_server:", "letters, digits and '-'"}},
		{"command and url", "servers:\n  both: {command: [echo], url: \"http://127.0.0.1:1/mcp\"}\n", []string{"gateway.yaml:2:9: servers.both:", "not both"}},
		{"neither command nor url", "servers:\n  none: {cwd: /tmp}\n", []string{"gateway.yaml:2:9: servers.none:", "needs command"}},
		{"unset header variable", "servers:\n  web:\n    url: \"http://127.0.0.1:1/mcp\"\n    headers: {Authorization: \"Bearer ${WEIR_E2E_GW_UNSET}\"}\n",
			[]string{"gateway.yaml:4:14: servers.web.headers:", "${WEIR_E2E_GW_UNSET} is not set"}},
		{"duplicate server name", "servers:\n  fs: {command: [echo]}\n  fs: {command: [cat]}\n", []string{"gateway.yaml:3:3: servers.fs", "set twice"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "gateway.yaml"), []byte(c.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			// --stdio, so a configuration wrongly accepted serves an empty
			// stdin and ends instead of taking a port.
			cmd := exec.CommandContext(ctx, weirBin, "gateway", "--config", "gateway.yaml", "--stdio", "--listen", freeLoopbackAddr(t))
			cmd.Dir = dir
			cmd.Env = gwEnv(newWeirEnv(t))
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr syncBuffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// A wrongly accepted configuration gets a request it answers.
			fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
			time.AfterFunc(3*time.Second, func() { stdin.Close() })
			err = cmd.Wait()
			code := cmd.ProcessState.ExitCode()
			if code != 2 {
				t.Errorf("exit %d (%v), want 2; stderr:\n%s", code, err, stderr.String())
			}
			if !contains(stderr.String(), c.want...) {
				t.Errorf("stderr does not name %q:\n%s", c.want, stderr.String())
			}
		})
	}
}
