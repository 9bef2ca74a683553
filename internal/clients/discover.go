package clients

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"runtime"
	"strings"
)

// Client is an MCP client application.
type Client struct {
	ID   string // stable identifier: "claude-desktop", "claude-code", "cursor", ...
	Name string // for people: "Claude Desktop"
}

// The clients Weir knows. Unknown is used for a file Identify recognises
// only by its content.
var (
	ClaudeDesktop = Client{"claude-desktop", "Claude Desktop"}
	ClaudeCode    = Client{"claude-code", "Claude Code"}
	Cursor        = Client{"cursor", "Cursor"}
	VSCode        = Client{"vscode", "VS Code"}
	Windsurf      = Client{"windsurf", "Windsurf"}
	GeminiCLI     = Client{"gemini-cli", "Gemini CLI"}
	Zed           = Client{"zed", "Zed"}
	Kiro          = Client{"kiro", "Kiro"}
	Cline         = Client{"cline", "Cline"}
	Continue      = Client{"continue", "Continue"}
	Goose         = Client{"goose", "Goose"}
	LMStudio      = Client{"lm-studio", "LM Studio"}
	Opencode      = Client{"opencode", "opencode"}
	Unknown       = Client{"unknown", "MCP client"}
)

// Clients returns every known client, in the order Discover reports them.
func Clients() []Client {
	return []Client{ClaudeDesktop, ClaudeCode, Cursor, VSCode, Windsurf, GeminiCLI, Zed, Kiro, Cline, Continue, Goose, LMStudio, Opencode}
}

// Scopes of a Location.
const (
	ScopeUser    = "user"    // applies to everything the user runs
	ScopeProject = "project" // lives in, and applies to, one project directory
)

// Formats of a Location: where in the file the servers are and how their
// entries are spelled. See the package documentation for each.
const (
	FormatMCPServers     = "mcpServers"      // {"mcpServers": {NAME: {command, args, env, url...}}}
	FormatClaudeCode     = "claude-code"     // ~/.claude.json: mcpServers, and projects.<dir>.mcpServers
	FormatGemini         = "gemini"          // mcpServers; "url" is SSE, "httpUrl" Streamable HTTP
	FormatVSCode         = "vscode"          // {"servers": {...}}
	FormatVSCodeSettings = "vscode-settings" // settings.json: "mcp": {"servers": {...}} or "mcp.servers"
	FormatZed            = "zed"             // {"context_servers": {...}}, command a string or {path, args, env}
	FormatOpencode       = "opencode"        // {"mcp": {NAME: {type: local, command: [...]}}} (or mcp.servers)
	FormatContinue       = "continue"        // config.json: experimental.modelContextProtocolServers [{transport}]
	FormatContinueYAML   = "continue-yaml"   // config.yaml: mcpServers: [{name, command, args}]
	FormatGoose          = "goose"           // config.yaml: extensions: {NAME: {type, cmd, args, envs}}
)

func isYAMLFormat(f string) bool { return f == FormatGoose || f == FormatContinueYAML }

// Location is one configuration file of one client.
type Location struct {
	Client Client
	Path   string
	Scope  string // ScopeUser or ScopeProject
	Format string // one of the Format constants
}

// Env is where Discover looks: the operating system's conventions and the
// directories they depend on. FromOS fills it in for the running system;
// tests set it by hand to look at any OS's layout from any OS.
type Env struct {
	OS         string // "linux", "darwin" or "windows" (runtime.GOOS); anything else is treated like linux
	Home       string // the user's home directory
	AppData    string // Windows %APPDATA%; default Home\AppData\Roaming
	ConfigDir  string // $XDG_CONFIG_HOME; default Home/.config (used on every OS by the tools that follow XDG)
	ProjectDir string // where project-scope files are looked for; "" for none

	// Stat answers Discover's existence checks; nil means os.Stat.
	Stat func(path string) (fs.FileInfo, error)
}

// FromOS returns the Env of the running system and current directory.
// Directories it cannot determine are left empty, and the locations under
// them are skipped.
func FromOS() Env {
	e := Env{OS: runtime.GOOS}
	e.Home, _ = os.UserHomeDir()
	e.AppData = os.Getenv("APPDATA")
	e.ConfigDir = os.Getenv("XDG_CONFIG_HOME")
	e.ProjectDir, _ = os.Getwd()
	return e
}

