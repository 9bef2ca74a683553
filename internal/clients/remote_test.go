package clients

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestRunLine: the weir run flags that take a value are skipped when
// looking for the server's command, so that a remote entry's --upstream
// URL is never taken for one.
func TestRunLine(t *testing.T) {
	cases := []struct {
		args         []string
		inner        string // Inner's command, "" when none
		upstream     string
		headers      []string
		name, policy string
	}{
		{args: []string{"run", "--name", "a", "--", "npx", "x"}, inner: "npx", name: "a"},
		{args: []string{"run", "--request-timeout", "5s", "srv"}, inner: "srv"},
		{args: []string{"run", "--monitor", "--name=b", "--policy=/p.yaml", "--", "srv"}, inner: "srv", name: "b", policy: "/p.yaml"},
		{args: []string{"run", "--name", "l", "--upstream", "https://x/mcp", "--header", "A: 1", "--header=B: 2"}, upstream: "https://x/mcp", headers: []string{"A: 1", "B: 2"}, name: "l"},
		{args: []string{"run", "--upstream=https://x/mcp", "--policy", "/p.yaml"}, upstream: "https://x/mcp", policy: "/p.yaml"},
		{args: []string{"run", "--name", "l", "--upstream"}},                // a flag without its value
		{args: []string{"run", "--upstream", "https://x/mcp", "--", "srv"}}, // both: weir run refuses it; neither reads it
	}
	for _, tc := range cases {
		s := Server{Transport: TransportStdio, Command: "weir", Args: tc.args}
		s.Wrapped = isWrapped(s.Command, s.Args)
		cmd, _, ok := s.Inner()
		if ok != (tc.inner != "") || cmd != tc.inner {
			t.Errorf("%q: Inner = %q, %v; want %q", tc.args, cmd, ok, tc.inner)
		}
		u, hs, ok := s.Upstream()
		if ok != (tc.upstream != "") || u != tc.upstream || !reflect.DeepEqual(hs, tc.headers) {
			t.Errorf("%q: Upstream = %q %q %v; want %q %q", tc.args, u, hs, ok, tc.upstream, tc.headers)
		}
		if tc.inner != "" || tc.upstream != "" {
			if name, policy := s.RunFlags(); name != tc.name || policy != tc.policy {
				t.Errorf("%q: RunFlags = %q %q", tc.args, name, policy)
			}
		}
	}
}

const remoteConfig = `{
  "mcpServers": {
    "linear": {
      "type": "http",
      "url": "https://mcp.linear.app/mcp",
      "headers": {
        "Authorization": "Bearer ${LINEAR_TOKEN}"
      }
    },
    "notes": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/ada/notes"]}
  }
}
`

