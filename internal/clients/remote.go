package clients

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// This file puts remote (Streamable HTTP) entries behind Weir: Wrap turns
//
//	"linear": {"type": "http", "url": "https://mcp.linear.app/mcp", "headers": {"Authorization": "Bearer ${LINEAR_TOKEN}"}}
//
// into a stdio entry the client starts,
//
//	"linear": {"type": "stdio", "command": "weir", "args": ["run", "--name", "linear", "--upstream", "https://mcp.linear.app/mcp", "--header", "Authorization: ${WEIR_HEADER_1}"], "env": {"WEIR_UNWRAP": "...", "WEIR_HEADER_1": "Bearer ${LINEAR_TOKEN}"}}
//
// and Unwrap turns it back, byte for byte.
//
// The edit is made member by member, in place: the type value becomes the
// format's stdio type; the URL member (or "headers", whichever comes
// first) is replaced by the command, args and env members; the other of
// the two is removed with the separator before it; an env member the entry
// already has gets the record (and the header variables) as its first
// variables. Every other byte stays. The original text of what was
// replaced or removed is kept, base64 encoded, in the environment variable
// WEIR_UNWRAP of the entry's env: env is a member every format accepts in
// a stdio entry (opencode, whose schema rejects unknown members,
// included), clients keep it when they rewrite their files, and weir run
// ignores the variable. Unwrap puts the recorded text back and then checks
// its work the strict way: wrapping the result again must give exactly
// the current bytes. An entry edited since weir wrap (or whose record is
// gone) fails that check and is refused, never guessed at.
//
// Header values stay out of args: a process's arguments are visible to
// every local user (ps, /proc/PID/cmdline), its environment only to its
// owner. Each header is written as --header 'Name: ${WEIR_HEADER_N}' and
// its value, as written, as the variable WEIR_HEADER_N of the entry's env,
// right after WEIR_UNWRAP. The client expands the references in env values
// that it expands in headers (only clients documented to do so get their
// references moved; see envRefs), and weir run's --header expansion is a
// single pass, so the value reaches the server as the client would have
// sent it: a literal $ or ${X} in it is never expanded again.
//
// Claude Code is the exception (see headerVars): it expands every ${...}
// of a stdio entry's args itself, from its own environment, which holds no
// WEIR_HEADER_N, and drops a server whose variable is not set. Its headers
// are written as --header-env 'Name=WEIR_HEADER_N' instead, which names
// the variable with no ${...} for Claude Code to expand; weir run takes
// the variable's value as it is. The value goes into env as written, its
// ${VAR} references included: Claude Code expands those in env values as
// it does in headers (see envRefs), so weir run is given the value Claude
// Code would have sent (record version 3). An earlier weir wrap kept
// Claude Code's headers in args as --header 'Name: VALUE' flags, as
// written (record version 1); those entries still unwrap.

// stashKey is the environment variable a rewritten remote entry keeps its
// original members in.
const stashKey = "WEIR_UNWRAP"

// headerVarPrefix names the environment variables a rewritten remote
// entry's header values travel in: WEIR_HEADER_1, WEIR_HEADER_2, ... in
// header order, skipping a name the entry's env already has.
const headerVarPrefix = "WEIR_HEADER_"

// Versions of the record, which say where the header values went.
// Version 1 is what weir wrap wrote for every client before header values
// moved out of args; version 3 is what it writes for Claude Code.
const (
	stashArgs    = 1 // header values in args, as written: --header 'Name: VALUE'
	stashEnv     = 2 // header values in WEIR_HEADER_N variables of env, named as --header 'Name: ${WEIR_HEADER_N}'
	stashEnvFlag = 3 // header values in WEIR_HEADER_N variables of env, named as --header-env 'Name=WEIR_HEADER_N'
)

// headerVars reports whether the client of loc can be given a header
// value in a variable of env, named in args as ${WEIR_HEADER_N}: whether
// it leaves that reference in a stdio entry's args for weir run. Claude
// Code does not: it expands every ${...} in args from its own environment
// and, finding WEIR_HEADER_N unset there, drops the server (or fails to
// read the file); it is given --header-env 'Name=WEIR_HEADER_N' instead
// (record version 3). Gemini CLI expands ${VAR} in args from its environment
// too, but leaves one that is not set as written. The other clients expand
// only their own syntaxes (${env:NAME}, {env:NAME}, ${input:id}, names of
// their own such as ${userHome}) or nothing.
func headerVars(loc Location) bool {
	return loc.Client != ClaudeCode && loc.Format != FormatClaudeCode
}