func (e Env) sep() string {
	if e.OS == "windows" {
		return `\`
	}
	return "/"
}

// join joins path elements with the OS's separator; it returns "" when the
// first element (a base directory) is unknown.
func (e Env) join(elem ...string) string {
	if len(elem) == 0 || elem[0] == "" {
		return ""
	}
	sep := e.sep()
	out := strings.TrimRight(elem[0], `/\`)
	if out == "" {
		out = elem[0][:1] // the root directory itself
	}
	for _, el := range elem[1:] {
		if !strings.HasSuffix(out, sep) {
			out += sep
		}
		out += el
	}
	return out
}

func (e Env) appData() string {
	if e.AppData != "" {
		return e.AppData
	}
	return e.join(e.Home, "AppData", "Roaming")
}

func (e Env) configDir() string {
	if e.ConfigDir != "" {
		return e.ConfigDir
	}
	return e.join(e.Home, ".config")
}

// appDir is where an Electron application (Claude Desktop, VS Code and its
// forks) keeps its user data: ~/Library/Application Support/APP on macOS,
// %APPDATA%\APP on Windows, $XDG_CONFIG_HOME/APP elsewhere.
func (e Env) appDir(app string) string {
	switch e.OS {
	case "darwin":
		return e.join(e.Home, "Library", "Application Support", app)
	case "windows":
		return e.join(e.appData(), app)
	}
	return e.join(e.configDir(), app)
}

// Candidates returns every location where a known client keeps MCP servers
// on env's system, whether or not the file exists, user scope first.
func Candidates(env Env) []Location {
	var out []Location
	seen := map[string]bool{}
	add := func(c Client, scope, format, p string) {
		if p == "" || seen[p] {
			return
		}
		seen[p] = true
		out = append(out, Location{Client: c, Path: p, Scope: scope, Format: format})
	}
	home, proj := env.Home, env.ProjectDir
	j := env.join

	// User scope.
	add(ClaudeDesktop, ScopeUser, FormatMCPServers, j(env.appDir("Claude"), "claude_desktop_config.json"))
	add(ClaudeCode, ScopeUser, FormatClaudeCode, j(home, ".claude.json"))
	add(Cursor, ScopeUser, FormatMCPServers, j(home, ".cursor", "mcp.json"))
	for _, app := range []string{"Code", "Code - Insiders"} {
		add(VSCode, ScopeUser, FormatVSCode, j(env.appDir(app), "User", "mcp.json"))
		add(VSCode, ScopeUser, FormatVSCodeSettings, j(env.appDir(app), "User", "settings.json"))
	}
	add(Windsurf, ScopeUser, FormatMCPServers, j(home, ".codeium", "windsurf", "mcp_config.json"))
	add(GeminiCLI, ScopeUser, FormatGemini, j(home, ".gemini", "settings.json"))
	switch env.OS {
	case "darwin":
		add(Zed, ScopeUser, FormatZed, j(home, ".config", "zed", "settings.json"))
	case "windows":
		add(Zed, ScopeUser, FormatZed, j(env.appData(), "Zed", "settings.json"))
	default:
		add(Zed, ScopeUser, FormatZed, j(env.configDir(), "zed", "settings.json"))
	}
	add(Kiro, ScopeUser, FormatMCPServers, j(home, ".kiro", "settings", "mcp.json"))
	for _, app := range []string{"Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf"} {
		add(Cline, ScopeUser, FormatMCPServers, j(env.appDir(app), "User", "globalStorage", "saoudrizwan.claude-dev", "settings", "cline_mcp_settings.json"))
	}
	add(Continue, ScopeUser, FormatContinue, j(home, ".continue", "config.json"))
	add(Continue, ScopeUser, FormatContinueYAML, j(home, ".continue", "config.yaml"))
	if env.OS == "windows" {
		add(Goose, ScopeUser, FormatGoose, j(env.appData(), "Block", "goose", "config", "config.yaml"))
	} else {
		add(Goose, ScopeUser, FormatGoose, j(env.configDir(), "goose", "config.yaml"))
	}
	add(LMStudio, ScopeUser, FormatMCPServers, j(home, ".lmstudio", "mcp.json"))
	add(Opencode, ScopeUser, FormatOpencode, j(env.configDir(), "opencode", "opencode.json"))
	add(Opencode, ScopeUser, FormatOpencode, j(env.configDir(), "opencode", "opencode.jsonc"))

	// Project scope.
	add(ClaudeCode, ScopeProject, FormatMCPServers, j(proj, ".mcp.json"))
	add(Cursor, ScopeProject, FormatMCPServers, j(proj, ".cursor", "mcp.json"))
	add(VSCode, ScopeProject, FormatVSCode, j(proj, ".vscode", "mcp.json"))
	add(VSCode, ScopeProject, FormatVSCodeSettings, j(proj, ".vscode", "settings.json"))
	add(GeminiCLI, ScopeProject, FormatGemini, j(proj, ".gemini", "settings.json"))
	add(Zed, ScopeProject, FormatZed, j(proj, ".zed", "settings.json"))
	add(Kiro, ScopeProject, FormatMCPServers, j(proj, ".kiro", "settings", "mcp.json"))
	add(Opencode, ScopeProject, FormatOpencode, j(proj, "opencode.json"))
	add(Opencode, ScopeProject, FormatOpencode, j(proj, "opencode.jsonc"))
	add(Opencode, ScopeProject, FormatOpencode, j(proj, ".opencode", "opencode.json"))
	add(Opencode, ScopeProject, FormatOpencode, j(proj, ".opencode", "opencode.jsonc"))
	return out
}

// Discover returns the Candidates that exist as regular files (following
// symbolic links), user scope first.
func Discover(env Env) []Location {
	stat := env.Stat
	if stat == nil {
		stat = os.Stat
	}
	var out []Location
	for _, loc := range Candidates(env) {
		if fi, err := stat(loc.Path); err == nil && fi.Mode().IsRegular() {
			out = append(out, loc)
		}
	}
	return out
}

// pathRule recognises a client's file by how its path ends.
type pathRule struct {
	suffix string // slash-separated; matched against the end of the path
	client Client
	scope  string // "" when the same name is used in both scopes
	format string
}

var pathRules = []pathRule{
	{"claude_desktop_config.json", ClaudeDesktop, ScopeUser, FormatMCPServers},
	{".claude.json", ClaudeCode, ScopeUser, FormatClaudeCode},
	{".mcp.json", ClaudeCode, ScopeProject, FormatMCPServers},
	{".cursor/mcp.json", Cursor, "", FormatMCPServers},
	{".vscode/mcp.json", VSCode, ScopeProject, FormatVSCode},
	{".vscode/settings.json", VSCode, ScopeProject, FormatVSCodeSettings},
	{"saoudrizwan.claude-dev/settings/cline_mcp_settings.json", Cline, ScopeUser, FormatMCPServers},
	{"cline_mcp_settings.json", Cline, ScopeUser, FormatMCPServers},
	{"User/mcp.json", VSCode, ScopeUser, FormatVSCode},
	{"User/settings.json", VSCode, ScopeUser, FormatVSCodeSettings},
	{"windsurf/mcp_config.json", Windsurf, ScopeUser, FormatMCPServers},
	{".gemini/settings.json", GeminiCLI, "", FormatGemini},
	{".zed/settings.json", Zed, ScopeProject, FormatZed},
	{"zed/settings.json", Zed, ScopeUser, FormatZed},
	{"Zed/settings.json", Zed, ScopeUser, FormatZed},
	{".kiro/settings/mcp.json", Kiro, "", FormatMCPServers},
	{".continue/config.json", Continue, ScopeUser, FormatContinue},
	{".continue/config.yaml", Continue, ScopeUser, FormatContinueYAML},
	{"goose/config.yaml", Goose, ScopeUser, FormatGoose},
	{"goose/config/config.yaml", Goose, ScopeUser, FormatGoose},
	{".lmstudio/mcp.json", LMStudio, ScopeUser, FormatMCPServers},
	{"opencode/opencode.json", Opencode, ScopeUser, FormatOpencode},
	{"opencode/opencode.jsonc", Opencode, ScopeUser, FormatOpencode},
	{".opencode/opencode.json", Opencode, ScopeProject, FormatOpencode},
	{".opencode/opencode.jsonc", Opencode, ScopeProject, FormatOpencode},
	{"opencode.json", Opencode, ScopeProject, FormatOpencode},
	{"opencode.jsonc", Opencode, ScopeProject, FormatOpencode},
}

// Identify tells which client and format a configuration file at p is, for
// a file named on the command line: first by the Candidates of env, then by
// how the path ends (".cursor/mcp.json", "Code/User/settings.json", ...),
// and last by the file's content (data; may be nil), whose top-level keys
// ("mcpServers", "servers", "context_servers", "mcp", "extensions") give
// the format.
func Identify(env Env, p string, data []byte) (Location, error) {
	norm := func(s string) string {
		s = strings.ReplaceAll(s, `\`, "/")
		if env.OS == "windows" || env.OS == "darwin" {
			s = strings.ToLower(s)
		}
		return path.Clean(s)
	}
	np := norm(p)
	for _, c := range Candidates(env) {
		if norm(c.Path) == np {
			c.Path = p
			return c, nil
		}
	}
	slash := path.Clean(strings.ReplaceAll(p, `\`, "/"))
	for _, r := range pathRules {
		if slash != r.suffix && !strings.HasSuffix(slash, "/"+r.suffix) {
			continue
		}
		scope := r.scope
		if scope == "" {
			// .cursor/mcp.json and the like: user scope in the home
			// directory, project scope anywhere else.
			dir := strings.TrimSuffix(slash, "/"+r.suffix)
			scope = ScopeProject
			if env.Home != "" && norm(dir) == norm(env.Home) {
				scope = ScopeUser
			}
		}
		return Location{Client: r.client, Path: p, Scope: scope, Format: r.format}, nil
	}
	if f := sniff(p, data); f != "" {
		c := Unknown
		switch f {
		case FormatGoose:
			c = Goose
		case FormatContinue, FormatContinueYAML:
			c = Continue
		case FormatZed:
			c = Zed
		case FormatVSCode, FormatVSCodeSettings:
			c = VSCode
		case FormatOpencode:
			c = Opencode
		case FormatClaudeCode:
			c = ClaudeCode
		}
		return Location{Client: c, Path: p, Scope: ScopeUser, Format: f}, nil
	}
	return Location{}, &Error{File: p, Msg: "cannot tell which MCP client this file belongs to: its name is not one Weir knows and it holds none of the keys mcpServers, servers, mcp, context_servers or extensions"}
}

// sniff guesses a format from a file's top-level keys.
func sniff(p string, data []byte) string {
	if len(data) == 0 {
		return ""
	}
	lower := strings.ToLower(p)
	if strings.HasSuffix(lower, ".yaml") || strings.HasSuffix(lower, ".yml") {
		root, err := parseYAML(data)
		if err != nil || root == nil || root.kind != kObject {
			return ""
		}
		switch {
		case root.get("extensions") != nil:
			return FormatGoose
		case root.get("mcpServers") != nil:
			return FormatContinueYAML
		}
		return ""
	}
	root, err := parseJSONC(data)
	if err != nil || root == nil || root.kind != kObject {
		return ""
	}
	switch {
	case root.get("projects") != nil && root.get("mcpServers") != nil:
		return FormatClaudeCode
	case root.get("mcpServers") != nil:
		return FormatMCPServers
	case root.get("servers") != nil:
		return FormatVSCode
	case root.get("context_servers") != nil:
		return FormatZed
	case root.get("mcp.servers") != nil || root.get("mcp").get("servers") != nil && root.get("mcp").get("servers").get("type") == nil && hasVSCodeEntries(root.get("mcp").get("servers")):
		return FormatVSCodeSettings
	case root.get("mcp") != nil:
		return FormatOpencode
	case root.get("experimental").get("modelContextProtocolServers") != nil:
		return FormatContinue
	}
	return ""
}

// hasVSCodeEntries reports whether the entries of an object look like VS
// Code's (a string command) rather than opencode's (a list command).
func hasVSCodeEntries(servers *node) bool {
	if servers == nil || servers.kind != kObject {
		return false
	}
	for _, m := range servers.members {
		if c := m.val.get("command"); c != nil && c.kind == kArray {
			return false
		}
		if t := str(m.val.get("type")); t == "local" || t == "remote" {
			return false
		}
	}
	return true
}

// String describes a location for people: "Claude Desktop (user): PATH".
func (l Location) String() string {
	return fmt.Sprintf("%s (%s): %s", l.Client.Name, l.Scope, l.Path)
}
