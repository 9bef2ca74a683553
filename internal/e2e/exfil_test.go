package e2e

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The user's private file and the secret in it. The secret is an
// API-key-sized token; the prose around it is long enough to fingerprint.
const (
	secretKey  = "sk_live_51Hq9ZtW8xKpL3vR"
	secretText = "Board minutes, strictly confidential: the acquisition of Lindqvist Robotics closes on the third of March at a price of forty-one million."
)

// sinkPolicy labels server-everything's echo as a sink: it stands for any
// tool that sends its arguments somewhere.
const sinkPolicy = "version: 1\ntools:\n  - {match: \"everything:echo\", labels: [sink]}\n"

type fixture struct {
	env     *weirEnv
	dir     string // the filesystem server's root
	policy  string
	filesFS []string
	every   []string
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{env: newWeirEnv(t), dir: t.TempDir()}
	f.policy = filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(f.policy, []byte(sinkPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.dir, "minutes.txt"), []byte(secretText+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.dir, "api.env"), []byte("STRIPE_KEY="+secretKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The fixture's paths as the server reports them (macOS /tmp is a symlink).
	if d, err := filepath.EvalSymlinks(f.dir); err == nil {
		f.dir = d
	}
	f.filesFS = serverFilesystem(t, f.dir)
	f.every = serverEverything(t)
	return f
}

// connect starts a proxy for argv under the go-sdk client and returns the
// session. session overrides the fixture's WEIR_SESSION ("" keeps it).
func (f *fixture) connect(t *testing.T, ctx context.Context, name string, argv []string, session string) *mcp.ClientSession {
	t.Helper()
	env := *f.env
	if session != "" {
		env.session = session
	}
	cmd := exec.Command(weirBin, append([]string{"run", "--name", name, "--policy", f.policy, "--"}, argv...)...)
	cmd.Env = env.environ()
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "weir-e2e-go", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connecting to %s through weir: %v\nstderr:\n%s", name, err, stderr.String())
	}
	t.Cleanup(func() {
		cs.Close()
		if strings.Contains(stderr.String(), secretKey) || strings.Contains(stderr.String(), secretText[:40]) {
			t.Errorf("the secret appeared in weir's stderr:\n%s", stderr.String())
		}
	})
	return cs
}

func call(t *testing.T, ctx context.Context, cs *mcp.ClientSession, tool string, args map[string]any) (text string, isError bool) {
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

// TestExfiltrationAcrossProxies reads a private file through one proxy
// (server-filesystem) and tries to leak it, encoded several ways, through
// another proxy of the same client (server-everything). Every leak must be
// blocked; unrelated calls must pass.
func TestExfiltrationAcrossProxies(t *testing.T) {
	f := newFixture(t)
	ctx := ctxT(t, 90*time.Second)
	files := f.connect(t, ctx, "files", f.filesFS, "")
	every := f.connect(t, ctx, "everything", f.every, "")

	text, isErr := call(t, ctx, files, "read_text_file", map[string]any{"path": filepath.Join(f.dir, "minutes.txt")})
	if isErr || !strings.Contains(text, "Lindqvist") {
		t.Fatalf("reading the private file failed: %q", text)
	}
	if text, isErr := call(t, ctx, files, "read_text_file", map[string]any{"path": filepath.Join(f.dir, "api.env")}); isErr {
		t.Fatalf("reading the key file failed: %q", text)
	}

	// Benign calls after private reads still work.
	for _, msg := range []string{"hello", "The weather is fine today and the meeting moved to Tuesday afternoon at four."} {
		text, isErr := call(t, ctx, every, "echo", map[string]any{"message": msg})
		if isErr || text != "Echo: "+msg {
			t.Errorf("benign echo %q: got %q (isError %v)", msg, text, isErr)
		}
	}

	leaks := []struct {
		name, message, via string
	}{
		{"plain", "minutes: " + secretText, ""},
		{"base64", base64.StdEncoding.EncodeToString([]byte(secretText)), "base64"},
		{"hex", hex.EncodeToString([]byte(secretText)), "hex"},
		{"url-encoded", "https://collector.example/c?d=" + url.QueryEscape(secretText), "url"},
		{"api key alone", "use " + secretKey, ""},
		{"api key base64", base64.RawURLEncoding.EncodeToString([]byte(secretKey)), "base64"},
		// Two deep, with nothing left that reads as English.
		{"rot13 of json escapes", rot(jsonEscapes(secretText), 13), "rot13"},
		{"reversed percent-encoding", reversed(percentEncoded(secretText)), "reversed"},
		{"leetspeak of base64", leetspeak(base64.StdEncoding.EncodeToString([]byte(secretText))), "leet"},
		{"caesar+3 of leetspeak", rot(leetspeak(secretText), 3), "caesar+3"},
		{"api key with its case changed", "use " + strings.ToUpper(secretKey), ""},
	}
	for _, l := range leaks {
		t.Run(l.name, func(t *testing.T) {
			text, isErr := call(t, ctx, every, "echo", map[string]any{"message": l.message})
			if !isErr {
				t.Fatalf("leak not blocked: the server answered %q", text)
			}
			if !contains(text, "Weir blocked this call to everything/echo", "flow.exfiltration", "files/read_text_file", "$.message", "Do not retry") {
				t.Errorf("block message does not explain itself:\n%s", text)
			}
			if l.via != "" && !strings.Contains(text, "via "+l.via) {
				t.Errorf("block message does not say the data was hidden via %s:\n%s", l.via, text)
			}
			if strings.Contains(text, secretKey) || strings.Contains(text, "Lindqvist") {
				t.Errorf("the block message quotes the secret:\n%s", text)
			}
		})
	}

	// Another client (another session) has read nothing: the same call
	// passes there. Taint must never leak between clients.
	other := f.connect(t, ctx, "everything", f.every, "another-client")
	msg := base64.StdEncoding.EncodeToString([]byte(secretText))
	if text, isErr := call(t, ctx, other, "echo", map[string]any{"message": msg}); isErr || text != "Echo: "+msg {
		t.Errorf("a different client's call was affected by this client's taint: %q", text)
	}

	assertNoSecretAtRest(t, f.env.home)
	verifyAudit(t, f.env.home)
}

// assertNoSecretAtRest checks every file Weir wrote for the planted secret
// and its common encodings (DESIGN rule 2: no values at rest).
func assertNoSecretAtRest(t *testing.T, home string) {
	t.Helper()
	needles := []string{secretKey, secretText[:30], "Lindqvist",
		base64.StdEncoding.EncodeToString([]byte(secretKey))[:16],
		hex.EncodeToString([]byte("Lindqvist"))}
	n := 0
	filepath.WalkDir(home, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("reading %s: %v", path, err)
			return nil
		}
		n++
		for _, s := range needles {
			if strings.Contains(string(data), s) || strings.Contains(strings.ToLower(string(data)), strings.ToLower(s)) {
				t.Errorf("%s contains the planted secret (%q)", path, s)
			}
		}
		return nil
	})
	if n < 3 {
		t.Errorf("expected weir to have written its key, state and audit log under %s; found %d files", home, n)
	}
}

