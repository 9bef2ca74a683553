package transport

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/weir-sec/weir/internal/jsonrpc"
)

// recorder keeps the method and headers of every request an upstream got.
type recorder struct {
	mu   sync.Mutex
	reqs []http.Request
}

func (r *recorder) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.reqs = append(r.reqs, http.Request{Method: req.Method, Header: req.Header.Clone()})
		r.mu.Unlock()
		h.ServeHTTP(w, req)
	})
}

func (r *recorder) all() []http.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]http.Request(nil), r.reqs...)
}

// sdkUpstream is a real go-sdk Streamable HTTP server on loopback.
func sdkUpstream(t *testing.T, stateless bool) (*mcp.Server, string, *recorder) {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "echo"}, func(ctx context.Context, req *mcp.CallToolRequest, in struct {
		Text string `json:"text"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	rec := &recorder{}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: stateless})
	srv := httptest.NewServer(rec.wrap(h))
	t.Cleanup(srv.Close)
	return s, srv.URL, rec
}

func readMsg(t *testing.T, u *HTTPUpstream) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := u.Read(ctx)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%q: %v", b, err)
	}
	return m
}

// readAnswer reads until the answer to id, skipping notifications.
func readAnswer(t *testing.T, u *HTTPUpstream, id float64) map[string]any {
	t.Helper()
	for range 50 {
		m := readMsg(t, u)
		if m["id"] == id {
			return m
		}
	}
	t.Fatalf("no answer to %v", id)
	return nil
}

func write(t *testing.T, u *HTTPUpstream, msg string) {
	t.Helper()
	if err := u.Write(context.Background(), []byte(msg)); err != nil {
		t.Fatalf("Write(%s): %v", msg, err)
	}
}

const upInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"weir-test","version":"1"}}}`

func TestHTTPUpstreamSession(t *testing.T) {
	s, url, rec := sdkUpstream(t, false)
	u := NewHTTPUpstream(url, HTTPOptions{Header: http.Header{"Authorization": {"Bearer upstream-token"}}})
	defer u.Close()
	write(t, u, upInit)
	if m := readAnswer(t, u, 1); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	if u.sessionID() == "" {
		t.Fatal("no session id kept from the initialize answer")
	}
	write(t, u, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	write(t, u, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`)
	m := readAnswer(t, u, 2)
	if !strings.Contains(mustJSON(m), `"text":"hi"`) {
		t.Fatalf("echo: %v", m)
	}
	// Something outside any request arrives on the GET stream.
	deadline := time.Now().Add(5 * time.Second)
	for !hasGET(rec) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !hasGET(rec) {
		t.Fatal("no standalone GET stream was opened after notifications/initialized")
	}
	s.AddTool(&mcp.Tool{Name: "later", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	if m := readMsg(t, u); m["method"] != "notifications/tools/list_changed" {
		t.Fatalf("standalone stream gave %v", m)
	}
	for _, r := range rec.all() {
		if got := r.Header.Get("Authorization"); got != "Bearer upstream-token" {
			t.Errorf("%s request carried Authorization %q", r.Method, got)
		}
		if r.Method != http.MethodPost || r.Header.Get(HeaderSession) == "" {
			continue
		}
		if r.Header.Get(HeaderProtocol) != "2025-11-25" {
			t.Errorf("request in the session without the negotiated %s: %q", HeaderProtocol, r.Header.Get(HeaderProtocol))
		}
	}
	// CloseWrite ends the upstream session with DELETE, then Read ends.
	if err := u.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		if _, err := u.Read(ctx); err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("Read after CloseWrite: %v, want io.EOF", err)
			}
			break
		}
	}
	var deleted bool
	for _, r := range rec.all() {
		deleted = deleted || r.Method == http.MethodDelete
	}
	if !deleted {
		t.Error("no DELETE ended the upstream session")
	}
}

func hasGET(rec *recorder) bool {
	for _, r := range rec.all() {
		if r.Method == http.MethodGet {
			return true
		}
	}
	return false
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// Every request is answered once, whatever goes wrong with its exchange.
func TestHTTPUpstreamFailuresAnswer(t *testing.T) {
	cases := []struct {
		name    string
		handler http.HandlerFunc
		want    string
	}{
		{"500", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", 500) }, "HTTP 500: boom"},
		{"202 for a request", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(202) }, "without answering"},
		{"stream ends early", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n")
		}, "ended before it answered"},
		{"JSON that answers nothing", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":999,"result":{}}`)
		}, "without a JSON-RPC answer"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(c.handler)
			defer srv.Close()
			u := NewHTTPUpstream(srv.URL, HTTPOptions{})
			defer u.Close()
			write(t, u, `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`)
			m := readAnswer(t, u, 5)
			e, _ := m["error"].(map[string]any)
			if e == nil || e["code"] != float64(jsonrpc.CodeServerUnavailable) || !strings.Contains(e["message"].(string), c.want) {
				t.Fatalf("answer = %v, want an error containing %q", m, c.want)
			}
		})
	}
	t.Run("unreachable", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		url := srv.URL
		srv.Close()
		u := NewHTTPUpstream(url, HTTPOptions{})
		defer u.Close()
		write(t, u, `{"jsonrpc":"2.0","id":6,"method":"tools/list"}`)
		if m := readAnswer(t, u, 6); m["error"] == nil {
			t.Fatalf("answer = %v", m)
		}
	})
}

// An answer over the limit is an OversizeError carrying the request's id.
func TestHTTPUpstreamOversize(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":7,"result":{"x":"`+strings.Repeat("a", 5000)+`"}}`)
	}))
	defer srv.Close()
	u := NewHTTPUpstream(srv.URL, HTTPOptions{MaxMessage: 1000})
	defer u.Close()
	write(t, u, `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := u.Read(ctx)
	var over *jsonrpc.OversizeError
	if !errors.As(err, &over) || string(over.ID) != "7" {
		t.Fatalf("Read = %v, want an OversizeError for id 7", err)
	}
}

// A 2026-07-28 request names its method and name in headers, which a
// stateless go-sdk server checks.
func TestHTTPUpstreamStatelessHeaders(t *testing.T) {
	_, url, rec := sdkUpstream(t, true)
	u := NewHTTPUpstream(url, HTTPOptions{})
	defer u.Close()
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	write(t, u, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+meta+`}}`)
	if m := readAnswer(t, u, 1); m["result"] == nil {
		t.Fatalf("tools/list: %v", m)
	}
	write(t, u, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"},`+meta+`}}`)
	if m := readAnswer(t, u, 2); m["result"] == nil {
		t.Fatalf("tools/call: %v", m)
	}
	last := rec.all()[len(rec.all())-1]
	if last.Header.Get(HeaderMethod) != "tools/call" || last.Header.Get(HeaderName) != "echo" || last.Header.Get(HeaderProtocol) != Stateless {
		t.Errorf("headers = %v", last.Header)
	}
}
