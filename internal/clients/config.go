package clients

import (
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"
)

// Transports a Server can use. Transport is "" when an entry names none that
// Weir understands (see Server.Problem).
const (
	TransportStdio   = "stdio"
	TransportHTTP    = "http"    // Streamable HTTP
	TransportSSE     = "sse"     // the older HTTP+SSE transport
	TransportBuiltin = "builtin" // provided by the client or one of its extensions (Goose builtins, Zed extension servers); nothing to launch or front
)

// Server is one MCP server entry of a client configuration, as the client
// would start or reach it.
type Server struct {
	// Name is the entry's key (for list-shaped formats, its "name" field or
	// a name derived from the command). It is what `weir run --name` gets.
	Name string
	// Transport is TransportStdio, TransportHTTP, TransportSSE,
	// TransportBuiltin or "" (unknown; Problem says why).
	Transport string

	// For stdio servers: the command line, environment and working
	// directory, as written (no ${VAR} or ~ expansion). For a wrapped entry
	// Command is weir and Args start with "run"; see Inner.
	Command string
	Args    []string
	Env     map[string]string
	Cwd     string
	EnvFile string // VS Code's "envFile": more environment, read from a file when the server starts

	// For HTTP and SSE servers.
	URL     string
	Headers map[string]string

	// Disabled is set for entries the client keeps but does not start
	// ("disabled": true, or "enabled": false).
	Disabled bool
	// Project is, for Claude Code's ~/.claude.json, the project directory a
	// project-scoped entry (projects.<dir>.mcpServers) belongs to; "" for
	// entries that apply everywhere.
	Project string

	// Wrapped is set when the entry already runs behind `weir run`.
	Wrapped bool
	// Path is the JSON pointer (RFC 6901) of the entry in the file, e.g.
	// /mcpServers/notes or /projects/~1home~1u~1p/mcpServers/notes. It tells
	// apart entries of the same name in different projects.
	Path string
	// Problem says why the entry cannot be used or rewritten ("args is not
	// a list of strings", an unknown "type"); "" when it is fine.
	Problem string
}

// Inner returns the command Weir starts for a wrapped entry: what follows
// `weir run [flags] [--]`. ok is false when the entry is not wrapped or its
// weir run arguments name no command.
func (s Server) Inner() (command string, args []string, ok bool) {
	if !s.Wrapped {
		return "", nil, false
	}
	k, _, _, ok := parseRun(s.Args)
	if !ok {
		return "", nil, false
	}
	return s.Args[k], s.Args[k+1:], true
}

// Upstream returns, for an entry wrapped with `weir run --upstream URL`
// (how weir wrap puts a remote server behind Weir), the remote server's URL
// and the headers weir run sends it, "Name: value" as written. A --header
// whose value is one of the header variables weir wrap writes
// (${WEIR_HEADER_N}, set in the entry's env, so that the value stays out
// of the process list) reads as that variable's value, the header as the
// remote entry had it; weir run expands the ${VAR} of any other --header
// value from its environment. A --header-env 'Name=VAR' (what weir wrap
// writes for Claude Code) reads as "Name: " and the value VAR has in the
// entry's env, or as "Name: ${VAR}" when the env has no VAR (weir run
// then takes it from the environment it is started with). The headers come
// in the order of their flags. ok is false for every other entry,
// including one whose weir run names a command.
func (s Server) Upstream() (url string, headers []string, ok bool) {
	if !s.Wrapped {
		return "", nil, false
	}
	r, ok := parseRunLine(s.Args)
	if !ok || r.cmd > 0 || r.upstream == "" {
		return "", nil, false
	}
	for _, h := range r.flags {
		if h.env {
			name, variable, cut := strings.Cut(h.v, "=")
			name, variable = strings.TrimSpace(name), strings.TrimSpace(variable)
			switch val, set := s.Env[variable]; {
			case !cut:
				headers = append(headers, h.v) // weir run refuses it
			case set:
				headers = append(headers, name+": "+val)
			default:
				headers = append(headers, name+": ${"+variable+"}")
			}
			continue
		}
		if name, v, cut := strings.Cut(h.v, ": "); cut && headerVarRE.MatchString(v) {
			if val, set := s.Env[v[2:len(v)-1]]; set {
				headers = append(headers, name+": "+val)
				continue
			}
		}
		headers = append(headers, h.v)
	}
	return r.upstream, headers, true
}

