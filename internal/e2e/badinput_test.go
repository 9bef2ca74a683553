package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weir-sec/weir/internal/flow"
	"github.com/weir-sec/weir/internal/store"
)

// startFake runs the fake server behind weir run, initialized.
func startFake(t *testing.T, e *weirEnv, mode string, flags ...string) (*peer, *transcript) {
	t.Helper()
	p := startPeer(t, e.environ("WEIR_E2E_FAKE="+mode, "WEIR_E2E_HUGE=300000"), e.wrap("fake", fake(), flags...)...)
	tr := &transcript{}
	p.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	tr.await(t, p, "1")
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	tr.await(t, p, "2")
	return p, tr
}

func wantError(t *testing.T, m msg, code int, substr string) {
	t.Helper()
	if m.Error == nil {
		t.Fatalf("want a JSON-RPC error %d, got result %s", code, m.Result)
	}
	if m.Error.Code != code || !strings.Contains(m.Error.Message, substr) {
		t.Errorf("error %d %q, want %d containing %q", m.Error.Code, m.Error.Message, code, substr)
	}
}

// TestBadClientInput sends what a broken client might, and requires a
// clear JSON-RPC error for each and a proxy that keeps serving.
func TestBadClientInput(t *testing.T) {
	e := newWeirEnv(t)
	p, tr := startFake(t, e, "normal", "--max-message-bytes", "4096")
	echoWorks := func(id string) {
		t.Helper()
		p.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"echo","arguments":{"x":1}}}`)
		if m := tr.await(t, p, id); m.Error != nil {
			t.Fatalf("proxy stopped serving after bad input: %+v", m.Error)
		}
	}
	tests := []struct {
		name, line string
		id         string
		code       int
		substr     string
	}{
		{"not JSON", `{"jsonrpc":"2.0","id":3,"method":`, "3", -32700, "not valid JSON"},
		{"not JSON, no id", `{"jsonrpc":"2.0","method":"tools/call","par`, "null", -32700, "not valid JSON"},
		{"batch", `[{"jsonrpc":"2.0","id":4,"method":"ping"}]`, "null", -32600, "batches are not supported"},
		{"not an object", `"hello"`, "null", -32600, "must be a JSON object"},
		{"wrong version", `{"jsonrpc":"1.0","id":5,"method":"ping"}`, "5", -32600, "version"},
		{"duplicate tool name", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","NAME":"crash","arguments":{}}}`, "7", -32602, "duplicate member name"},
		{"duplicate method", `{"jsonrpc":"2.0","id":8,"method":"ping","method":"tools/call","params":{"name":"crash"}}`, "8", -32600, "duplicate member name"},
		{"duplicate id", `{"jsonrpc":"2.0","id":9,"id":10,"method":"ping"}`, "null", -32600, "duplicate member name"},
		{"method in another case", `{"jsonrpc":"2.0","id":12,"Method":"tools/call","params":{"name":"crash"}}`, "12", -32600, "only in case"},
		{"oversized", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"echo","arguments":{"x":"` + strings.Repeat("a", 10000) + `"}}}`, "6", -32002, "exceeds the limit of 4096 bytes"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p.send(tt.line)
			wantError(t, tr.await(t, p, tt.id), tt.code, tt.substr)
			echoWorks(fmt.Sprint(100 + i))
		})
	}
}

// TestServerCrashMidRequest: the server exits while requests are in flight.
// Each gets exactly one error answer, the proxy shuts down cleanly with the
// server's status, and the state and audit log stay consistent.
func TestServerCrashMidRequest(t *testing.T) {
	e := newWeirEnv(t)
	p, tr := startFake(t, e, "normal")
	p.send(`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"echo","arguments":{"before":"crash"}}}`)
	tr.await(t, p, "10")
	p.send(`{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"crash","arguments":{}}}`)
	wantError(t, tr.await(t, p, "11"), -32001, `the MCP server "fake" ended before answering tools/call`)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		t.Fatal("proxy still running 10s after its server crashed")
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 3 {
		t.Errorf("proxy exit status %d, want the server's 3", code)
	}
	// Nothing else arrives: one answer per request.
	tr.drain(t, p, 200*time.Millisecond)
	answers := 0
	for _, l := range tr.lines {
		if strings.Contains(string(l), `"id":11`) {
			answers++
		}
	}
	if answers != 1 {
		t.Errorf("request 11 got %d answers, want exactly 1", answers)
	}
	verifyAudit(t, e.home)
	st, err := store.OpenSQLite(context.Background(), filepath.Join(e.home, "state.db"))
	if err != nil {
		t.Fatalf("state store unusable after a crash: %v", err)
	}
	defer st.Close()
	var mirror flow.Session
	if err := st.Sync(context.Background(), e.session, &mirror); err != nil {
		t.Errorf("syncing after a crash: %v", err)
	}
}

// TestBadServerOutput: a server that sends a truncated response, garbage,
// or a response over the size limit. The requests still get one answer
// each and the proxy keeps serving.
func TestBadServerOutput(t *testing.T) {
	e := newWeirEnv(t)
	p, tr := startFake(t, e, "normal", "--max-message-bytes", "100000")
	p.send(`{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"truncated","arguments":{}}}`)
	wantError(t, tr.await(t, p, "20"), -32003, "malformed response")
	p.send(`{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"huge","arguments":{}}}`)
	wantError(t, tr.await(t, p, "21"), -32003, "over Weir's limit of 100000")
	p.send(`{"jsonrpc":"2.0","id":22,"method":"tools/call","params":{"name":"garbage","arguments":{"ok":true}}}`)
	if m := tr.await(t, p, "22"); m.Error != nil {
		t.Errorf("a garbage line before a good answer lost the answer: %+v", m.Error)
	}
	if !strings.Contains(p.stderr.String(), "malformed message from server") {
		t.Errorf("stderr does not report the garbage line:\n%s", p.stderr.String())
	}
	for _, l := range tr.lines {
		if strings.Contains(string(l), "not JSON") {
			t.Errorf("garbage reached the client: %s", l)
		}
	}
}

// TestClientClosesInput: the client goes away. The proxy closes the
// server's input and exits; a server that ignores that is terminated.
func TestClientClosesInput(t *testing.T) {
	for _, tt := range []struct{ mode, grace string }{{"normal", "5s"}, {"stubborn", "300ms"}} {
		mode := tt.mode
		t.Run(mode, func(t *testing.T) {
			e := newWeirEnv(t)
			p, _ := startFake(t, e, mode, "--shutdown-grace", tt.grace)
			start := time.Now()
			code := p.close()
			if d := time.Since(start); d > 4*time.Second {
				t.Errorf("proxy took %v to exit after its client left", d)
			}
			if mode == "normal" && code != 0 {
				t.Errorf("exit status %d, want 0; stderr:\n%s", code, p.stderr.String())
			}
		})
	}
}

// TestStdoutIsProtocol: with logging at its most verbose, nothing but
// JSON-RPC reaches stdout (DESIGN rule 4).
func TestStdoutIsProtocol(t *testing.T) {
	e := newWeirEnv(t)
	p := startPeer(t, e.environ("WEIR_E2E_FAKE=normal", "WEIR_LOG=debug"), e.wrap("fake", fake())...)
	tr := &transcript{}
	p.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
	tr.await(t, p, "1")
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{}}}`)
	tr.await(t, p, "2")
	p.send(`{broken`)
	tr.await(t, p, "null")
	p.close()
	for _, l := range tr.lines {
		parse(t, l) // fails the test on anything that is not JSON
	}
	if !strings.Contains(p.stderr.String(), "level=DEBUG") {
		t.Errorf("debug logging did not reach stderr:\n%s", p.stderr.String())
	}
}