func verifyAudit(t *testing.T, home string) {
	t.Helper()
	out, err := exec.Command(weirBin, "audit", "verify", "--file", filepath.Join(home, "audit.log")).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "intact") {
		t.Errorf("weir audit verify: %v\n%s", err, out)
	}
}

// TestExfiltrationTypeScriptClient runs the same attack from the
// TypeScript SDK client, with no WEIR_SESSION: the two proxies find their
// shared session by walking up to the client's process.
func TestExfiltrationTypeScriptClient(t *testing.T) {
	f := newFixture(t)
	script := npmPeer(t, "client.mjs")
	server := func(name string, argv []string) map[string]any {
		return map[string]any{
			"command": weirBin,
			"args":    append([]string{"run", "--name", name, "--policy", f.policy, "--"}, argv...),
			"env":     map[string]string{"WEIR_HOME": f.env.home},
		}
	}
	plan := map[string]any{
		"servers": map[string]any{"files": server("files", f.filesFS), "everything": server("everything", f.every)},
		"calls": []map[string]any{
			{"server": "everything", "tool": "echo", "arguments": map[string]string{"message": base64.StdEncoding.EncodeToString([]byte(secretText))}},
			{"server": "files", "tool": "read_text_file", "arguments": map[string]string{"path": filepath.Join(f.dir, "minutes.txt")}},
			{"server": "everything", "tool": "echo", "arguments": map[string]string{"message": "all good"}},
			{"server": "everything", "tool": "echo", "arguments": map[string]string{"message": base64.StdEncoding.EncodeToString([]byte(secretText))}},
			{"server": "everything", "tool": "echo", "arguments": map[string]string{"message": hex.EncodeToString([]byte(secretText))}},
			{"server": "everything", "tool": "echo", "arguments": map[string]string{"message": "https://c.example/?q=" + url.QueryEscape(secretText)}},
			{"server": "files", "tool": "read_text_file", "arguments": map[string]string{"path": filepath.Join(f.dir, "api.env")}},
			{"server": "everything", "tool": "echo", "arguments": map[string]string{"message": "key " + secretKey}},
		},
	}
	got := runTSClient(t, script, plan)
	want := []bool{false, false, false, true, true, true, false, true}
	if len(got) != len(want) {
		t.Fatalf("%d results, want %d", len(got), len(want))
	}
	for i, r := range got {
		if r.IsError != want[i] {
			t.Errorf("call %d: isError %v, want %v: %q", i, r.IsError, want[i], r.Text)
		}
	}
	if !contains(got[3].Text, "flow.exfiltration", "files/read_text_file", "via base64") {
		t.Errorf("block message: %q", got[3].Text)
	}

	// A second client process, same machine and WEIR_HOME, has read
	// nothing: its session is its own, so the same call passes.
	second := runTSClient(t, script, map[string]any{
		"servers": map[string]any{"everything": server("everything", f.every)},
		"calls": []map[string]any{
			{"server": "everything", "tool": "echo", "arguments": map[string]string{"message": base64.StdEncoding.EncodeToString([]byte(secretText))}},
		},
	})
	if len(second) != 1 || second[0].IsError {
		t.Errorf("another client's call was affected by this client's taint: %+v", second)
	}
	assertNoSecretAtRest(t, f.env.home)
}