// TestUnwrapRemoteInPlace: a file edited after weir wrap is unwrapped in
// place; the remote entry gets its members back byte for byte, and the
// edit elsewhere stays. An edit to the rewritten entry itself makes Unwrap
// refuse that entry rather than guess.
func TestUnwrapRemoteInPlace(t *testing.T) {
	loc := Location{Client: ClaudeCode, Path: "/home/ada/src/weir/.mcp.json", Scope: ScopeProject, Format: FormatMCPServers}
	c, err := Parse(loc, []byte(remoteConfig))
	if err != nil {
		t.Fatal(err)
	}
	w, changes, err := Wrap(c, WrapOptions{WeirPath: "/usr/local/bin/weir", Policy: "/home/ada/.weir/policy.yaml"})
	if err != nil || changes[0].Action != ActionWrapped {
		t.Fatalf("Wrap = %v %+v", err, changes)
	}
	cw, err := Parse(loc, w)
	if err != nil {
		t.Fatal(err)
	}
	s := cw.Servers[0]
	if u, hs, ok := s.Upstream(); !ok || u != "https://mcp.linear.app/mcp" || !reflect.DeepEqual(hs, []string{"Authorization: Bearer ${LINEAR_TOKEN}"}) ||
		s.Transport != TransportStdio || !s.Wrapped || s.Env[stashKey] == "" {
		t.Fatalf("wrapped entry reads %+v", s)
	}
	if name, policy := s.RunFlags(); name != "linear" || policy != "/home/ada/.weir/policy.yaml" {
		t.Errorf("RunFlags = %q %q", name, policy)
	}

	// Another server added by hand: the remote entry still unwraps exactly.
	edited := strings.Replace(string(w), `"mcpServers": {`, `"mcpServers": {"mem": {"command": "mcp-memory"},`, 1)
	ce, err := Parse(loc, []byte(edited))
	if err != nil {
		t.Fatal(err)
	}
	u, uch, err := Unwrap(ce)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(remoteConfig, `"mcpServers": {`, `"mcpServers": {"mem": {"command": "mcp-memory"},`, 1)
	if string(u) != want || uch[1].Action != ActionUnwrapped || uch[1].Detail != "remote server https://mcp.linear.app/mcp (headers Authorization)" {
		t.Errorf("Unwrap =\n%s\n%+v", u, uch)
	}

	// The rewritten entry edited: refused, and left as it is.
	edited = strings.Replace(string(w), `"Authorization: Bearer ${LINEAR_TOKEN}"`, `"Authorization: Bearer ${OTHER_TOKEN}"`, 1)
	ce, err = Parse(loc, []byte(edited))
	if err != nil {
		t.Fatal(err)
	}
	u, uch, err = Unwrap(ce)
	if err != nil {
		t.Fatal(err)
	}
	if uch[0].Action != ActionRefused || !strings.Contains(uch[0].Detail, "changed since weir wrap") || !strings.Contains(string(u), "OTHER_TOKEN") || strings.Contains(string(u), `"url"`) {
		t.Errorf("Unwrap of an edited entry = %+v\n%s", uch, u)
	}

	// Without its record: refused, saying so.
	ce, err = Parse(loc, []byte(`{"mcpServers": {"linear": {"command": "weir", "args": ["run", "--upstream", "https://mcp.linear.app/mcp"]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, uch, err = Unwrap(ce); err != nil || uch[0].Action != ActionRefused || !strings.Contains(uch[0].Detail, "holds no WEIR_UNWRAP record") {
		t.Errorf("Unwrap without a record = %v %+v", err, uch)
	}
}

// TestWrapFileRemote: WrapFile and UnwrapFile put a remote entry behind
// Weir and back, restoring the backup byte for byte.
func TestWrapFileRemote(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "proj")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, ".mcp.json")
	if err := os.WriteFile(p, []byte(remoteConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := WrapFile(p, WrapOptions{WeirPath: "/opt/weir/weir", Policy: "/home/ada/policy.yaml"}, true, wrapTime)
	if err != nil || !res.Written {
		t.Fatalf("WrapFile = %+v, %v", res, err)
	}
	if !strings.Contains(string(res.Out), `"--upstream",`) || strings.Contains(string(res.Out), `"url"`) {
		t.Errorf("wrapped:\n%s", res.Out)
	}
	un, err := UnwrapFile(p)
	if err != nil || !un.Restored || readFile(t, p) != remoteConfig {
		t.Fatalf("UnwrapFile = %+v, %v\n%s", un, err, readFile(t, p))
	}
	if ch := un.Changes[0]; ch.Action != ActionUnwrapped || ch.Detail != "remote server https://mcp.linear.app/mcp (headers Authorization)" {
		t.Errorf("restored change = %+v", ch)
	}
}

// TestRemoteDetailMasks: the wrap listing shows header names and the
// references in their values, never a literal credential, and leaves a
// URL's query out.
func TestRemoteDetailMasks(t *testing.T) {
	for v, want := range map[string]string{
		"Bearer ${LINEAR_TOKEN}":       "Bearer ${LINEAR_TOKEN}",
		"${env:KEY}":                   "${env:KEY}",
		"Bearer sk-live-123":           "Bearer ***",
		"ctx7-xxxx":                    "***",
		"Basic ${USER}:${PASS}":        "Basic ***",
		"Bearer {env:TOKEN}":           "Bearer {env:TOKEN}",
		"":                             "***",
		"Bearer ${{ secrets.LINEAR }}": "Bearer ${{ secrets.LINEAR }}",
	} {
		if got := showHeaderValue(v); got != want {
			t.Errorf("showHeaderValue(%q) = %q, want %q", v, got, want)
		}
	}
	if got := showURL("https://mcp.exa.ai/mcp?exaApiKey=secret"); got != "https://mcp.exa.ai/mcp?…" {
		t.Errorf("showURL = %q", got)
	}
}