// RunFlags returns the --name and --policy a wrapped entry's `weir run`
// is given ("" for each one it is not, and for an entry that is not
// wrapped): the server name Weir labels and pins with, and the policy file
// that proxy decides by.
func (s Server) RunFlags() (name, policy string) {
	if !s.Wrapped {
		return "", ""
	}
	r, _ := parseRunLine(s.Args)
	return r.name, r.policy
}

// Config is one parsed client configuration file.
type Config struct {
	Location Location
	Servers  []Server

	raw     []byte
	syntax  syntax
	entries []entry // parallel to Servers
}

// Raw returns the file's bytes as read.
func (c *Config) Raw() []byte { return c.raw }

// syntax is the file's language.
type syntax uint8

const (
	syntaxJSON syntax = iota // JSON with comments and trailing commas
	syntaxYAML
)

// form is how an entry spells its command line.
type form uint8

const (
	formNone  form = iota // no command (HTTP, builtin, broken)
	formSplit             // "command": "npx", "args": [...] (also Zed's {"command": {"path", "args"}} and Goose's cmd/args)
	formArray             // opencode: "command": ["npx", ...]
)

// entry is what Wrap and Unwrap need to edit one server in place.
type entry struct {
	form form
	obj  *node   // the object holding the command member
	cmd  *member // "command", "path" or "cmd"
	args *member // "args", or nil when absent

	// What rewriting a remote entry (and undoing that) needs: def is the
	// object holding the entry's members (for Continue, its "transport"),
	// typ its "type" (or Cline's "transportType"), url the member its URL
	// came from, hdrs its "headers" and env its environment ("env", Goose's
	// "envs", opencode's "environment"); nil when absent.
	def                 *node
	typ, url, hdrs, env *member
}

// Error is a problem with a configuration file: bad JSON or YAML, or a
// value of the wrong type where a client expects servers. It names the file,
// the 1-based line and column (0 when unknown) and says what to fix.
type Error struct {
	File         string
	Line, Column int
	Key          string // JSON pointer of the value concerned, when known
	Msg          string

	err error // underlying cause, e.g. an *fs.PathError
}

// Error formats the error as "FILE:LINE:COL: KEY: MSG", leaving out the
// parts that are unknown.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		if b.Len() > 0 {
			b.WriteByte(':')
		}
		b.WriteString(strconv.Itoa(e.Line))
		if e.Column > 0 {
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(e.Column))
		}
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	if e.Key != "" {
		b.WriteString(e.Key)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap returns the underlying cause, if any.
func (e *Error) Unwrap() error { return e.err }

// Read reads and parses the file at loc.Path.
func Read(loc Location) (*Config, error) {
	data, err := os.ReadFile(loc.Path)
	if err != nil {
		return nil, &Error{File: loc.Path, Msg: "cannot read the file: " + errText(err), err: err}
	}
	return Parse(loc, data)
}

// errText is an OS error without the path it repeats.
func errText(err error) string {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err.Error()
	}
	return err.Error()
}

// Parse parses data as the configuration file loc describes. A file that
// holds nothing (only whitespace and comments) has no servers. Errors are
// *Error values naming loc.Path, the line and the column.
func Parse(loc Location, data []byte) (*Config, error) {
	c := &Config{Location: loc, raw: data}
	var root *node
	var err error
	if isYAMLFormat(loc.Format) {
		c.syntax = syntaxYAML
		root, err = parseYAML(data)
	} else {
		root, err = parseJSONC(data)
	}
	if err != nil {
		if e, ok := err.(*Error); ok {
			e.File = loc.Path
			return nil, e
		}
		return nil, &Error{File: loc.Path, Msg: err.Error(), err: err}
	}
	if root == nil {
		return c, nil
	}
	r := reader{c: c}
	if root.kind != kObject {
		return nil, r.errAt(root, "", fmt.Sprintf("the file holds %s; want an object (a mapping) at the top", root.kind))
	}
	if err := r.read(root); err != nil {
		return nil, err
	}
	return c, nil
}

// reader turns a parsed tree into Servers for one format.
type reader struct {
	c *Config
}

func (r *reader) errAt(n *node, key, msg string) *Error {
	line, col := position(r.c.raw, n.start)
	return &Error{File: r.c.Location.Path, Line: line, Column: col, Key: key, Msg: msg}
}

