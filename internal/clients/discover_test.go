package clients

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestCandidates pins the table of locations for each OS
// (testdata/discover/<os>.txt).
func TestCandidates(t *testing.T) {
	for _, env := range []Env{linuxEnv, darwinEnv, windowsEnv} {
		t.Run(env.OS, func(t *testing.T) {
			var b strings.Builder
			for _, loc := range Candidates(env) {
				fmt.Fprintf(&b, "%-14s %-7s %-15s %s\n", loc.Client.ID, loc.Scope, loc.Format, loc.Path)
			}
			checkGolden(t, filepath.Join("testdata", "discover", env.OS+".txt"), []byte(b.String()))
		})
	}
}

// TestCandidatesCoverEveryClient checks that each known client has a
// location on each OS.
func TestCandidatesCoverEveryClient(t *testing.T) {
	for _, env := range []Env{linuxEnv, darwinEnv, windowsEnv} {
		have := map[string]bool{}
		for _, loc := range Candidates(env) {
			have[loc.Client.ID] = true
			if env.OS == "windows" && strings.Contains(loc.Path, "/") {
				t.Errorf("windows path with a slash: %s", loc.Path)
			}
			if env.OS != "windows" && strings.Contains(loc.Path, `\`) {
				t.Errorf("%s path with a backslash: %s", env.OS, loc.Path)
			}
		}
		for _, c := range Clients() {
			if !have[c.ID] {
				t.Errorf("%s: no location for %s", env.OS, c.Name)
			}
		}
	}
}

// TestIdentifyCandidates checks that Identify recognises every location of
// the table by its path alone, on every OS, both with the Env it came from
// and with none.
func TestIdentifyCandidates(t *testing.T) {
	for _, env := range []Env{linuxEnv, darwinEnv, windowsEnv} {
		for _, want := range Candidates(env) {
			got, err := Identify(env, want.Path, nil)
			if err != nil || got != want {
				t.Errorf("%s: Identify(%q) = %+v, %v; want %+v", env.OS, want.Path, got, err, want)
			}
			got, err = Identify(Env{OS: "linux"}, want.Path, nil)
			if err != nil || got.Client != want.Client || got.Format != want.Format {
				t.Errorf("%s: Identify without env (%q) = %+v, %v; want %s %s", env.OS, want.Path, got, err, want.Client.ID, want.Format)
			}
		}
	}
}

func TestIdentifyByContent(t *testing.T) {
	cases := []struct {
		path, data string
		client     Client
		format     string
	}{
		{"servers.json", `{"mcpServers": {}}`, Unknown, FormatMCPServers},
		{"backup.json", `{"projects": {}, "mcpServers": {}}`, ClaudeCode, FormatClaudeCode},
		{"x.json", `{"servers": {"a": {"command": "x"}}}`, VSCode, FormatVSCode},
		{"x.json", `{"mcp": {"servers": {"a": {"command": "x"}}}}`, VSCode, FormatVSCodeSettings},
		{"x.json", `{"mcp": {"servers": {"a": {"type": "local", "command": ["x"]}}}}`, Opencode, FormatOpencode},
		{"x.json", `{"mcp": {"a": {"type": "local", "command": ["x"]}}}`, Opencode, FormatOpencode},
		{"x.json", "// zed\n{\"context_servers\": {}}", Zed, FormatZed},
		{"x.json", `{"experimental": {"modelContextProtocolServers": []}}`, Continue, FormatContinue},
		{"x.yaml", "extensions: {}\n", Goose, FormatGoose},
		{"sqlite.yaml", "mcpServers:\n  - name: a\n    command: x\n", Continue, FormatContinueYAML},
	}
	for _, tc := range cases {
		got, err := Identify(linuxEnv, "/elsewhere/"+tc.path, []byte(tc.data))
		if err != nil || got.Client != tc.client || got.Format != tc.format {
			t.Errorf("Identify(%q, %q) = %+v, %v; want %s %s", tc.path, tc.data, got, err, tc.client.ID, tc.format)
		}
	}
	if _, err := Identify(linuxEnv, "/elsewhere/package.json", []byte(`{"name": "x"}`)); err == nil {
		t.Error("Identify of a file no client uses: no error")
	}
}

func TestIdentifyScope(t *testing.T) {
	cases := []struct {
		env   Env
		path  string
		scope string
	}{
		{linuxEnv, "/home/ada/.cursor/mcp.json", ScopeUser},
		{linuxEnv, "/home/ada/src/other/.cursor/mcp.json", ScopeProject},
		{windowsEnv, `C:\Users\ada\.cursor\mcp.json`, ScopeUser},
		{windowsEnv, `c:\users\ADA\.cursor\mcp.json`, ScopeUser},
		{windowsEnv, `D:\work\app\.kiro\settings\mcp.json`, ScopeProject},
		{linuxEnv, ".gemini/settings.json", ScopeProject},
		{linuxEnv, "/srv/x/.mcp.json", ScopeProject},
	}
	for _, tc := range cases {
		got, err := Identify(tc.env, tc.path, nil)
		if err != nil || got.Scope != tc.scope {
			t.Errorf("Identify(%q) = %+v, %v; want scope %s", tc.path, got, err, tc.scope)
		}
	}
}

// fakeFS answers Stat for a set of paths.
type fakeFS map[string]bool

func (f fakeFS) stat(p string) (fs.FileInfo, error) {
	if f[p] {
		return fakeInfo{}, nil
	}
	return nil, fs.ErrNotExist
}

type fakeInfo struct{}

func (fakeInfo) Name() string       { return "x" }
func (fakeInfo) Size() int64        { return 0 }
func (fakeInfo) Mode() fs.FileMode  { return 0o644 }
func (fakeInfo) ModTime() time.Time { return time.Time{} }
func (fakeInfo) IsDir() bool        { return false }
func (fakeInfo) Sys() any           { return nil }

func TestDiscoverInjected(t *testing.T) {
	env := windowsEnv
	env.Stat = fakeFS{
		`C:\Users\ada\AppData\Roaming\Claude\claude_desktop_config.json`: true,
		`C:\src\weir\.vscode\mcp.json`:                                   true,
		`C:\Users\ada\.claude.json`:                                      true,
	}.stat
	got := Discover(env)
	want := []string{
		`claude-desktop user C:\Users\ada\AppData\Roaming\Claude\claude_desktop_config.json`,
		`claude-code user C:\Users\ada\.claude.json`,
		`vscode project C:\src\weir\.vscode\mcp.json`,
	}
	if len(got) != len(want) {
		t.Fatalf("Discover = %v", got)
	}
	for i, loc := range got {
		if s := loc.Client.ID + " " + loc.Scope + " " + loc.Path; s != want[i] {
			t.Errorf("Discover[%d] = %s, want %s", i, s, want[i])
		}
	}
}

// TestDiscoverDisk runs Discover against a real directory tree, with a
// project directory that is also the home directory (each file is reported
// once), a directory where a file is expected (skipped) and a symbolic
// link (followed).
func TestDiscoverDisk(t *testing.T) {
	home := t.TempDir()
	write := func(rel, data string) string {
		p := filepath.Join(home, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write(".cursor/mcp.json", `{"mcpServers": {"a": {"command": "x"}}}`)
	write(".config/zed/settings.json", `{}`)
	if err := os.MkdirAll(filepath.Join(home, ".gemini", "settings.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	target := write("dotfiles/claude.json", `{"mcpServers": {}}`)
	if err := os.Symlink(target, filepath.Join(home, ".claude.json")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	env := Env{OS: "linux", Home: home, ProjectDir: home}
	var got []string
	for _, loc := range Discover(env) {
		rel, _ := filepath.Rel(home, loc.Path)
		got = append(got, loc.Client.ID+" "+loc.Scope+" "+rel)
		if _, err := Read(loc); err != nil {
			t.Errorf("Read(%s): %v", loc.Path, err)
		}
	}
	want := "claude-code user .claude.json|cursor user .cursor/mcp.json|zed user .config/zed/settings.json"
	if s := strings.Join(got, "|"); s != want {
		t.Errorf("Discover =\n%s\nwant\n%s", s, want)
	}
}

func TestFromOS(t *testing.T) {
	env := FromOS()
	if env.OS != runtime.GOOS {
		t.Errorf("OS = %q", env.OS)
	}
	if home, err := os.UserHomeDir(); err == nil && env.Home != home {
		t.Errorf("Home = %q, want %q", env.Home, home)
	}
}
