package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestCrossBoundaryConformance replays the behaviours the MCP interceptors
// working group's conformance suite states for secrets (SEP-2624,
// modelcontextprotocol/experimental-ext-interceptors,
// conformance/fixtures/behavior/) through real proxies, with the default
// policy and heuristic labels, over two real npm servers: server-filesystem
// (where the secret is read) and server-memory (a local store, standing for
// the fixtures' sqlite server):
//
//   - relaybleed-*: a secret read from one server and written to another
//     is denied, whatever form the write takes;
//   - same-origin-writeback-allowed: writing it back to the server it was
//     read from is allowed;
//   - no-prior-read-allowed: a secret-shaped value never read is allowed;
//   - session-isolation: another session may send what this one read.
//
// And the everyday case the fixtures stand guard over: an edited note
// saved where it was read from, and private prose kept in a local memory
// graph, are allowed.
func TestCrossBoundaryConformance(t *testing.T) {
	ctx := ctxT(t, 90*time.Second)
	dir := t.TempDir()
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		dir = d
	}
	const secret = "AKIA5MZXN8QRF3WBY6OE"
	for name, text := range map[string]string{".env": "STRIPE_KEY=" + secret + "\n", "notes.md": secretText + "\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	e := newWeirEnv(t)
	connect := func(name string, argv []string, session string) *mcp.ClientSession {
		t.Helper()
		env := *e
		env.session = session
		cmd := exec.Command(weirBin, append([]string{"run", "--name", name, "--"}, argv...)...)
		cmd.Env = env.environ("MEMORY_FILE_PATH=" + filepath.Join(dir, "memory-"+session+".jsonl"))
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "weir-e2e-crossing", Version: "1.0.0"}, nil).
			Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatalf("connecting to %s: %v", name, err)
		}
		t.Cleanup(func() { cs.Close() })
		if _, err := cs.ListTools(ctx, nil); err != nil {
			t.Fatalf("listing %s: %v", name, err)
		}
		return cs
	}
	files := connect("files", serverFilesystem(t, dir), "a")
	memory := connect("memory", serverMemory(t), "a")
	memoryB := connect("memory", serverMemory(t), "b")

	expect := func(what string, cs *mcp.ClientSession, tool string, args map[string]any, denied bool) {
		t.Helper()
		text, isErr := call(t, ctx, cs, tool, args)
		blocked := isErr && strings.Contains(text, "Weir blocked")
		if blocked != denied {
			t.Errorf("%s: denied %v, want %v: %s", what, blocked, denied, text)
		}
	}
	entity := func(obs string) map[string]any {
		return map[string]any{"entities": []map[string]any{{"name": "credentials", "entityType": "note", "observations": []string{obs}}}}
	}

	// No prior read: nothing to track yet.
	expect("no-prior-read: a secret-shaped value", memory, "create_entities", entity("ghp_Xa2bC3dEf4gH5iJk6Lm7nN8oP"), false)

	if text, isErr := call(t, ctx, files, "read_text_file", map[string]any{"path": filepath.Join(dir, ".env")}); isErr || !strings.Contains(text, secret) {
		t.Fatalf("reading .env: %v %s", isErr, text)
	}
	expect("relaybleed: the secret into another server (create_entities)", memory, "create_entities", entity("stripe key "+secret), true)
	expect("relaybleed: the secret into another server (add_observations)", memory, "add_observations",
		map[string]any{"observations": []map[string]any{{"entityName": "credentials", "contents": []string{secret}}}}, true)
	expect("same-origin writeback of the secret", files, "write_file", map[string]any{"path": filepath.Join(dir, ".env.bak"), "content": secret}, false)
	expect("session isolation: another session sends what this one read", memoryB, "create_entities", entity(secret), false)

	if text, isErr := call(t, ctx, files, "read_text_file", map[string]any{"path": filepath.Join(dir, "notes.md")}); isErr || !strings.Contains(text, secretText[:30]) {
		t.Fatalf("reading notes.md: %v %s", isErr, text)
	}
	expect("an edited note saved where it was read", files, "write_file",
		map[string]any{"path": filepath.Join(dir, "notes-edited.md"), "content": "# Edited\n" + secretText + "\nReviewed."}, false)
	expect("private prose kept in a local memory graph", memory, "create_entities", entity(secretText), false)
	if data, err := os.ReadFile(filepath.Join(dir, "memory-a.jsonl")); err == nil && strings.Contains(string(data), secret) {
		t.Errorf("the secret reached the memory graph:\n%s", data)
	}
}