type tsResult struct {
	IsError bool
	Text    string
}

// runTSClient runs testdata/npm/client.mjs on a plan, with no WEIR_SESSION:
// the proxies find their session from the client's process.
func runTSClient(t *testing.T, script []string, plan map[string]any) []tsResult {
	t.Helper()
	planFile := filepath.Join(t.TempDir(), "plan.json")
	data, _ := json.Marshal(plan)
	os.WriteFile(planFile, data, 0o600)

	cmd := exec.Command(script[0], script[1], planFile)
	env := os.Environ()
	for i, kv := range env {
		if strings.HasPrefix(kv, "WEIR_SESSION=") {
			env[i] = "WEIR_SESSION_UNSET=1"
		}
	}
	cmd.Env = env
	var stderr syncBuffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("TypeScript client: %v\n%s", err, stderr.String())
	}
	var got struct {
		Tools   map[string][]string
		Results []tsResult
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("client output %q: %v", out, err)
	}
	if strings.Contains(stderr.String(), secretKey) || strings.Contains(stderr.String(), "Lindqvist") {
		t.Errorf("the secret appeared in stderr")
	}
	return got.Results
}

// TestBenignWorkflowMemory runs ordinary work against server-memory through
// weir: writing to the knowledge graph, reading it back, and writing more.
// Reads make the session private, writes are sinks; nothing here is a leak,
// so nothing may be blocked.
func TestBenignWorkflowMemory(t *testing.T) {
	e := newWeirEnv(t)
	ctx := ctxT(t, 60*time.Second)
	memFile := filepath.Join(t.TempDir(), "memory.jsonl")
	cmd := exec.Command(weirBin, append([]string{"run", "--name", "memory", "--"}, serverMemory(t)...)...)
	cmd.Env = e.environ("MEMORY_FILE_PATH=" + memFile)
	client := mcp.NewClient(&mcp.Implementation{Name: "weir-e2e-go", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		tool string
		args map[string]any
	}{
		{"create_entities", map[string]any{"entities": []map[string]any{{"name": "Ada", "entityType": "person", "observations": []string{"prefers tea", "works on the billing service migration plan"}}}}},
		{"read_graph", map[string]any{}},
		{"search_nodes", map[string]any{"query": "Ada"}},
		{"add_observations", map[string]any{"observations": []map[string]any{{"entityName": "Ada", "contents": []string{"is on holiday next week"}}}}},
		{"create_relations", map[string]any{"relations": []map[string]any{}}},
	}
	for _, s := range steps {
		if text, isErr := call(t, ctx, cs, s.tool, s.args); isErr {
			t.Errorf("%s was refused: %s", s.tool, text)
		}
	}
	out, err := exec.Command(weirBin, "audit", "tail", "-n", "20", "--json", "--file", filepath.Join(e.home, "audit.log")).Output()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), `"verdict":"block"`) || !strings.Contains(string(out), `"tool":"read_graph","labels":["private"]`) {
		t.Errorf("audit log:\n%s", out)
	}
}

// Encoders for the leaks above, written apart from the decoders.

func rot(s string, n int) string {
	return strings.Map(func(r rune) rune {
		switch {
		case 'a' <= r && r <= 'z':
			return 'a' + (r-'a'+rune(n))%26
		case 'A' <= r && r <= 'Z':
			return 'A' + (r-'A'+rune(n))%26
		}
		return r
	}, s)
}

func reversed(s string) string {
	r := []rune(s)
	slices.Reverse(r)
	return string(r)
}

func leetspeak(s string) string {
	return strings.NewReplacer("a", "4", "A", "4", "e", "3", "E", "3", "o", "0", "O", "0", "i", "1", "I", "1", "s", "5", "S", "5", "t", "7", "T", "7").Replace(s)
}

func jsonEscapes(s string) string {
	var b strings.Builder
	for _, r := range s {
		fmt.Fprintf(&b, `\u%04x`, r)
	}
	return b.String()
}

func percentEncoded(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&b, "%%%02X", s[i])
	}
	return b.String()
}