// container returns the object at key in parent, or nil when absent. A
// value of another type is an error: the client would not read it either.
func (r *reader) container(parent *node, key, ptr, want string) (*node, error) {
	if err := r.once(parent, key, ptr); err != nil {
		return nil, err
	}
	v := parent.get(key)
	if v == nil || v.kind == kNull {
		return nil, nil
	}
	if v.kind != kObject {
		return nil, r.errAt(v, ptr, fmt.Sprintf("want %s, found %s", want, v.kind))
	}
	if err := r.duplicates(v, ptr); err != nil {
		return nil, err
	}
	return v, nil
}

// duplicates refuses an object with a repeated key. Clients keep the last
// one; a scanner or editor that looked at the first would see a different
// server than the client starts, so Weir asks for the file to be fixed.
func (r *reader) duplicates(obj *node, ptr string) error {
	seen := make(map[string]int, len(obj.members))
	for i, m := range obj.members {
		if j, dup := seen[m.key]; dup {
			line, col := position(r.c.raw, obj.members[j].keyStart)
			return r.errAt(&node{start: m.keyStart}, ptr, fmt.Sprintf("the key %q appears twice (first at %d:%d); clients use only the last one, so remove the other", m.key, line, col))
		}
		seen[m.key] = i
	}
	return nil
}

// once refuses a key that appears more than once in obj.
func (r *reader) once(obj *node, key, ptr string) error {
	first := -1
	for i, m := range obj.members {
		if m.key != key {
			continue
		}
		if first >= 0 {
			line, col := position(r.c.raw, obj.members[first].keyStart)
			return r.errAt(&node{start: m.keyStart}, ptr, fmt.Sprintf("the key %q appears twice (first at %d:%d); clients use only the last one, so remove the other", key, line, col))
		}
		first = i
	}
	return nil
}

const wantServers = "an object mapping server names to server entries"

func (r *reader) read(root *node) error {
	if err := r.duplicates(root, ""); err != nil && r.c.syntax == syntaxYAML {
		return err // YAML forbids duplicate keys; JSON settings files may have them outside the MCP part
	}
	loc := r.c.Location
	switch loc.Format {
	case FormatClaudeCode:
		if err := r.serverMap(root, "mcpServers", "", ""); err != nil {
			return err
		}
		projects, err := r.container(root, "projects", "/projects", "an object mapping project directories to project settings")
		if err != nil || projects == nil {
			return err
		}
		for _, m := range projects.members {
			if m.val.kind != kObject {
				continue
			}
			if err := r.serverMap(m.val, "mcpServers", "/projects/"+escapePointer(m.key), m.key); err != nil {
				return err
			}
		}
		return nil
	case FormatVSCode:
		return r.serverMap(root, "servers", "", "")
	case FormatVSCodeSettings:
		// "mcp": {"servers": {...}} as VS Code writes it, and the flat
		// "mcp.servers" key VS Code also accepts.
		mcp, err := r.container(root, "mcp", "/mcp", "an object with \"servers\"")
		if err != nil {
			return err
		}
		if mcp != nil {
			if err := r.serverMap(mcp, "servers", "/mcp", ""); err != nil {
				return err
			}
		}
		return r.serverMap(root, "mcp.servers", "", "")
	case FormatZed:
		return r.serverMap(root, "context_servers", "", "")
	case FormatOpencode:
		mcp, err := r.container(root, "mcp", "/mcp", wantServers)
		if err != nil || mcp == nil {
			return err
		}
		// opencode 2 nests the servers one level deeper, under mcp.servers.
		if s := mcp.get("servers"); s != nil && s.kind == kObject && s.get("type") == nil && s.get("command") == nil && s.get("url") == nil {
			return r.serverMap(mcp, "servers", "/mcp", "")
		}
		return r.serverMap(root, "mcp", "", "")
	case FormatContinue:
		exp, err := r.container(root, "experimental", "/experimental", "an object")
		if err != nil || exp == nil {
			return err
		}
		return r.serverList(exp, "modelContextProtocolServers", "/experimental")
	case FormatContinueYAML:
		return r.serverList(root, "mcpServers", "")
	case FormatGoose:
		return r.serverMap(root, "extensions", "", "")
	default: // FormatMCPServers, FormatGemini
		return r.serverMap(root, "mcpServers", "", "")
	}
}

// serverMap reads the servers of parent[key], an object of name → entry.
func (r *reader) serverMap(parent *node, key, prefix, project string) error {
	ptr := prefix + "/" + escapePointer(key)
	m, err := r.container(parent, key, ptr, wantServers)
	if err != nil || m == nil {
		return err
	}
	for _, mem := range m.members {
		if err := r.entry(mem.key, mem.val, ptr+"/"+escapePointer(mem.key), project); err != nil {
			return err
		}
	}
	return nil
}