// stash is the record of one rewrite: the original text of every span it
// replaced or removed, and where each goes back.
type stash struct {
	V       int    `json:"v"`
	TypeKey string `json:"typeKey,omitempty"` // the type member's key ("type", "transportType"); "" when there was none
	Type    string `json:"type,omitempty"`    // the type value's text
	First   string `json:"first"`             // the member the command, args (and env) members replaced
	Moved   string `json:"moved,omitempty"`   // the other of url and headers, with the separator before it, removed
	After   string `json:"after,omitempty"`   // the key of the member Moved followed; "" when that was First
	Env     bool   `json:"env,omitempty"`     // the entry had its env member, and the record was inserted into it
	Headers int    `json:"headers,omitempty"` // how many header variables follow the record in env (versions 2 and 3)
}

func (st stash) encode() string {
	b, err := json.Marshal(st)
	if err != nil {
		panic(err) // strings only
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeStash(s string) (stash, bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return stash{}, false
	}
	var st stash
	if json.Unmarshal(b, &st) != nil || st.First == "" || st.Headers < 0 {
		return stash{}, false
	}
	if st.V != stashEnv && st.V != stashEnvFlag && (st.V != stashArgs || st.Headers != 0) {
		return stash{}, false
	}
	return st, true
}

// keptMembers are the members of a remote entry a rewrite leaves where
// they are: settings of the entry that mean the same for the stdio entry
// it becomes (and that strict formats accept there). A remote entry with
// any other member is refused: the member could be a credential or a way
// to sign in that weir run cannot take over, and Weir drops nothing
// silently.
var keptMembers = map[string]bool{
	"disabled": true, "enabled": true, "timeout": true, "autoApprove": true, "alwaysAllow": true,
	"disabledTools": true, "description": true, "name": true, "trust": true, "includeTools": true,
	"excludeTools": true, "source": true, "settings": true, "bundled": true, "available_tools": true,
	"display_name": true, "env_keys": true,
}

// signInMembers are members that carry a credential or a way to sign in,
// with what to say about each.
var signInMembers = map[string]string{
	"oauth":                "it configures OAuth sign-in (\"oauth\")",
	"auth":                 "it configures OAuth sign-in (\"auth\")",
	"headersHelper":        "its headers come from a command (\"headersHelper\")",
	"authProviderType":     "it signs in through the client (\"authProviderType\")",
	"targetAudience":       "it signs in through the client (\"targetAudience\")",
	"targetServiceAccount": "it signs in through the client (\"targetServiceAccount\")",
	"requestOptions":       "its \"requestOptions\" can carry headers and other credentials",
	"apiKey":               "it has an \"apiKey\"",
}

// reservedHeaders are set by weir run itself; --header refuses them.
var reservedHeaders = []string{"Mcp-Session-Id", "Mcp-Protocol-Version", "Content-Type", "Accept", "Content-Length"}

var (
	// headerVarRE is the value of a --header flag weir wrap wrote: a
	// reference to a header variable of the entry's env.
	headerVarRE = regexp.MustCompile(`^\$\{` + headerVarPrefix + `[1-9][0-9]*\}$`)
	// headerNameRE is an HTTP header name (a token, RFC 9110).
	headerNameRE = regexp.MustCompile("^[A-Za-z0-9!#$%&'*+.^_`|~-]+$")
	// anyRefRE is a variable reference in any client's syntax: ${NAME},
	// ${env:NAME}, ${input:id}, ${{ secrets.NAME }}, opencode's {env:NAME}.
	anyRefRE = regexp.MustCompile(`\$\{[^}]*\}+|\{(env|file):[^}]*\}`)
	// shownRefRE is a reference the wrap listing shows: a variable's name
	// (or a file's path), no default value and nothing else.
	shownRefRE = regexp.MustCompile(`\$\{[A-Za-z_][A-Za-z0-9_]*\}|\$?\{(env|input|file):[^${}\s]+\}|\$\{\{ *secrets\.[A-Za-z0-9_.-]+ *\}\}`)
)

// envRefs reports whether the client of loc is documented to expand, in
// a stdio entry's command, args and env, the same variable references it
// expands in a remote entry's url and headers: then the URL can move into
// args and a header value into env with its references, and they reach
// weir run as the client would have sent them. Every client that expands
// references in a remote entry does (their syntaxes below); for any other
// client, a URL or header holding a reference is refused.
func envRefs(loc Location) bool {
	switch {
	case loc.Client == ClaudeCode || loc.Format == FormatClaudeCode:
		return true // ${VAR} and ${VAR:-default} in command, args, env, url and headers
	case loc.Client == GeminiCLI || loc.Format == FormatGemini:
		return true // $VAR and ${VAR} in every string of settings.json
	case loc.Client == Cursor:
		return true // ${env:NAME}, ${userHome}, ${workspaceFolder}... in command, args, env, url and headers
	case loc.Client == VSCode || loc.Format == FormatVSCode || loc.Format == FormatVSCodeSettings:
		return true // ${env:NAME}, ${input:id} and the predefined variables, in the whole server configuration
	case loc.Client == Windsurf:
		return true // ${env:NAME}, ${file:PATH} in command, args, env, serverUrl, url and headers
	case loc.Client == Opencode || loc.Format == FormatOpencode:
		return true // {env:NAME}, {file:PATH}, in the whole file
	}
	return false
}

// tokenAdvice says how to give weir run --upstream a token by hand in a
// file of loc: in a header variable of env where the client allows it,
// since a token in args shows in the process list.
func tokenAdvice(loc Location) string {
	if !headerVars(loc) {
		return "--header-env 'Authorization=WEIR_HEADER_1', with WEIR_HEADER_1 set to Bearer TOKEN in its env: a token in args would show in the process list"
	}
	return "--header 'Authorization: ${WEIR_HEADER_1}', with WEIR_HEADER_1 set to Bearer TOKEN in its env: a token in args would show in the process list"
}

// stdioType is the type value of a stdio entry in a format.
func stdioType(format string) string {
	if format == FormatOpencode {
		return "local"
	}
	return "stdio"
}

// remotePlan is how one remote entry is rewritten.
type remotePlan struct {
	edits  []edit
	server Server // the entry as it reads afterwards
	detail string // for the Change
}

// sseRefusal says why an entry for the older HTTP+SSE transport is left as
// it is.
func sseRefusal(s Server, format string) string {
	how := "it uses the older HTTP+SSE transport"
	if format == FormatGemini {
		how = "Gemini CLI reads \"url\" as the older HTTP+SSE transport (\"httpUrl\" is Streamable HTTP)"
	}
	return how + ", which weir run --upstream does not speak (it speaks Streamable HTTP); if the server also offers Streamable HTTP (often at /mcp), point the entry there and run weir wrap again"
}

// remoteEdits computes how the remote entry i is rewritten to run behind
// `weir run --upstream` (weir is the command, policy the --policy, if
// any), or says why it is not. version is the record's, which says where
// the header values go (see stashArgs).
func (c *Config) remoteEdits(i int, weir, policy string, version int) (remotePlan, string) {
	s, e := c.Servers[i], c.entries[i]
	def := e.def
	if def == nil || e.url == nil || e.url.val.kind != kString {
		return remotePlan{}, "the entry has no URL"
	}
	if e.typ == nil && strings.HasSuffix(strings.TrimRight(pathOf(s.URL), "/"), "/sse") {
		return remotePlan{}, "its URL ends in /sse, the address of the older HTTP+SSE transport, which weir run --upstream does not speak (it speaks Streamable HTTP); if the server also offers Streamable HTTP (often at /mcp), point the entry there, or give it a \"type\" that says which it is, and run weir wrap again"
	}
	if err := ValidName(s.Name); err != nil {
		return remotePlan{}, err.Error()
	}
	cmdKey, envKey, _ := keysOf(c.Location.Format)
	for _, m := range def.members {
		mm := &m
		switch {
		case sameMember(mm, e.typ), sameMember(mm, e.url), sameMember(mm, e.hdrs), sameMember(mm, e.env):
		case keptMembers[m.key]:
		case signInMembers[m.key] != "":
			return remotePlan{}, signInMembers[m.key] + ", which weir run --upstream cannot take over; Weir leaves the entry as it is rather than drop it. To put the server behind Weir, give the entry a token in \"headers\" instead (or write it by hand as weir run --upstream URL " + tokenAdvice(c.Location) + ")"
		default:
			return remotePlan{}, fmt.Sprintf("the entry has %q, which weir run --upstream has no way to carry over; Weir leaves the entry as it is rather than drop it (remove %q, or put the server behind Weir by hand)", m.key, m.key)
		}
	}
	client := c.Location.Client.Name
	if c.Location.Client == Unknown {
		client = "this client"
	}
	known := envRefs(c.Location)
	unknownRefs := func(what, v, where string) string {
		if !known && anyRefRE.MatchString(v) {
			return fmt.Sprintf("%s holds a variable reference, and Weir does not know that %s expands references in a stdio entry's %s as it does here; moved there, the reference could reach the server as written, so Weir leaves the entry as it is", what, client, where)
		}
		return ""
	}

	// The URL, as weir run --upstream takes it.
	u := s.URL
	if why := unknownRefs("the URL", u, "args"); why != "" {
		return remotePlan{}, why
	}
	if !anyRefRE.MatchString(u) {
		p, err := url.Parse(u)
		switch {
		case err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "":
			return remotePlan{}, "weir run --upstream needs an http:// or https:// URL, and this one is not"
		case p.User != nil:
			return remotePlan{}, "the URL carries credentials (user:password@); weir run --upstream takes them only as a header: move them to \"headers\" (e.g. \"Authorization\": \"Basic ...\") and run weir wrap again"
		}
	}

	// The environment the record (and the header values) go into.
	if m := e.env; m != nil {
		switch {
		case m.val.kind != kObject:
			return remotePlan{}, fmt.Sprintf("%q is %s; want an object", m.key, m.val.kind)
		case m.val.get(stashKey) != nil:
			return remotePlan{}, fmt.Sprintf("%q already holds %s", m.key, stashKey)
		}
	}
	taken := func(k string) bool {
		if e.env != nil {
			for _, m := range e.env.val.members {
				if strings.EqualFold(m.key, k) { // environment names are case-insensitive on Windows
					return true
				}
			}
		}
		return false
	}

	// The headers, as --header flags (--header-env for version 3), each
	// value (unless blank) in a variable of env, named in the flag.
	var headers [][2]string // flag, value
	var vars [][2]string    // name, value
	if h := e.hdrs; h != nil {
		if h.val.kind != kObject {
			return remotePlan{}, fmt.Sprintf("\"headers\" is %s; want an object of header names and values", h.val.kind)
		}
		seen := map[string]bool{}
		n := 0
		for _, m := range h.val.members {
			name, v := m.key, m.val.str
			what := fmt.Sprintf("the header %q", name)
			switch {
			case m.val.kind != kString:
				return remotePlan{}, fmt.Sprintf("%s is %s; want a string", what, m.val.kind)
			case !headerNameRE.MatchString(name):
				return remotePlan{}, fmt.Sprintf("%s is not a valid HTTP header name", what)
			case strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }):
				return remotePlan{}, fmt.Sprintf("%s has a line break or another control character in its value", what)
			case seen[strings.ToLower(name)]:
				return remotePlan{}, fmt.Sprintf("%s appears twice", what)
			}
			seen[strings.ToLower(name)] = true
			for _, r := range reservedHeaders {
				if strings.EqualFold(name, r) {
					return remotePlan{}, fmt.Sprintf("%s is one weir run sets itself; remove it and run weir wrap again", what)
				}
			}
			if why := unknownRefs(what, v, "env"); why != "" {
				return remotePlan{}, why
			}
			// weir run --header trims the value, as clients do (HTTP
			// whitespace); a blank one holds nothing to hide.
			t := strings.Trim(v, " \t")
			if version == stashArgs || t == "" {
				headers = append(headers, [2]string{"--header", name + ": " + v})
				continue
			}
			if version == stashEnvFlag && strings.TrimSpace(t) != t {
				// weir run --header-env trims every kind of white space
				// from the value, the client only spaces and tabs.
				return remotePlan{}, fmt.Sprintf("%s begins or ends with a white space character weir run --header-env would remove; Weir leaves the entry as it is", what)
			}
			var key string
			for {
				n++
				if key = headerVarPrefix + strconv.Itoa(n); !taken(key) {
					break
				}
			}
			vars = append(vars, [2]string{key, t})
			if version == stashEnvFlag {
				headers = append(headers, [2]string{"--header-env", name + "=" + key})
			} else {
				headers = append(headers, [2]string{"--header", name + ": ${" + key + "}"})
			}
		}
	}

	argv := []string{"run", "--name", s.Name}
	if policy != "" {
		argv = append(argv, "--policy", policy)
	}
	argv = append(argv, "--upstream", u)
	for _, h := range headers {
		argv = append(argv, h[0], h[1])
	}

	// What is replaced, what is removed, and the record of both.
	first, moved := e.url, e.hdrs
	if moved != nil && moved.keyStart < first.keyStart {
		first, moved = moved, first
	}
	var pred *member
	if moved != nil {
		for k := range def.members {
			if sameMember(&def.members[k], moved) {
				pred = &def.members[k-1] // first comes before moved
				break
			}
		}
	}
	if why := c.remoteExact(def, e, first, moved, pred); why != "" {
		return remotePlan{}, why
	}
	raw := c.raw
	st := stash{V: version, First: string(raw[first.keyStart:first.val.end]), Env: e.env != nil, Headers: len(vars)}
	if e.typ != nil {
		st.TypeKey, st.Type = e.typ.key, string(raw[e.typ.val.start:e.typ.val.end])
	}
	if moved != nil {
		st.Moved = string(raw[pred.val.end:moved.val.end])
		if !sameMember(pred, first) {
			st.After = pred.key
		}
	}
	record := st.encode()

	lead, colon := c.memberLayoutOf(def, first)
	yamlBlock := c.syntax == syntaxYAML && !def.flow
	if yamlBlock {
		ls := lineStart(raw, first.keyStart)
		if !yamlLeadRE.Match(raw[ls:first.keyStart]) {
			return remotePlan{}, "the entry is laid out in a way Weir does not rewrite; edit it by hand"
		}
	}
	key := func(k string) string {
		if c.syntax == syntaxYAML {
			return k
		}
		return quoteJSON(k)
	}
	var sep, eol, indent, inner string
	multi := false
	switch {
	case c.syntax == syntaxYAML && def.flow:
		sep = ", "
	case yamlBlock:
		sep = lead
	default:
		sep = "," + lead
		if nl := strings.LastIndexAny(lead, "\r\n"); nl >= 0 {
			multi = true
			eol = "\n"
			if strings.Contains(lead, "\r\n") {
				eol = "\r\n"
			} else if !strings.Contains(lead, "\n") {
				eol = "\r"
			}
			indent = lead[nl+1:]
			inner = indent + c.remoteStep(def, indent)
		}
	}
	isep := ", "
	if c.syntax == syntaxJSON && colon == ":" {
		isep = ","
	}
	list := func(items []string) string {
		enc := make([]string, len(items))
		for k, it := range items {
			enc[k] = c.enc(it)
		}
		if !multi {
			return "[" + strings.Join(enc, isep) + "]"
		}
		var b strings.Builder
		b.WriteByte('[')
		for k, it := range enc {
			if k > 0 {
				b.WriteByte(',')
			}
			b.WriteString(eol + inner + it)
		}
		b.WriteString(eol + indent + "]")
		return b.String()
	}
	// The variables written into env: the record, then the header values.
	envMembers := make([]string, 0, 1+len(vars))
	for _, kv := range append([][2]string{{stashKey, record}}, vars...) {
		if c.syntax == syntaxYAML {
			envMembers = append(envMembers, kv[0]+": "+c.enc(kv[1]))
		} else {
			envMembers = append(envMembers, key(kv[0])+colon+c.enc(kv[1]))
		}
	}

	var b strings.Builder
	if c.Location.Format == FormatOpencode {
		b.WriteString(key(cmdKey) + colon + list(append([]string{weir}, argv...)))
	} else {
		b.WriteString(key(cmdKey) + colon + c.enc(weir) + sep + key("args") + colon + list(argv))
	}
	if e.env == nil {
		b.WriteString(sep + key(envKey) + colon)
		if multi {
			b.WriteString("{" + eol + inner + strings.Join(envMembers, ","+eol+inner) + eol + indent + "}")
		} else {
			b.WriteString("{" + strings.Join(envMembers, isep) + "}")
		}
	}
	edits := []edit{{first.keyStart, first.val.end, b.String()}}
	if e.typ != nil {
		edits = append(edits, edit{e.typ.val.start, e.typ.val.end, c.enc(stdioType(c.Location.Format))})
	}
	if moved != nil {
		edits = append(edits, edit{pred.val.end, moved.val.end, ""})
	}
	if m := e.env; m != nil {
		obj := m.val
		if len(obj.members) == 0 {
			if obj.start >= len(raw) || raw[obj.start] != '{' {
				return remotePlan{}, fmt.Sprintf("%q is written in a way Weir does not rewrite; edit the entry by hand", m.key)
			}
			edits = append(edits, edit{obj.start + 1, obj.start + 1, strings.Join(envMembers, isep)})
		} else {
			k := obj.members[0].keyStart
			ws := k
			for ws > obj.start && isSpace(raw[ws-1]) {
				ws--
			}
			// Each variable is followed by what separates the env's first
			// member from what comes before it.
			var after string
			switch {
			case c.syntax == syntaxYAML && !obj.flow:
				ls := lineStart(raw, k)
				if strings.Trim(string(raw[ls:k]), " ") != "" || ls == 0 {
					return remotePlan{}, fmt.Sprintf("%q is laid out in a way Weir does not rewrite; edit the entry by hand", m.key)
				}
				after = lineBreakBefore(raw, ls) + string(raw[ls:k])
			case strings.ContainsAny(string(raw[ws:k]), "\r\n"):
				after = "," + string(raw[ws:k])
			default:
				after = ", "
			}
			edits = append(edits, edit{k, k, strings.Join(envMembers, after) + after})
		}
	}

	w := s
	w.Transport, w.Command, w.Args, w.URL, w.Headers, w.Wrapped = TransportStdio, weir, argv, "", nil, true
	w.Env = map[string]string{stashKey: record}
	for _, kv := range vars {
		w.Env[kv[0]] = kv[1]
	}
	for k, v := range s.Env {
		w.Env[k] = v
	}

	// The listing: the command line as a shell would run it, the header
	// variables set in front of it, their values masked.
	var shown []string
	for _, kv := range vars {
		shown = append(shown, kv[0]+"="+shellJoin([]string{showHeaderValue(kv[1])}))
	}
	shown = append(shown, shellJoin([]string{weir}))
	for k := 0; k < len(argv); k++ {
		switch a := argv[k]; {
		case a == "--upstream" && k+1 < len(argv):
			shown = append(shown, a, shellJoin([]string{showURL(argv[k+1])}))
			k++
		case a == "--header" && k+1 < len(argv):
			name, v, _ := strings.Cut(argv[k+1], ": ")
			if !headerVarRE.MatchString(v) {
				v = showHeaderValue(v)
			}
			shown = append(shown, a, shellJoin([]string{name + ": " + v}))
			k++
		default:
			shown = append(shown, shellJoin([]string{a}))
		}
	}
	detail := strings.Join(shown, " ")
	if len(headers) == 0 {
		detail += " (it sends no headers: a sign-in the client did itself, with OAuth, does not carry over; if the server needs one, give weir run " + tokenAdvice(c.Location) + ")"
	}
	return remotePlan{edits: edits, server: w, detail: detail}, ""
}

