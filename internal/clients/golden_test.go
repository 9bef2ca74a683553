package clients

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// Envs of three machines, one per OS, used across the tests.
var (
	linuxEnv   = Env{OS: "linux", Home: "/home/ada", ProjectDir: "/home/ada/src/weir"}
	darwinEnv  = Env{OS: "darwin", Home: "/Users/ada", ProjectDir: "/Users/ada/src/weir"}
	windowsEnv = Env{OS: "windows", Home: `C:\Users\ada`, AppData: `C:\Users\ada\AppData\Roaming`, ProjectDir: `C:\src\weir`}
)

// goldenCases are the client formats under testdata/golden/<dir>: each has
// original.EXT; the test writes wrapped.EXT (Wrap of the original),
// unwrapped.EXT (Unwrap of wrapped) and report.txt (what was read and what
// each step reported). path is where such a file lives, so that Identify is
// tested on it too.
var goldenCases = []struct {
	dir    string
	env    Env
	path   string
	client Client
	format string
	scope  string
	opts   WrapOptions
}{
	{"claude-desktop", darwinEnv, "/Users/ada/Library/Application Support/Claude/claude_desktop_config.json", ClaudeDesktop, FormatMCPServers, ScopeUser, WrapOptions{}},
	{"claude-desktop-windows", windowsEnv, `C:\Users\ada\AppData\Roaming\Claude\claude_desktop_config.json`, ClaudeDesktop, FormatMCPServers, ScopeUser, WrapOptions{WeirPath: `C:\Program Files\Weir\weir.exe`}},
	{"claude-code", linuxEnv, "/home/ada/.claude.json", ClaudeCode, FormatClaudeCode, ScopeUser, WrapOptions{}},
	{"claude-code-project", linuxEnv, "/home/ada/src/weir/.mcp.json", ClaudeCode, FormatMCPServers, ScopeProject, WrapOptions{Policy: ".weir/policy.yaml"}},
	{"cursor", darwinEnv, "/Users/ada/.cursor/mcp.json", Cursor, FormatMCPServers, ScopeUser, WrapOptions{WeirPath: "/usr/local/bin/weir"}},
	{"vscode", linuxEnv, "/home/ada/src/weir/.vscode/mcp.json", VSCode, FormatVSCode, ScopeProject, WrapOptions{}},
	{"vscode-settings", windowsEnv, `C:\Users\ada\AppData\Roaming\Code\User\settings.json`, VSCode, FormatVSCodeSettings, ScopeUser, WrapOptions{}},
	{"vscode-settings-flat", linuxEnv, "/home/ada/.config/Code - Insiders/User/settings.json", VSCode, FormatVSCodeSettings, ScopeUser, WrapOptions{}},
	{"windsurf", linuxEnv, "/home/ada/.codeium/windsurf/mcp_config.json", Windsurf, FormatMCPServers, ScopeUser, WrapOptions{}},
	{"gemini", linuxEnv, "/home/ada/.gemini/settings.json", GeminiCLI, FormatGemini, ScopeUser, WrapOptions{}},
	{"zed", darwinEnv, "/Users/ada/.config/zed/settings.json", Zed, FormatZed, ScopeUser, WrapOptions{}},
	{"kiro", linuxEnv, "/home/ada/src/weir/.kiro/settings/mcp.json", Kiro, FormatMCPServers, ScopeProject, WrapOptions{}},
	{"cline", linuxEnv, "/home/ada/.config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json", Cline, FormatMCPServers, ScopeUser, WrapOptions{}},
	{"continue", linuxEnv, "/home/ada/.continue/config.json", Continue, FormatContinue, ScopeUser, WrapOptions{}},
	{"continue-yaml", linuxEnv, "/home/ada/.continue/config.yaml", Continue, FormatContinueYAML, ScopeUser, WrapOptions{}},
	{"goose", linuxEnv, "/home/ada/.config/goose/config.yaml", Goose, FormatGoose, ScopeUser, WrapOptions{Policy: "/home/ada/.weir/policy.yaml"}},
	{"lm-studio", windowsEnv, `C:\Users\ada\.lmstudio\mcp.json`, LMStudio, FormatMCPServers, ScopeUser, WrapOptions{}},
	{"opencode", linuxEnv, "/home/ada/.config/opencode/opencode.json", Opencode, FormatOpencode, ScopeUser, WrapOptions{}},
	{"opencode-v2", linuxEnv, "/home/ada/src/weir/opencode.jsonc", Opencode, FormatOpencode, ScopeProject, WrapOptions{}},
	{"minified", linuxEnv, "/tmp/servers.json", Unknown, FormatMCPServers, ScopeUser, WrapOptions{}},
}