// serverList reads the servers of parent[key], a list of entries that carry
// their own name (Continue).
func (r *reader) serverList(parent *node, key, prefix string) error {
	ptr := prefix + "/" + escapePointer(key)
	if err := r.once(parent, key, ptr); err != nil {
		return err
	}
	l := parent.get(key)
	if l == nil || l.kind == kNull {
		return nil
	}
	if l.kind != kArray {
		return r.errAt(l, ptr, fmt.Sprintf("want a list of server entries, found %s", l.kind))
	}
	used := map[string]bool{}
	for i, v := range l.elems {
		name := ""
		if v.kind == kObject {
			name = str(v.get("name"))
			if name == "" {
				t := v.get("transport")
				if t == nil {
					t = v
				}
				if c := str(t.get("command")); c != "" {
					name = deriveName(c, stringsOf(t.get("args")))
				}
			}
		}
		if name == "" {
			name = fmt.Sprintf("server-%d", i+1)
		}
		if used[name] {
			name = fmt.Sprintf("%s-%d", name, i+1)
		}
		used[name] = true
		if err := r.entry(name, v, ptr+"/"+strconv.Itoa(i), ""); err != nil {
			return err
		}
	}
	return nil
}

// entry reads one server entry.
func (r *reader) entry(name string, v *node, ptr, project string) error {
	s := Server{Name: name, Path: ptr, Project: project}
	var e entry
	defer func() {
		r.c.Servers = append(r.c.Servers, s)
		r.c.entries = append(r.c.entries, e)
	}()
	if v.kind != kObject {
		s.Problem = fmt.Sprintf("the entry is %s, not an object", v.kind)
		return nil
	}
	if v.problem != "" {
		s.Problem = v.problem
	}
	if err := r.duplicates(v, ptr); err != nil {
		return err
	}
	f := r.c.Location.Format
	def := v // the object holding command, args, url...
	if f == FormatContinue {
		t := v.get("transport")
		if t == nil || t.kind != kObject {
			s.Problem = "the entry has no \"transport\" object"
			return nil
		}
		if err := r.duplicates(t, ptr+"/transport"); err != nil {
			return err
		}
		def = t
	}

	e.def = def
	typ := str(def.get("type"))
	e.typ = def.member("type")
	if typ == "" && str(def.get("transportType")) != "" {
		typ, e.typ = str(def.get("transportType")), def.member("transportType") // Cline's older spelling
	}
	cmdKey, envKey, urlKey := keysOf(f)
	e.env = def.member(envKey)
	s.Disabled = isTrue(v.get("disabled")) || isFalse(v.get("enabled"))
	s.Cwd = str(def.get("cwd"))
	s.EnvFile = str(def.get("envFile"))
	s.Env = stringMap(def.get(envKey))
	s.Headers = stringMap(def.get("headers"))

	// The URL: "url" nearly everywhere, Windsurf's "serverUrl", Gemini's
	// "httpUrl" (Streamable HTTP; its "url" is SSE), Goose's "uri".
	url, urlFrom := "", ""
	for _, k := range []string{urlKey, "serverUrl", "httpUrl"} {
		if u := str(def.get(k)); u != "" {
			url, urlFrom = u, k
			e.url = def.member(k)
			break
		}
	}
	s.URL = url
	e.hdrs = def.member("headers")

	cm := def.member(cmdKey)
	if cm != nil && cm.val.kind == kNull {
		cm = nil
	}
	switch {
	case cm == nil:
	case cm.val.kind == kString && f == FormatOpencode:
		s.Problem = "opencode wants \"command\" as a list, [\"npx\", \"-y\", \"package\"]; it does not read a string or \"args\""
	case cm.val.kind == kString:
		e.form, e.obj, e.cmd, e.args = formSplit, def, cm, def.member("args")
	case cm.val.kind == kObject && f == FormatZed:
		// Zed's older form: "command": {"path": ..., "args": [...], "env": {...}}.
		if err := r.duplicates(cm.val, ptr+"/command"); err != nil {
			return err
		}
		p := cm.val.member("path")
		if p == nil || p.val.kind != kString {
			s.Problem = "\"command\" has no \"path\" string"
			break
		}
		e.form, e.obj, e.cmd, e.args = formSplit, cm.val, p, cm.val.member("args")
		if env := cm.val.get("env"); env != nil {
			s.Env = stringMap(env)
		}
	case cm.val.kind == kArray && f == FormatOpencode:
		e.form, e.obj, e.cmd = formArray, def, cm
	case f == FormatOpencode:
		s.Problem = fmt.Sprintf("\"command\" is %s; want a list of strings", cm.val.kind)
	default:
		s.Problem = fmt.Sprintf("%q is %s; want a string", cmdKey, cm.val.kind)
	}

	switch e.form {
	case formSplit:
		s.Command = e.cmd.val.str
		if e.args != nil && e.args.val.kind != kNull { // "args": null reads as no arguments
			if e.args.val.kind != kArray {
				s.Problem = fmt.Sprintf("\"args\" is %s; want a list of strings", e.args.val.kind)
			} else {
				s.Args = stringsOf(e.args.val)
				if !allStrings(e.args.val) {
					s.Problem = "\"args\" holds values that are not strings"
				}
			}
		}
	case formArray:
		all := stringsOf(cm.val)
		if len(all) == 0 {
			s.Problem = "\"command\" is an empty list"
		} else {
			s.Command, s.Args = all[0], all[1:]
		}
		if !allStrings(cm.val) {
			s.Problem = "\"command\" holds values that are not strings"
		}
	}

	if f == FormatZed && e.form == formNone && url == "" && typ == "" {
		// Zed servers an extension provides ("source": "extension"): the
		// extension starts them; the file holds only their settings.
		typ = "builtin"
	}
	switch strings.ToLower(typ) {
	case "":
		switch {
		case e.form != formNone:
			s.Transport = TransportStdio
		case url != "" && f == FormatGemini && urlFrom == "url":
			s.Transport = TransportSSE
		case url != "":
			s.Transport = TransportHTTP
		case s.Problem == "":
			s.Problem = "the entry has neither a command nor a URL"
		}
	case "stdio", "local":
		s.Transport = TransportStdio
		if e.form == formNone && s.Problem == "" {
			s.Problem = fmt.Sprintf("the entry has type %q but no %q", typ, cmdKey)
		}
	case "http", "streamablehttp", "streamable-http", "streamable_http", "remote":
		s.Transport = TransportHTTP
	case "sse":
		s.Transport = TransportSSE
	case "builtin", "platform", "frontend", "inline_python":
		s.Transport = TransportBuiltin
	default:
		if s.Problem == "" {
			s.Problem = fmt.Sprintf("unknown server type %q", typ)
		}
	}
	if (s.Transport == TransportHTTP || s.Transport == TransportSSE) && url == "" && s.Problem == "" {
		s.Problem = fmt.Sprintf("the entry has type %q but no URL", typ)
	}
	if s.Transport != TransportStdio {
		// Only the members a remote rewrite needs are kept: a command
		// member beside a URL is never edited.
		e = entry{def: e.def, typ: e.typ, url: e.url, hdrs: e.hdrs, env: e.env}
	}
	s.Wrapped = s.Transport == TransportStdio && isWrapped(s.Command, s.Args)
	return nil
}