// remoteStep returns one level of indentation as a remote entry uses it,
// from its own bytes only: the rewrite of another entry on the line where
// this one opens must not change how this one is rewritten.
func (c *Config) remoteStep(def *node, keyIndent string) string {
	if st, ok := c.closingStep(def, keyIndent); ok {
		return st
	}
	return defaultStep(keyIndent)
}

// remoteExact says why the members a remote rewrite touches cannot be
// edited exactly, or "". JSON spans are always exact; in YAML every scalar
// involved must be one whose span is known.
func (c *Config) remoteExact(def *node, e entry, first, moved, pred *member) string {
	if c.syntax != syntaxYAML {
		return ""
	}
	bad := "the entry is written in a YAML style Weir does not rewrite (multi-line or block scalars, anchors, aliases or tags); edit it by hand"
	if def.problem != "" {
		return bad
	}
	for _, m := range []*member{first, moved, e.typ} {
		if m != nil && (m.keyEnd <= m.keyStart || !exactYAML(m.val)) {
			return bad
		}
	}
	if pred != nil && !exactYAML(pred.val) {
		return bad
	}
	if e.env != nil && (e.env.val.problem != "" || e.env.val.kind != kObject) {
		return bad
	}
	return ""
}

// exactYAML reports whether a YAML value's span, and that of everything in
// it, is known exactly.
func exactYAML(n *node) bool {
	if n.problem != "" {
		return false
	}
	switch n.kind {
	case kObject:
		for _, m := range n.members {
			if m.keyEnd <= m.keyStart || !exactYAML(m.val) {
				return false
			}
		}
		return len(n.members) > 0 || n.flow
	case kArray:
		for _, el := range n.elems {
			if !exactYAML(el) {
				return false
			}
		}
		return len(n.elems) > 0 || n.flow
	}
	return n.editable
}

