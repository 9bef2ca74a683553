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
		{args: []string{"run", "--name", "l", "--upstream", "https://x/mcp", "--header-env", "A=WEIR_HEADER_1", "--header", "B: 2", "--header-env=C = TOKEN", "--header-env", "bad"},
			upstream: "https://x/mcp", headers: []string{"A: ${WEIR_HEADER_1}", "B: 2", "C: ${TOKEN}", "bad"}, name: "l"},
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

	// The rewritten entry edited: refused, and left as it is. (Claude Code
	// is given the header as --header-env, its value in env: see
	// headerVars.)
	if !strings.Contains(string(w), `"--header-env",
        "Authorization=WEIR_HEADER_1"`) || strings.Contains(string(w), `"--header",`) {
		t.Fatalf("Claude Code not given --header-env:\n%s", w)
	}
	edited = strings.Replace(string(w), `"WEIR_HEADER_1": "Bearer ${LINEAR_TOKEN}"`, `"WEIR_HEADER_1": "Bearer ${OTHER_TOKEN}"`, 1)
	if edited == string(w) {
		t.Fatalf("no such header in\n%s", w)
	}
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
		"${userHome}":                  "${userHome}",
		"sk-live-123 ${X}":             "***", // not an auth scheme: the first word could be the key
		"sk-live-123 extra":            "***",
		"Bearer ${TOKEN:-sk-live-123}": "Bearer ***", // a default is written in the file
		"${TOKEN:-sk-live-123}":        "***",
		"${A${sk-live-123}":            "***",
		"token ${env:T}":               "token ${env:T}",
	} {
		if got := showHeaderValue(v); got != want {
			t.Errorf("showHeaderValue(%q) = %q, want %q", v, got, want)
		}
	}
	if got := showURL("https://mcp.exa.ai/mcp?exaApiKey=secret"); got != "https://mcp.exa.ai/mcp?…" {
		t.Errorf("showURL = %q", got)
	}
}

// TestUnwrapVersion1: an entry an earlier weir wrap rewrote, its header
// values in --header flags as written (record version 1), is unwrapped
// byte for byte too. testdata/unwrap-v1 holds what that weir wrap made of
// the golden files; each unwraps to the golden unwrapped file.
func TestUnwrapVersion1(t *testing.T) {
	n := 0
	for _, tc := range goldenCases {
		ext := ".json"
		if isYAMLFormat(tc.format) {
			ext = ".yaml"
		}
		old, err := os.ReadFile(filepath.Join("testdata", "unwrap-v1", tc.dir, "wrapped"+ext))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
		loc := Location{Client: tc.client, Path: tc.path, Scope: tc.scope, Format: tc.format}
		c, err := Parse(loc, old)
		if err != nil {
			t.Fatalf("%s: %v", tc.dir, err)
		}
		u, changes, err := Unwrap(c)
		if err != nil {
			t.Fatalf("%s: %v", tc.dir, err)
		}
		for i, ch := range changes {
			if _, _, remote := c.Servers[i].Upstream(); remote && c.Servers[i].Env[stashKey] != "" && ch.Action != ActionUnwrapped {
				t.Errorf("%s: %s: %s %s", tc.dir, ch.Path, ch.Action, ch.Detail)
			}
		}
		want, err := os.ReadFile(filepath.Join("testdata", "golden", tc.dir, "unwrapped"+ext))
		if err != nil {
			t.Fatal(err)
		}
		if string(u) != string(want) {
			t.Errorf("%s: Unwrap of the version 1 file =\n%s\n--- want\n%s", tc.dir, u, want)
		}
	}
	if n == 0 {
		t.Fatal("no version 1 files")
	}
}

// TestUpstreamHeaderVariables: Upstream reads a --header naming one of
// the header variables weir wrap writes as the header the remote entry
// had; any other --header as written.
func TestUpstreamHeaderVariables(t *testing.T) {
	s := Server{Transport: TransportStdio, Command: "weir", Wrapped: true,
		Args: []string{"run", "--upstream", "https://x/mcp", "--header", "A: ${WEIR_HEADER_1}", "--header", "B: ${WEIR_HEADER_2}",
			"--header", "C: ${TOKEN}", "--header", "D: x ${WEIR_HEADER_1}", "--header", "E: ${WEIR_HEADER_01}"},
		Env: map[string]string{"WEIR_HEADER_1": "Bearer ${LINEAR_TOKEN}", "WEIR_HEADER_01": "no", "TOKEN": "t"}}
	_, hs, ok := s.Upstream()
	want := []string{"A: Bearer ${LINEAR_TOKEN}", "B: ${WEIR_HEADER_2}", "C: ${TOKEN}", "D: x ${WEIR_HEADER_1}", "E: ${WEIR_HEADER_01}"}
	if !ok || !reflect.DeepEqual(hs, want) {
		t.Errorf("Upstream headers = %q, want %q", hs, want)
	}

	// --header-env (what weir wrap writes for Claude Code): the value the
	// named variable has in env, as it is; one env lacks, as a reference.
	s.Args = []string{"run", "--upstream", "https://x/mcp", "--header-env", "A=WEIR_HEADER_1", "--header", "B: ${WEIR_HEADER_01}", "--header-env", "C=WEIR_HEADER_2", "--header-env", "D=WEIR_HEADER_01"}
	_, hs, ok = s.Upstream()
	want = []string{"A: Bearer ${LINEAR_TOKEN}", "B: ${WEIR_HEADER_01}", "C: ${WEIR_HEADER_2}", "D: no"}
	if !ok || !reflect.DeepEqual(hs, want) {
		t.Errorf("Upstream headers = %q, want %q", hs, want)
	}
}