// keysOf returns the keys a format spells an entry's command, environment
// and URL with.
func keysOf(format string) (cmdKey, envKey, urlKey string) {
	switch format {
	case FormatGoose:
		return "cmd", "envs", "uri"
	case FormatOpencode:
		return "command", "environment", "url"
	}
	return "command", "env", "url"
}

// isWrapped reports whether a command line runs `weir run`.
func isWrapped(command string, args []string) bool {
	return isWeir(command) && len(args) > 0 && args[0] == "run"
}

func str(n *node) string {
	if n != nil && n.kind == kString {
		return n.str
	}
	return ""
}

func isTrue(n *node) bool  { return n != nil && n.kind == kBool && n.str == "true" }
func isFalse(n *node) bool { return n != nil && n.kind == kBool && n.str == "false" }

// stringsOf returns the elements of an array as strings (numbers and
// booleans as written; null as "").
func stringsOf(n *node) []string {
	if n == nil || n.kind != kArray {
		return nil
	}
	out := make([]string, len(n.elems))
	for i, e := range n.elems {
		out[i] = e.str
	}
	return out
}

func allStrings(n *node) bool {
	for _, e := range n.elems {
		if e.kind != kString {
			return false
		}
	}
	return true
}

// stringMap returns an object of scalars as a map (values as written).
func stringMap(n *node) map[string]string {
	if n == nil || n.kind != kObject || len(n.members) == 0 {
		return nil
	}
	out := make(map[string]string, len(n.members))
	for _, m := range n.members {
		out[m.key] = m.val.str
	}
	return out
}