// remoteUnwrapEdits computes the edits that give the remote entry i, which
// runs `weir run --upstream`, back its original members, from the record
// in its env. It checks them by wrapping the result again, which must give
// exactly the current bytes, and returns the entry as it then reads.
func (c *Config) remoteUnwrapEdits(i int) ([]edit, Server, string) {
	s, e := c.Servers[i], c.entries[i]
	changed := "it changed since weir wrap rewrote it, so Weir cannot give it back its original URL and headers exactly; restore the file's backup, or put them back by hand (they are its --upstream, --header and --header-env arguments; a header value weir wrap moved into its env is the variable the --header or --header-env names)"
	def, env := e.def, e.env
	var st stash
	ok := def != nil && e.cmd != nil && env != nil && env.val.kind == kObject && len(env.val.members) > 0 && env.val.members[0].key == stashKey
	if ok {
		st, ok = decodeStash(env.val.members[0].val.str)
	}
	if !ok {
		return nil, Server{}, "its env holds no " + stashKey + " record of the original entry (weir wrap did not write this one, or the record was removed), so Weir cannot give it back its URL and headers exactly; put them back by hand (they are its --upstream, --header and --header-env arguments; a header value weir wrap moved into its env is the variable the --header or --header-env names)"
	}
	// The members the rewrite wrote, in order: command, args (not in
	// opencode) and env (unless the entry had one).
	last := e.cmd
	if e.form == formSplit {
		if e.args == nil || e.args.keyStart < e.cmd.keyStart {
			return nil, Server{}, changed
		}
		last = e.args
	}
	if !st.Env {
		if env.keyStart < last.keyStart {
			return nil, Server{}, changed
		}
		last = env
	}
	start, end := e.cmd.keyStart, last.val.end
	for _, m := range def.members {
		mm := &m
		if m.keyStart >= start && m.keyStart < end && !sameMember(mm, e.cmd) && !sameMember(mm, e.args) && !sameMember(mm, env) {
			return nil, Server{}, changed
		}
	}
	raw := c.raw
	first := st.First
	var edits []edit
	if st.Moved != "" {
		if st.After == "" {
			first += st.Moved
		} else {
			m := def.member(st.After)
			if m == nil {
				return nil, Server{}, changed
			}
			edits = append(edits, edit{m.val.end, m.val.end, st.Moved})
		}
	}
	edits = append(edits, edit{start, end, first})
	if st.TypeKey != "" {
		m := def.member(st.TypeKey)
		if m == nil {
			return nil, Server{}, changed
		}
		edits = append(edits, edit{m.val.start, m.val.end, st.Type})
	}
	if st.Env {
		// The record and the header variables after it go; the
		// variables the entry had stay.
		ms := env.val.members
		n := 1 + st.Headers
		if len(ms) < n {
			return nil, Server{}, changed
		}
		to := ms[n-1].val.end
		if len(ms) > n {
			to = ms[n].keyStart
		}
		edits = append(edits, edit{ms[0].keyStart, to, ""})
	}

	// Check: wrapping the result again gives exactly these bytes.
	u, err := splice(raw, edits)
	if err != nil {
		return nil, Server{}, changed
	}
	cu, err := Parse(c.Location, u)
	if err != nil || len(cu.Servers) != len(c.Servers) || cu.Servers[i].Path != s.Path || cu.Servers[i].Transport != TransportHTTP {
		return nil, Server{}, changed
	}
	_, policy := s.RunFlags()
	plan, why := cu.remoteEdits(i, s.Command, policy, st.V)
	if why != "" {
		return nil, Server{}, changed
	}
	if again, err := splice(u, plan.edits); err != nil || !bytes.Equal(again, raw) {
		return nil, Server{}, changed
	}
	return edits, cu.Servers[i], ""
}

