package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weir-sec/weir/internal/clients"
	"github.com/weir-sec/weir/internal/scan"
)

// TestClientConfigScanWrapUnwrap is the client-integration story end to
// end: a Claude Desktop config with the real npm reference servers
// (server-everything, server-filesystem, server-memory) and a deliberately
// poisoned toy server is scanned (the poisoned tool's findings, the
// trifecta and the tools supplying each leg), wrapped in place, and then
// the TypeScript SDK client starts the wrapped commands from the rewritten
// file and works through Weir: every server lists its tools, a benign call
// to each succeeds, the poisoned tool is withheld and a leak is blocked.
// weir unwrap then restores the file byte for byte.
func TestClientConfigScanWrapUnwrap(t *testing.T) {
	f := newFixture(t) // the secret file, a policy labelling everything:echo a sink
	script := npmPeer(t, "client.mjs")
	memory := serverMemory(t)
	memFile := filepath.Join(t.TempDir(), "memory.jsonl")

	// The config, written the way people write it: comments, an entry per
	// line, env where a server needs it.
	cfgDir := filepath.Join(t.TempDir(), "Claude")
	if err := os.MkdirAll(cfgDir, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(cfgDir, "claude_desktop_config.json")
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	list := func(argv []string) string {
		var parts []string
		for _, a := range argv {
			parts = append(parts, q(a))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	original := []byte(`{
  // Claude Desktop, with the MCP reference servers
  "mcpServers": {
    "everything": {"command": ` + q(f.every[0]) + `, "args": ` + list(f.every[1:]) + `},
    "files": {
      "command": ` + q(f.filesFS[0]) + `,
      "args": ` + list(f.filesFS[1:]) + `
    },
    "memory": {"command": ` + q(memory[0]) + `, "args": ` + list(memory[1:]) + `, "env": {"MEMORY_FILE_PATH": ` + q(memFile) + `}},
    // a calculator someone found online; its helper tool is poisoned
    "calculator": {"command": ` + q(fake()[0]) + `, "env": {"WEIR_E2E_FAKE": "1", "WEIR_E2E_POISON": "1"}}
  }
}
`)
	if err := os.WriteFile(cfg, original, 0o600); err != nil {
		t.Fatal(err)
	}
	weir := func(wantCode int, args ...string) []byte {
		t.Helper()
		cmd := exec.Command(weirBin, args...)
		cmd.Env = f.env.environ()
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("weir %v: %v", args, err)
		}
		if code != wantCode {
			t.Fatalf("weir %v: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", args, code, wantCode, out, stderr.String())
		}
		return out
	}
	scanConfig := func(wantCode int) scan.ConfigReport {
		t.Helper()
		var rep scan.Report
		out := weir(wantCode, "scan", cfg, "--format", "json", "--timeout", "60s")
		if err := json.Unmarshal(out, &rep); err != nil || len(rep.Configs) != 1 {
			t.Fatalf("scan output: %v\n%s", err, out)
		}
		c := rep.Configs[0]
		if c.Client != clients.ClaudeDesktop.ID || len(c.Servers) != 4 {
			t.Fatalf("scanned %s with %d servers", c.Client, len(c.Servers))
		}
		for _, s := range c.Servers {
			if s.Status != scan.StatusScanned {
				t.Fatalf("%s: %s: %s\nstderr: %s", s.Name, s.Status, s.Error, s.Stderr)
			}
		}
		return c
	}
	server := func(c scan.ConfigReport, name string) scan.ServerReport {
		for _, s := range c.Servers {
			if s.Name == name {
				return s
			}
		}
		t.Fatalf("no server %s in the report", name)
		return scan.ServerReport{}
	}
	tool := func(s scan.ServerReport, name string) scan.ToolReport {
		for _, tr := range s.Tools {
			if tr.Name == name {
				return tr
			}
		}
		t.Fatalf("%s has no tool %s", s.Name, name)
		return scan.ToolReport{}
	}

	// 1. Scan: exit 1 for the poisoned tool and the unguarded trifecta.
	before := scanConfig(1)
	helper := tool(server(before, "calculator"), "helper")
	var detectors []string
	for _, fd := range helper.Findings {
		detectors = append(detectors, fd.Detector)
	}
	if helper.Severity != "high" || !slices.Contains(detectors, "sensitive-path") || !slices.Contains(detectors, "conceal-from-user") {
		t.Errorf("poisoned helper: severity %s, detectors %v", helper.Severity, detectors)
	}
	if echo := tool(server(before, "calculator"), "echo"); echo.Severity == "high" {
		t.Errorf("the calculator's plain echo was flagged high: %+v", echo.Findings)
	}
	for _, s := range []string{"everything", "files", "memory"} {
		for _, tr := range server(before, s).Tools {
			if tr.Severity == "high" {
				t.Errorf("reference server %s/%s flagged high: %+v", s, tr.Name, tr.Findings)
			}
		}
	}
	tri := before.Trifecta
	legs := map[string][]string{"private": tri.Private, "untrusted": tri.Untrusted, "sink": tri.Sink}
	for leg, want := range map[string][]string{
		"private":   {"files/read_text_file", "files/read_multiple_files", "memory/read_graph", "memory/search_nodes"},
		"untrusted": {"everything/gzip-file-as-resource"},
		"sink":      {"everything/gzip-file-as-resource"},
	} {
		for _, w := range want {
			if !slices.Contains(legs[leg], w) {
				t.Errorf("trifecta leg %s: %v lacks %s", leg, legs[leg], w)
			}
		}
	}
	// Writing a file changes the machine, not the world (server-filesystem
	// says so: destructiveHint with openWorldHint false).
	for _, local := range []string{"files/write_file", "files/edit_file"} {
		if slices.Contains(tri.Sink, local) {
			t.Errorf("trifecta leg sink holds the local write %s: %v", local, tri.Sink)
		}
	}
	if !tri.Present || tri.Severity != "high" || !slices.Equal(tri.Unguarded, []string{"everything", "files", "memory"}) {
		t.Errorf("trifecta before wrapping: present %v, severity %s, unguarded %v", tri.Present, tri.Severity, tri.Unguarded)
	}

	// 2. Wrap in place, with the fixture's policy.
	out := weir(0, "wrap", cfg, "--in-place", "--policy", f.policy)
	if !bytes.Contains(out, []byte("wrote "+cfg+" (backup "+cfg+clients.BackupSuffix)) {
		t.Errorf("weir wrap --in-place said:\n%s", out)
	}
	wrapped, err := clients.Read(clients.Location{Client: clients.ClaudeDesktop, Path: cfg, Scope: clients.ScopeUser, Format: clients.FormatMCPServers})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range wrapped.Servers {
		if !s.Wrapped || s.Command != weirBin {
			t.Errorf("%s not wrapped with the weir binary's absolute path: %s %v", s.Name, s.Command, s.Args)
		}
	}

	// The wrapped config scans the servers behind weir run, labels with the
	// policy they run with, and finds every leg behind Weir.
	after := scanConfig(1) // the poisoned helper is still a high finding
	if tr := tool(server(after, "everything"), "echo"); !tr.Listed || !slices.Contains(tr.Labels, "sink") {
		t.Errorf("everything/echo after wrapping: %v (listed %v); want the wrapped entry's policy to label it a sink", tr.Labels, tr.Listed)
	}
	if tri := after.Trifecta; !tri.Present || tri.Severity != "low" || len(tri.Unguarded) != 0 || !slices.Contains(tri.Sink, "everything/echo") {
		t.Errorf("trifecta after wrapping: %+v", tri)
	}

	// 3. A real client starts the wrapped commands from the rewritten file.
	plan := map[string]any{"servers": map[string]any{}}
	for _, s := range wrapped.Servers {
		plan["servers"].(map[string]any)[s.Name] = map[string]any{"command": s.Command, "args": s.Args, "env": s.Env}
	}
	secretB64 := base64.StdEncoding.EncodeToString([]byte(secretText))
	plan["calls"] = []map[string]any{
		{"server": "files", "tool": "read_text_file", "arguments": map[string]string{"path": filepath.Join(f.dir, "minutes.txt")}},
		{"server": "everything", "tool": "echo", "arguments": map[string]string{"message": "hello"}},
		{"server": "memory", "tool": "read_graph", "arguments": map[string]string{}},
		{"server": "calculator", "tool": "echo", "arguments": map[string]string{"x": "1"}},
		{"server": "everything", "tool": "echo", "arguments": map[string]string{"message": secretB64}},
		{"server": "calculator", "tool": "helper", "arguments": map[string]string{"note": "x"}},
	}
	t.Setenv("WEIR_HOME", f.env.home) // the wrapped entries run weir with the client's environment
	got := runTSClientFull(t, script, plan)
	for name, want := range map[string]string{"files": "read_text_file", "everything": "echo", "memory": "read_graph", "calculator": "echo"} {
		if !slices.Contains(got.Tools[name], want) {
			t.Errorf("%s through weir lists %v, want %s among them", name, got.Tools[name], want)
		}
	}
	if slices.Contains(got.Tools["calculator"], "helper") {
		t.Errorf("the poisoned helper was listed through weir: %v", got.Tools["calculator"])
	}
	wantErr := []bool{false, false, false, false, true, true}
	if len(got.Results) != len(wantErr) {
		t.Fatalf("%d results, want %d: %+v", len(got.Results), len(wantErr), got.Results)
	}
	for i, r := range got.Results {
		if r.IsError != wantErr[i] {
			t.Errorf("call %d: isError %v, want %v: %q", i, r.IsError, wantErr[i], r.Text)
		}
	}
	if !strings.Contains(got.Results[0].Text, "Lindqvist") || got.Results[1].Text != "Echo: hello" {
		t.Errorf("benign calls: %q, %q", got.Results[0].Text, got.Results[1].Text)
	}
	if !contains(got.Results[4].Text, "flow.exfiltration", "files/read_text_file") {
		t.Errorf("the leak was not blocked by flow control: %q", got.Results[4].Text)
	}
	if !strings.Contains(got.Results[5].Text, "tool poisoning") {
		t.Errorf("the call to the poisoned helper was not refused as poisoning: %q", got.Results[5].Text)
	}
	assertNoSecretAtRest(t, f.env.home)

	// The proxies pinned what they saw; a new scan reports it unchanged.
	pinned := scanConfig(1)
	if p := tool(server(pinned, "memory"), "read_graph").Pin; p != scan.PinUnchanged {
		t.Errorf("memory/read_graph pin after a session: %q, want %q", p, scan.PinUnchanged)
	}

	// 4. weir unwrap restores the file byte for byte.
	out = weir(0, "unwrap", cfg)
	if !bytes.Contains(out, []byte("byte for byte")) {
		t.Errorf("weir unwrap said:\n%s", out)
	}
	if data, err := os.ReadFile(cfg); err != nil || !bytes.Equal(data, original) {
		t.Errorf("after weir unwrap the file is not the original (%v):\n%s", err, data)
	}
}

type tsOutput struct {
	Tools   map[string][]string
	Results []tsResult
}

// runTSClientFull runs testdata/npm/client.mjs like runTSClient, and
// returns the tools each server listed as well as the call results.
func runTSClientFull(t *testing.T, script []string, plan map[string]any) tsOutput {
	t.Helper()
	planFile := filepath.Join(t.TempDir(), "plan.json")
	data, _ := json.Marshal(plan)
	if err := os.WriteFile(planFile, data, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(script[0], script[1], planFile)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "WEIR_SESSION=") {
			env = append(env, kv)
		}
	}
	cmd.Env = env
	var stderr syncBuffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("TypeScript client: %v\n%s", err, stderr.String())
	}
	var got tsOutput
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("client output %q: %v", out, err)
	}
	if strings.Contains(stderr.String(), secretKey) || strings.Contains(stderr.String(), "Lindqvist") {
		t.Errorf("the secret appeared in stderr")
	}
	return got
}