func TestGolden(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.dir, func(t *testing.T) {
			dir := filepath.Join("testdata", "golden", tc.dir)
			ext := ".json"
			if isYAMLFormat(tc.format) {
				ext = ".yaml"
			}
			orig, err := os.ReadFile(filepath.Join(dir, "original"+ext))
			if err != nil {
				t.Fatal(err)
			}
			loc, err := Identify(tc.env, tc.path, orig)
			if err != nil {
				t.Fatal(err)
			}
			want := Location{Client: tc.client, Path: tc.path, Scope: tc.scope, Format: tc.format}
			if loc != want {
				t.Errorf("Identify = %+v, want %+v", loc, want)
			}
			c, err := Parse(want, orig)
			if err != nil {
				t.Fatal(err)
			}
			wrapped, wch, err := Wrap(c, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, filepath.Join(dir, "wrapped"+ext), wrapped)

			cw, err := Parse(want, wrapped)
			if err != nil {
				t.Fatalf("wrapped file does not parse: %v", err)
			}
			again, _, err := Wrap(cw, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, wrapped) {
				t.Errorf("wrapping twice changed the file:\n%s", again)
			}
			unwrapped, uch, err := Unwrap(cw)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, filepath.Join(dir, "unwrapped"+ext), unwrapped)
			direct, _, err := Unwrap(c)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(unwrapped, direct) {
				t.Errorf("Unwrap(Wrap(x)) != Unwrap(x):\n%s", unwrapped)
			}
			if !anyWrapped(c) && !bytes.Equal(unwrapped, orig) {
				t.Errorf("Unwrap(Wrap(x)) != x")
			}
			checkGolden(t, filepath.Join(dir, "report.txt"), []byte(report(loc, c, tc.opts, wch, uch)))
		})
	}
}

func anyWrapped(c *Config) bool {
	for _, s := range c.Servers {
		if s.Wrapped {
			return true
		}
	}
	return false
}

// report renders what was read from a file and what Wrap and Unwrap did,
// for a person to review.
func report(loc Location, c *Config, opts WrapOptions, wrap, unwrap []Change) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\nformat %s\n\nservers:\n", loc, loc.Format)
	for _, s := range c.Servers {
		fmt.Fprintf(&b, "  %s  %s\n", s.Path, s.Name)
		fmt.Fprintf(&b, "    transport %q", s.Transport)
		if s.Disabled {
			b.WriteString(" disabled")
		}
		if s.Wrapped {
			b.WriteString(" wrapped")
		}
		b.WriteByte('\n')
		if s.Command != "" {
			fmt.Fprintf(&b, "    command %s\n", shellJoin(append([]string{s.Command}, s.Args...)))
		}
		if cmd, args, ok := s.Inner(); ok {
			fmt.Fprintf(&b, "    inner %s\n", shellJoin(append([]string{cmd}, args...)))
		}
		if u, hs, ok := s.Upstream(); ok {
			fmt.Fprintf(&b, "    upstream %s\n", u)
			for _, h := range hs {
				fmt.Fprintf(&b, "    upstream header %s\n", h)
			}
		}
		if s.URL != "" {
			fmt.Fprintf(&b, "    url %s\n", s.URL)
		}
		for _, m := range []struct {
			what string
			kv   map[string]string
		}{{"env", s.Env}, {"header", s.Headers}} {
			keys := make([]string, 0, len(m.kv))
			for k := range m.kv {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				fmt.Fprintf(&b, "    %s %s=%s\n", m.what, k, m.kv[k])
			}
		}
		if s.Cwd != "" {
			fmt.Fprintf(&b, "    cwd %s\n", s.Cwd)
		}
		if s.EnvFile != "" {
			fmt.Fprintf(&b, "    envFile %s\n", s.EnvFile)
		}
		if s.Project != "" {
			fmt.Fprintf(&b, "    project %s\n", s.Project)
		}
		if s.Problem != "" {
			fmt.Fprintf(&b, "    problem: %s\n", s.Problem)
		}
	}
	fmt.Fprintf(&b, "\nwrap (weir %q, policy %q):\n", opts.weir(), opts.Policy)
	for _, ch := range wrap {
		fmt.Fprintf(&b, "  %-9s %s: %s\n", ch.Action, ch.Path, ch.Detail)
	}
	b.WriteString("\nunwrap:\n")
	for _, ch := range unwrap {
		fmt.Fprintf(&b, "  %-9s %s: %s\n", ch.Action, ch.Path, ch.Detail)
	}
	return b.String()
}

// checkGolden compares got with the file at path, or rewrites the file
// with -update.
func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run with -update to accept):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