// wrapRemote is remoteEdits with Wrap's own check: the rewritten entry must
// unwrap to exactly the original bytes.
func (c *Config) wrapRemote(i int, weir, policy string) (remotePlan, string) {
	version := stashEnv
	if !headerVars(c.Location) {
		version = stashEnvFlag
	}
	plan, why := c.remoteEdits(i, weir, policy, version)
	if why != "" {
		return remotePlan{}, why
	}
	w, err := splice(c.raw, plan.edits)
	if err != nil {
		return remotePlan{}, "Weir could not rewrite this entry safely (" + err.Error() + "); edit it by hand"
	}
	cw, err := Parse(c.Location, w)
	if err != nil || len(cw.Servers) != len(c.Servers) || cw.Servers[i].Path != c.Servers[i].Path {
		return remotePlan{}, "Weir could not rewrite this entry safely (the result would not read back); edit it by hand"
	}
	edits, orig, why := cw.remoteUnwrapEdits(i)
	if why != "" {
		return remotePlan{}, "Weir could not rewrite this entry reversibly; edit it by hand"
	}
	if u, err := splice(w, edits); err != nil || !bytes.Equal(u, c.raw) || differ(normal(orig), normal(c.Servers[i])) != "" {
		return remotePlan{}, "Weir could not rewrite this entry reversibly; edit it by hand"
	}
	return plan, ""
}