// escapePointer escapes one JSON pointer reference token (RFC 6901).
func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// isWeir reports whether command runs Weir: "weir", or a path ending in
// /weir, \weir or weir.exe.
func isWeir(command string) bool {
	base := command
	if i := strings.LastIndexAny(base, `/\`); i >= 0 {
		base = base[i+1:]
	}
	return base == "weir" || strings.EqualFold(base, "weir.exe")
}

// runValueFlags are the flags of `weir run` that take a value; parseRun
// needs them to find where the server's command starts.
var runValueFlags = map[string]bool{
	"--name": true, "--policy": true, "--upstream": true, "--header": true, "--header-env": true,
	"--max-message-bytes": true, "--request-timeout": true, "--shutdown-grace": true,
}

// runLine is what the arguments of a `weir run` entry say.
type runLine struct {
	cmd                    int // index of the server's command; 0 when there is none (--upstream)
	name, policy, upstream string
	headers                []string // --header values, in order
	headerEnv              []string // --header-env values, in order
	flags                  []runHeader
}

// runHeader is one --header (or, env, --header-env) value of a weir run
// line, in runLine.flags in the order of the line.
type runHeader struct {
	env bool
	v   string
}

// parseRunLine reads the arguments of a `weir run` entry (args[0] ==
// "run") the way the CLI does: flags up to "--" or the first non-flag
// argument, then the server's command. ok is false when args is not a
// weir run line, a flag lacks its value, or "--" is followed by nothing.
func parseRunLine(args []string) (r runLine, ok bool) {
	if len(args) == 0 || args[0] != "run" {
		return runLine{}, false
	}
	set := func(flag, v string) {
		switch flag {
		case "--name":
			r.name = v
		case "--policy":
			r.policy = v
		case "--upstream":
			r.upstream = v
		case "--header":
			r.headers = append(r.headers, v)
			r.flags = append(r.flags, runHeader{v: v})
		case "--header-env":
			r.headerEnv = append(r.headerEnv, v)
			r.flags = append(r.flags, runHeader{env: true, v: v})
		}
	}
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			if i+1 < len(args) {
				r.cmd = i + 1
				return r, true
			}
			return runLine{}, false
		case runValueFlags[a]:
			if i+1 >= len(args) {
				return runLine{}, false
			}
			i++
			set(a, args[i])
		case strings.HasPrefix(a, "--") && strings.Contains(a, "="):
			flag, v, _ := strings.Cut(a, "=")
			set(flag, v)
		case strings.HasPrefix(a, "-") && a != "-":
			// a boolean flag (--monitor)
		default:
			r.cmd = i
			return r, true
		}
	}
	return r, true
}

// parseRun reads a `weir run` line as parseRunLine does. It returns the
// index of the server's command and the --name and --policy values; ok is
// false when the line names no command (as a remote entry's does not), or
// names --upstream as well (weir run refuses both).
func parseRun(args []string) (k int, name, policy string, ok bool) {
	r, ok := parseRunLine(args)
	if !ok || r.cmd == 0 || r.upstream != "" {
		return 0, "", "", false
	}
	return r.cmd, r.name, r.policy, true
}

// deriveName names a list entry that has no name, from its command: the
// package or script it runs ("npx -y @scope/server-x@1" → "server-x").
func deriveName(command string, args []string) string {
	if isWrapped(command, args) {
		// Keep the name a wrapped entry was given, so that it reads the
		// same before and after weir wrap.
		r, ok := parseRunLine(args)
		if r.name != "" {
			return SuggestName(r.name)
		}
		if ok && r.cmd > 0 {
			return deriveName(args[r.cmd], args[r.cmd+1:])
		}
	}
	base := func(s string) string {
		if i := strings.LastIndexAny(s, `/\`); i >= 0 {
			s = s[i+1:]
		}
		return s
	}
	name := base(command)
	launchers := map[string]bool{"npx": true, "npx.cmd": true, "uvx": true, "uv": true, "node": true, "python": true, "python3": true, "bunx": true, "deno": true, "pnpm": true, "docker": true}
	if launchers[strings.ToLower(name)] {
		for _, a := range args {
			if !strings.HasPrefix(a, "-") && a != "run" && a != "exec" && a != "dlx" {
				name = a
				break
			}
		}
	}
	name = base(name)
	if i := strings.LastIndex(name, "@"); i > 0 {
		name = name[:i]
	}
	name = strings.TrimSuffix(name, path.Ext(name))
	return SuggestName(name)
}
