package e2e

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"
)

// everythingScript is a 2025-11-25 session against server-everything that
// touches every kind of traffic: the handshake, lists, calls with odd
// strings and unknown fields, a server→client request (roots/list, sent by
// the server with id 0) and a client notification that triggers another,
// progress notifications, an unknown method, ping, and two calls in flight
// at once that the server answers out of order.
func everythingScript(t *testing.T, p *peer) *transcript {
	tr := &transcript{}
	step := func(id, line string) msg {
		p.send(line)
		return tr.await(t, p, id)
	}
	step("1", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"weir-e2e","version":"1.0.0"}}}`)
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	step("2", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	step(`"s-3"`, `{"jsonrpc":"2.0","id":"s-3","method":"prompts/list","params":{}}`)
	step("4", `{"jsonrpc":"2.0","id":4,"method":"resources/list"}`)
	step("5", `{"params":{"name":"echo","arguments":{"message":"héllo ☃ \u2028 \"quoted\" \\ back"},"x-extra":{"keep":[1,2,3]}},"method":"tools/call","id":5,"jsonrpc":"2.0"}`)
	step("6", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"get-sum","arguments":{"a":1.5,"b":-2e3}}}`)

	// Two calls in flight: the long one first, answered last.
	p.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"trigger-long-running-operation","arguments":{"duration":1,"steps":3},"_meta":{"progressToken":"p7"}}}`)
	p.send(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo","arguments":{"message":"fast"}}}`)
	tr.await(t, p, "8")
	tr.await(t, p, "7")

	if m := step("9", `{"jsonrpc":"2.0","id":9,"method":"weir/unknown-method","params":{"x":1}}`); m.Error == nil {
		t.Errorf("unknown method: want an error from the server, got %s", m.Result)
	}
	step("10", `{"jsonrpc":"2.0","id":10,"method":"ping"}`)
	p.send(`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`)
	step("11", `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"get-tiny-image","arguments":{}}}`)
	step("12", `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"get-structured-content","arguments":{"location":"Chicago"}}}`)
	step("13", `{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"no-such-tool","arguments":{}}}`)
	tr.drain(t, p, 500*time.Millisecond)
	return tr
}

// TestPassthroughFidelity runs the same session directly against
// server-everything and through weir run, and requires the client to see
// the same bytes: every message, byte for byte.
func TestPassthroughFidelity(t *testing.T) {
	server := serverEverything(t)
	e := newWeirEnv(t)

	direct := everythingScript(t, startPeer(t, e.environ(), server...))
	proxied := everythingScript(t, startPeer(t, e.environ(), e.wrap("everything", server)...))

	compareTranscripts(t, direct, proxied)
	if i, j := indexOfID(t, proxied, "8"), indexOfID(t, proxied, "7"); i > j {
		t.Errorf("the server did not answer out of order through weir (id 8 at %d, id 7 at %d)", i, j)
	}
}

// compareTranscripts requires the same multiset of lines. Order between
// independent messages (a log notification and a response) is the
// server's timing, so it is compared per request id, not globally.
func compareTranscripts(t *testing.T, direct, proxied *transcript) {
	t.Helper()
	a, b := sortedLines(direct), sortedLines(proxied)
	if len(a) != len(b) {
		t.Errorf("direct session saw %d messages, proxied %d", len(a), len(b))
	}
	for _, l := range a {
		if !slices.ContainsFunc(b, func(x []byte) bool { return bytes.Equal(x, l) }) {
			t.Errorf("the client saw this message directly but not through weir:\n%s", l)
		}
	}
	for _, l := range b {
		if !slices.ContainsFunc(a, func(x []byte) bool { return bytes.Equal(x, l) }) {
			t.Errorf("the client saw this message through weir but not directly:\n%s", l)
		}
	}
	if !t.Failed() {
		t.Logf("%d messages identical byte for byte", len(a))
	}
}

func sortedLines(tr *transcript) [][]byte {
	out := slices.Clone(tr.lines)
	slices.SortFunc(out, bytes.Compare)
	return out
}

func indexOfID(t *testing.T, tr *transcript, id string) int {
	for i, l := range tr.lines {
		m := parse(t, l)
		if m.Method == "" && string(m.ID) == id {
			return i
		}
	}
	t.Fatalf("no response with id %s", id)
	return -1
}

// TestPassthroughModernProtocol does the same for protocol 2026-07-28 (no
// handshake, _meta on every request, server/discover, resultType) against
// the go-sdk's conformance everything-server.
func TestPassthroughModernProtocol(t *testing.T) {
	e := newWeirEnv(t)
	script := func(p *peer) *transcript {
		tr := &transcript{}
		meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"weir-e2e","version":"1"}}`
		for i, req := range []string{
			`"method":"server/discover","params":{` + meta + `}`,
			`"method":"tools/list","params":{` + meta + `}`,
			`"method":"tools/call","params":{"name":"test_simple_text","arguments":{},` + meta + `}`,
			`"method":"tools/call","params":{"name":"test_image_content","arguments":{},` + meta + `}`,
			`"method":"tools/call","params":{"name":"test_error_handling","arguments":{},` + meta + `}`,
			`"method":"prompts/list","params":{` + meta + `}`,
			`"method":"resources/read","params":{"uri":"test://static-text",` + meta + `}`,
			`"method":"no/such-method","params":{` + meta + `}`,
		} {
			id := fmt.Sprint(i + 1)
			p.send(`{"jsonrpc":"2.0","id":` + id + `,` + req + `}`)
			tr.await(t, p, id)
		}
		return tr
	}
	direct := script(startPeer(t, e.environ(), everythingBin))
	proxied := script(startPeer(t, e.environ(), e.wrap("conformance", []string{everythingBin})...))
	compareTranscripts(t, direct, proxied)
}