// remoteDetail describes a remote entry for a Change.
func remoteDetail(s Server) string {
	d := "remote server " + showURL(s.URL)
	if len(s.Headers) > 0 {
		names := make([]string, 0, len(s.Headers))
		for k := range s.Headers {
			names = append(names, k)
		}
		sort.Strings(names)
		d += " (headers " + strings.Join(names, ", ") + ")"
	}
	return d
}

// sameMember reports whether a and b are the same member of a node.
func sameMember(a, b *member) bool {
	return a != nil && b != nil && a.keyStart == b.keyStart
}

// pathOf is the path of a URL ("" when it does not parse).
func pathOf(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	return p.Path
}

// showURL is a URL for people to read: its query, which can hold a key, is
// left out.
func showURL(u string) string {
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		return u[:i] + "?…"
	}
	return u
}

// showHeaderValue is a header value for people to read: shown when it is
// only plain variable references (shownRefRE, after a well-known auth
// scheme such as Bearer), masked otherwise. Any other first word could be
// (part of) the credential itself, and so could a reference's default.
func showHeaderValue(v string) string {
	t := strings.TrimSpace(v)
	scheme, rest, spaced := strings.Cut(t, " ")
	if !spaced || !authSchemes[strings.ToLower(scheme)] {
		scheme, rest = "", t
	}
	switch {
	case rest != "" && strings.TrimSpace(shownRefRE.ReplaceAllString(rest, "")) == "":
		return v
	case scheme != "":
		return scheme + " ***"
	}
	return "***"
}

// authSchemes are the HTTP authentication schemes (lower case) the
// listing shows in front of a masked credential.
var authSchemes = map[string]bool{
	"basic": true, "bearer": true, "digest": true, "dpop": true, "negotiate": true, "ntlm": true,
	"oauth": true, "token": true, "apikey": true, "api-key": true, "key": true,
}

// splice applies edits to raw, without checking what the result reads as.
func splice(raw []byte, edits []edit) ([]byte, error) {
	es := append([]edit(nil), edits...)
	sort.SliceStable(es, func(i, j int) bool { return es[i].start < es[j].start })
	var b bytes.Buffer
	b.Grow(len(raw) + 256*len(es))
	last := 0
	for _, e := range es {
		if e.start < last || e.end < e.start || e.end > len(raw) {
			return nil, fmt.Errorf("internal error: overlapping edits at byte %d", e.start)
		}
		b.Write(raw[last:e.start])
		b.WriteString(e.text)
		last = e.end
	}
	b.Write(raw[last:])
	return b.Bytes(), nil
}