// TestUnwrapRemoteHeaderVariables: for a client that is given its header
// values in env (Cursor), the wrapped entry holds each in a WEIR_HEADER_N
// variable, named in its --header flag, after WEIR_UNWRAP and before the
// variables it had; Unwrap removes them and restores the entry byte for
// byte, and refuses an entry whose variable was edited or removed.
func TestUnwrapRemoteHeaderVariables(t *testing.T) {
	const orig = `{
  "mcpServers": {
    "ctx": {
      "url": "https://mcp.context7.com/mcp",
      "headers": {"CONTEXT7_API_KEY": "ctx7-s3cret", "X-Lit": "a$b ${c}"},
      "env": {"WEIR_HEADER_1": "theirs", "A": "1"}
    }
  }
}
`
	loc := Location{Client: Cursor, Path: "/home/ada/.cursor/mcp.json", Scope: ScopeUser, Format: FormatMCPServers}
	c, err := Parse(loc, []byte(orig))
	if err != nil {
		t.Fatal(err)
	}
	w, changes, err := Wrap(c, WrapOptions{})
	if err != nil || changes[0].Action != ActionWrapped {
		t.Fatalf("Wrap = %v %+v", err, changes)
	}
	if strings.Contains(changes[0].Detail, "s3cret") {
		t.Errorf("the listing shows the key: %s", changes[0].Detail)
	}
	cw, err := Parse(loc, w)
	if err != nil {
		t.Fatal(err)
	}
	s := cw.Servers[0]
	r, _ := parseRunLine(s.Args)
	if !reflect.DeepEqual(r.headers, []string{"CONTEXT7_API_KEY: ${WEIR_HEADER_2}", "X-Lit: ${WEIR_HEADER_3}"}) ||
		s.Env["WEIR_HEADER_2"] != "ctx7-s3cret" || s.Env["WEIR_HEADER_3"] != "a$b ${c}" || s.Env["WEIR_HEADER_1"] != "theirs" || s.Env["A"] != "1" {
		t.Fatalf("wrapped entry: --header %q, env %q\n%s", r.headers, s.Env, w)
	}
	if !strings.Contains(string(w), `"env": {"WEIR_UNWRAP": "`) || !strings.Contains(string(w), `", "WEIR_HEADER_2": "ctx7-s3cret", "WEIR_HEADER_3": "a$b ${c}", "WEIR_HEADER_1": "theirs", "A": "1"}`) {
		t.Errorf("the variables are not where they belong:\n%s", w)
	}
	if _, hs, ok := s.Upstream(); !ok || !reflect.DeepEqual(hs, []string{"CONTEXT7_API_KEY: ctx7-s3cret", "X-Lit: a$b ${c}"}) {
		t.Errorf("Upstream headers = %q", hs)
	}
	u, _, err := Unwrap(cw)
	if err != nil || string(u) != orig {
		t.Fatalf("Unwrap = %v\n%s", err, u)
	}

	for _, edit := range [][2]string{
		{`"WEIR_HEADER_2": "ctx7-s3cret"`, `"WEIR_HEADER_2": "ctx7-rotated"`},
		{`, "WEIR_HEADER_3": "a$b ${c}"`, ""},
	} {
		edited := strings.Replace(string(w), edit[0], edit[1], 1)
		if edited == string(w) {
			t.Fatalf("%q not in\n%s", edit[0], w)
		}
		ce, err := Parse(loc, []byte(edited))
		if err != nil {
			t.Fatal(err)
		}
		u, uch, err := Unwrap(ce)
		if err != nil || uch[0].Action != ActionRefused || string(u) != edited {
			t.Errorf("Unwrap after %q = %v %+v\n%s", edit[1], err, uch, u)
		}
	}
}
