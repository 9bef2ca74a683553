package clients

import (
	"bytes"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// This file checks Wrap and Unwrap on random configurations written in
// random layouts: indentation, inline or multi-line objects and arrays,
// comments anywhere whitespace may go, trailing commas, CRLF, a byte order
// mark, escaped strings, keys in any order, unrelated settings around the
// servers, entries already wrapped, HTTP entries and names Weir refuses.

// jv is a JSON value to be written: jobj, jarr, jstr or jlit.
type jv any

type jkv struct {
	key string
	val jv
}
type (
	jobj []jkv
	jarr []jv
	jstr string // decoded value
	jlit string // number, true, false, null
)

// layout is the random formatting of one file.
type layout struct {
	t        *rapid.T
	eol      string
	indent   string
	colon    string
	comments bool
	trailing bool
	escapes  bool
}

func drawLayout(t *rapid.T) *layout {
	return &layout{
		t:        t,
		eol:      rapid.SampledFrom([]string{"\n", "\r\n"}).Draw(t, "eol"),
		indent:   rapid.SampledFrom([]string{"  ", "    ", "\t", " "}).Draw(t, "indent"),
		colon:    rapid.SampledFrom([]string{": ", ":", " : "}).Draw(t, "colon"),
		comments: rapid.Bool().Draw(t, "comments"),
		trailing: rapid.Bool().Draw(t, "trailing"),
		escapes:  rapid.Bool().Draw(t, "escapes"),
	}
}

// space writes optional whitespace and, sometimes, a comment.
func (l *layout) space(b *strings.Builder, nl bool, depth int) {
	if l.comments && rapid.IntRange(0, 9).Draw(l.t, "comment") == 0 {
		if rapid.Bool().Draw(l.t, "line comment") {
			b.WriteString(" // note" + l.eol + strings.Repeat(l.indent, depth))
			return
		}
		b.WriteString("/* c */ ")
	}
	if nl {
		b.WriteString(l.eol + strings.Repeat(l.indent, depth))
	}
}

func (l *layout) str(s string) string {
	if !l.escapes {
		return quoteJSON(s)
	}
	// Escape some characters that need no escaping, as some editors do.
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '/':
			b.WriteString(`\/`)
		case r > 0x7e || r < 0x20:
			if r > 0xffff {
				b.WriteRune(r)
			} else {
				fmt.Fprintf(&b, `\u%04X`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func (l *layout) write(b *strings.Builder, v jv, depth int) {
	switch v := v.(type) {
	case jstr:
		b.WriteString(l.str(string(v)))
	case jlit:
		b.WriteString(string(v))
	case jobj:
		multi := len(v) > 0 && rapid.IntRange(0, 3).Draw(l.t, "multi") > 0
		b.WriteByte('{')
		for i, m := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			l.space(b, multi, depth+1)
			if !multi && i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(l.str(m.key))
			b.WriteString(l.colon)
			l.write(b, m.val, depth+1)
		}
		if len(v) > 0 && l.trailing && rapid.Bool().Draw(l.t, "trailing comma") {
			b.WriteByte(',')
		}
		l.space(b, multi, depth)
		b.WriteByte('}')
	case jarr:
		multi := len(v) > 0 && rapid.IntRange(0, 2).Draw(l.t, "multi") == 0
		pad := !multi && rapid.IntRange(0, 3).Draw(l.t, "pad") == 0
		b.WriteByte('[')
		if pad {
			b.WriteByte(' ')
		}
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
				if !multi {
					b.WriteString(rapid.SampledFrom([]string{" ", "", "  "}).Draw(l.t, "sep"))
				}
			}
			l.space(b, multi, depth+1)
			l.write(b, e, depth+1)
		}
		if len(v) > 0 && l.trailing && rapid.Bool().Draw(l.t, "trailing comma") {
			b.WriteByte(',')
		}
		if pad {
			b.WriteByte(' ')
		}
		l.space(b, multi, depth)
		b.WriteByte(']')
	}
}

var (
	genText = rapid.SampledFrom([]string{
		"npx", "uvx", "node", "/usr/local/bin/server", `C:\Program Files\nodejs\npx.cmd`, `D:\tools\my server.exe`,
		"-y", "@modelcontextprotocol/server-filesystem", "/home/ada/notes", "--port=8080", "", "ünïcödé", "say \"hi\"",
		"tab\there", "a/b\\c", "${workspaceFolder}", "~/notes", "--", "run", "weir", "😀",
	})
	genName = rapid.SampledFrom([]string{"notes", "web", "mail", "a", "server-filesystem", "x.y_z", "db2",
		"bad name", "github:work", "team/x", "ü", "1"})
)

// drawStdio returns a random stdio entry (split form) and whether it is
// already wrapped.
func drawStdio(t *rapid.T, name string, opencode bool) jobj {
	cmd := genText.Draw(t, "command")
	args := rapid.SliceOfN(genText, 0, 4).Draw(t, "args")
	if rapid.IntRange(0, 5).Draw(t, "prewrapped") == 0 {
		args = append([]string{"run", "--name", name, "--", cmd}, args...)
		cmd = rapid.SampledFrom([]string{"weir", "/usr/local/bin/weir", `C:\weir\weir.exe`}).Draw(t, "weir")
	}
	var members []jkv
	if opencode {
		all := jarr{jstr(cmd)}
		for _, a := range args {
			all = append(all, jstr(a))
		}
		members = append(members, jkv{"type", jstr("local")}, jkv{"command", all})
		if rapid.Bool().Draw(t, "environment") {
			members = append(members, jkv{"environment", jobj{{"A", jstr("1")}}})
		}
	} else {
		members = append(members, jkv{"command", jstr(cmd)})
		argsAbsent := len(args) == 0 && rapid.Bool().Draw(t, "args absent")
		if !argsAbsent {
			arr := jarr{}
			for _, a := range args {
				arr = append(arr, jstr(a))
			}
			members = append(members, jkv{"args", arr})
		}
		if rapid.Bool().Draw(t, "env") {
			members = append(members, jkv{"env", jobj{{"TOKEN", jstr("x")}, {"PATH", jstr(`C:\bin`)}}})
		}
		if rapid.Bool().Draw(t, "cwd") {
			members = append(members, jkv{"cwd", jstr("/tmp")})
		}
		if rapid.Bool().Draw(t, "type") {
			members = append(members, jkv{"type", jstr("stdio")})
		}
	}
	if rapid.Bool().Draw(t, "extra") {
		members = append(members, jkv{"disabled", jlit(rapid.SampledFrom([]string{"true", "false"}).Draw(t, "disabled"))})
	}
	// Keys in any order.
	perm := rapid.Permutation(members).Draw(t, "order")
	return jobj(perm)
}

var (
	genURL = rapid.SampledFrom([]string{"https://example.com/mcp", "https://example.com/mcp?a=1&b=2", "http://127.0.0.1:8080/mcp/",
		"https://example.com/sse", "ftp://example.com/mcp", "https://u:p@example.com/mcp", "https://${HOST}/mcp"})
	genHeaderName  = rapid.SampledFrom([]string{"Authorization", "X-Api-Key", "x-team", "Accept", "Bad Name", "ü"})
	genHeaderValue = rapid.SampledFrom([]string{"Bearer x", "Bearer ${TOKEN}", "tab\there", "say \"hi\"", "ünï/😀", "", "${A}${B}", "{env:T}", "${input:key}", "line\nbreak"})
)

// drawRemote returns a random remote entry: a URL under any of the keys
// clients spell it with, a type or none, headers or none, an env, members
// Weir keeps and members it refuses to drop, in any order; sometimes one
// already behind weir run --upstream.
func drawRemote(t *rapid.T, name, format string) jobj {
	u := genURL.Draw(t, "url")
	if rapid.IntRange(0, 7).Draw(t, "prewrapped remote") == 0 {
		args := []string{"run", "--name", name, "--upstream", u}
		if format == FormatOpencode {
			all := jarr{jstr("weir")}
			for _, a := range args {
				all = append(all, jstr(a))
			}
			return jobj{{"type", jstr("local")}, {"command", all}}
		}
		arr := jarr{}
		for _, a := range args {
			arr = append(arr, jstr(a))
		}
		return jobj{{"command", jstr("weir")}, {"args", arr}}
	}
	var members []jkv
	envKey := "env"
	if format == FormatOpencode {
		envKey = "environment"
		members = append(members, jkv{"type", jstr("remote")}, jkv{"url", jstr(u)})
	} else {
		key := "url"
		if format == FormatMCPServers || format == FormatClaudeCode {
			key = rapid.SampledFrom([]string{"url", "serverUrl", "httpUrl"}).Draw(t, "url key")
		}
		members = append(members, jkv{key, jstr(u)})
		if rapid.Bool().Draw(t, "typed") {
			members = append(members, jkv{"type", jstr(rapid.SampledFrom([]string{"http", "streamable-http", "streamableHttp", "sse"}).Draw(t, "type"))})
		}
	}
	switch rapid.IntRange(0, 3).Draw(t, "headers") {
	case 0:
	case 1:
		members = append(members, jkv{"headers", jobj{}})
	default:
		var h jobj
		seen := map[string]bool{}
		for _, n := range rapid.SliceOfN(genHeaderName, 1, 3).Draw(t, "header names") {
			if !seen[strings.ToLower(n)] {
				seen[strings.ToLower(n)] = true
				h = append(h, jkv{n, jstr(genHeaderValue.Draw(t, "header value"))})
			}
		}
		members = append(members, jkv{"headers", h})
	}
	switch rapid.IntRange(0, 3).Draw(t, "remote env") {
	case 0:
		members = append(members, jkv{envKey, jobj{}})
	case 1:
		members = append(members, jkv{envKey, jobj{{"A", jstr("1")}, {"B", jstr("2")}}})
	}
	if rapid.Bool().Draw(t, "kept member") {
		k := rapid.SampledFrom([]string{"disabled", "enabled", "timeout"}).Draw(t, "kept")
		v := jlit("true")
		if k == "timeout" {
			v = jlit("30")
		}
		members = append(members, jkv{k, v})
	}
	if rapid.IntRange(0, 7).Draw(t, "sign-in member") == 0 {
		members = append(members, jkv{"oauth", jobj{{"clientId", jstr("x")}}})
	}
	return jobj(rapid.Permutation(members).Draw(t, "remote order"))
}

func drawServers(t *rapid.T, format string) jobj {
	n := rapid.IntRange(0, 5).Draw(t, "servers")
	used := map[string]bool{}
	var servers jobj
	for i := 0; i < n; i++ {
		name := genName.Draw(t, "name")
		if used[name] {
			continue
		}
		used[name] = true
		var e jobj
		switch {
		case rapid.IntRange(0, 3).Draw(t, "http") == 0:
			e = drawRemote(t, name, format)
		case format == FormatZed && rapid.Bool().Draw(t, "zed legacy"):
			inner := drawStdio(t, name, false)
			for i := range inner {
				if inner[i].key == "command" {
					inner[i].key = "path"
				}
			}
			e = jobj{{"command", inner}, {"settings", jobj{}}}
		default:
			e = drawStdio(t, name, format == FormatOpencode)
		}
		servers = append(servers, jkv{name, e})
	}
	return servers
}

// drawConfig returns a random configuration file and its format.
func drawConfig(t *rapid.T) (Location, []byte) {
	format := rapid.SampledFrom([]string{FormatMCPServers, FormatClaudeCode, FormatVSCode, FormatVSCodeSettings, FormatZed, FormatOpencode}).Draw(t, "format")
	key := map[string]string{FormatMCPServers: "mcpServers", FormatClaudeCode: "mcpServers", FormatVSCode: "servers",
		FormatVSCodeSettings: "mcp", FormatZed: "context_servers", FormatOpencode: "mcp"}[format]
	servers := drawServers(t, format)
	var root jobj
	if rapid.Bool().Draw(t, "before") {
		root = append(root, jkv{"theme", jstr("dark")}, jkv{"fontSize", jlit("14")})
	}
	if format == FormatVSCodeSettings {
		root = append(root, jkv{"mcp", jobj{{"servers", servers}}})
	} else {
		root = append(root, jkv{key, servers})
	}
	if format == FormatClaudeCode {
		root = append(root, jkv{"projects", jobj{
			{"/home/ada/src/weir", jobj{{"allowedTools", jarr{}}, {"mcpServers", drawServers(t, format)}}},
			{`C:\src\other`, jobj{{"mcpServers", drawServers(t, format)}}},
		}})
	}
	if rapid.Bool().Draw(t, "after") {
		root = append(root, jkv{"list", jarr{jlit("1"), jlit("null"), jstr("x")}})
	}
	l := drawLayout(t)
	var b strings.Builder
	if rapid.IntRange(0, 4).Draw(t, "bom") == 0 {
		b.WriteString("\ufeff")
	}
	if l.comments && rapid.Bool().Draw(t, "header") {
		b.WriteString("// settings" + l.eol)
	}
	l.write(&b, root, 0)
	if rapid.Bool().Draw(t, "final eol") {
		b.WriteString(l.eol)
	}
	return Location{Client: Unknown, Path: "config.json", Format: format}, []byte(b.String())
}

func TestWrapProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		loc, x := drawConfig(t)
		checkWrapProperties(t, loc, x)
	})
}

type fatalfer interface {
	Fatalf(format string, args ...any)
}

// checkWrapProperties checks, for one file x:
//   - Wrap succeeds and its output parses;
//   - wrapping the output again changes nothing;
//   - Unwrap(Wrap(x)) == Unwrap(x), and == x when x holds no wrapped entry;
//   - outside the command and args of each entry, Wrap changed no byte;
//   - each wrapped entry runs the original command line behind weir run,
//     with its env and cwd unchanged, and keeps the original command's exact
//     spelling and the original args' bytes.
func checkWrapProperties(t fatalfer, loc Location, x []byte) {
	c, err := Parse(loc, x)
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, x)
	}
	opts := WrapOptions{}
	w, changes, err := Wrap(c, opts)
	if err != nil {
		t.Fatalf("Wrap: %v\n%s", err, x)
	}
	for _, ch := range changes {
		if strings.Contains(ch.Detail, "could not rewrite this entry safely") {
			t.Fatalf("Wrap failed its own check: %s\n%s", ch.Detail, x)
		}
	}
	cw, err := Parse(loc, w)
	if err != nil {
		t.Fatalf("Parse(Wrap(x)): %v\n%s", err, w)
	}
	w2, _, err := Wrap(cw, opts)
	if err != nil || !bytes.Equal(w2, w) {
		t.Fatalf("Wrap is not idempotent (%v):\n%s\n---\n%s", err, w, w2)
	}
	u, _, err := Unwrap(cw)
	if err != nil {
		t.Fatalf("Unwrap(Wrap(x)): %v\n%s", err, w)
	}
	ux, _, err := Unwrap(c)
	if err != nil {
		t.Fatalf("Unwrap(x): %v\n%s", err, x)
	}
	if !bytes.Equal(u, ux) {
		t.Fatalf("Unwrap(Wrap(x)) != Unwrap(x):\n%s\n---\n%s\n--- x:\n%s", u, ux, x)
	}
	if !anyWrapped(c) && !bytes.Equal(u, x) {
		t.Fatalf("Unwrap(Wrap(x)) != x:\n%s\n--- x:\n%s", u, x)
	}
	if mx, mw := masked(c), masked(cw); mx != mw {
		t.Fatalf("bytes outside command and args changed:\n%q\n%q", mx, mw)
	}
	for i, ch := range changes {
		before, after := c.Servers[i], cw.Servers[i]
		if ch.Action != ActionWrapped {
			if !reflect.DeepEqual(normal(before), normal(after)) {
				t.Fatalf("%s (%s) changed: %+v -> %+v", before.Name, ch.Action, before, after)
			}
			continue
		}
		if before.Transport == TransportHTTP {
			// A remote entry: weir run --upstream its URL with its headers,
			// in the file's order, each value but a blank one in a header
			// variable of env (trimmed, as weir run sends it), none in args
			// (Claude Code: named by --header-env; see headerVars); env,
			// name and the rest as they were.
			var headers []string
			vars := map[string]bool{}
			if h := c.entries[i].hdrs; h != nil {
				for _, m := range h.val.members {
					v := strings.Trim(m.val.str, " \t")
					if v == "" {
						v = m.val.str
					}
					headers = append(headers, m.key+": "+v)
				}
			}
			r, _ := parseRunLine(after.Args)
			for k, h := range r.headers {
				_, v, _ := strings.Cut(h, ": ")
				if headerVarRE.MatchString(v) && headerVars(loc) {
					vars[v[2:len(v)-1]] = true
				} else if strings.TrimSpace(v) != "" {
					t.Fatalf("%s: header %d in args: %q", before.Name, k, h)
				}
			}
			for k, h := range r.headerEnv {
				_, v, _ := strings.Cut(h, "=")
				if headerVars(loc) || !strings.HasPrefix(v, headerVarPrefix) {
					t.Fatalf("%s: --header-env %d: %q", before.Name, k, h)
				}
				vars[v] = true
			}
			u, hs, ok := after.Upstream()
			env := map[string]string{}
			for k, v := range after.Env {
				if k != stashKey && !vars[k] {
					env[k] = v
				}
			}
			if len(before.Env) == 0 && len(env) == 0 {
				env = before.Env
			}
			if !ok || u != before.URL || !reflect.DeepEqual(hs, headers) || !reflect.DeepEqual(env, before.Env) ||
				after.Name != before.Name || after.Disabled != before.Disabled || after.Transport != TransportStdio {
				t.Fatalf("%s: remote entry wrapped as %+v from %+v", before.Name, after, before)
			}
			continue
		}
		cmd, args, ok := after.Inner()
		if !ok || cmd != before.Command || !reflect.DeepEqual(normal(Server{Args: args}).Args, normal(before).Args) ||
			!reflect.DeepEqual(after.Env, before.Env) || after.Cwd != before.Cwd || after.Name != before.Name {
			t.Fatalf("%s: wrapped as %+v from %+v", before.Name, after, before)
		}
		// The original command's literal moved into the arguments, and the
		// original arguments' bytes follow it.
		e, ew := c.entries[i], cw.entries[i]
		list := ew.cmd.val
		if ew.form == formSplit {
			list = ew.args.val
		}
		k, _, _, _ := parseRun(stringsOf(list)[map[bool]int{true: 1, false: 0}[ew.form == formArray]:])
		if ew.form == formArray {
			k++
		}
		el := list.elems[k]
		if ew.form == formSplit && string(cw.raw[el.start:el.end]) != string(c.raw[e.cmd.val.start:e.cmd.val.end]) {
			t.Fatalf("%s: command literal %s became %s", before.Name, c.raw[e.cmd.val.start:e.cmd.val.end], cw.raw[el.start:el.end])
		}
		if e.form == formSplit && e.args != nil && len(e.args.val.elems) > 0 {
			orig := string(c.raw[e.args.val.elems[0].start:e.args.val.end])
			if !strings.HasSuffix(string(cw.raw[:ew.args.val.end]), orig) {
				t.Fatalf("%s: original args %q not kept in %q", before.Name, orig, cw.raw[ew.args.val.start:ew.args.val.end])
			}
		}
	}
}

// masked returns the file with the command and args members of every
// stdio entry cut out (each leaves a marker), and what a remote rewrite
// changes cut out without a trace: in a remote entry its type value, URL
// and headers members (the one after the other with the separator before
// it) and its env value; in one behind weir run --upstream its type value,
// the command, args and env members the rewrite wrote, or the value of the
// env it had.
func masked(c *Config) string {
	type span struct {
		start, end int
		mark       bool
	}
	var spans []span
	for i, e := range c.entries {
		_, _, behind := c.Servers[i].Upstream()
		if e.typ != nil && (c.Servers[i].Transport == TransportHTTP || behind) {
			spans = append(spans, span{e.typ.val.start, e.typ.val.end, false})
		}
		if c.Servers[i].Transport == TransportHTTP && e.url != nil {
			first, moved := e.url, e.hdrs
			if moved != nil && moved.keyStart < first.keyStart {
				first, moved = moved, first
			}
			spans = append(spans, span{first.keyStart, first.val.end, false})
			if moved != nil {
				for k := range e.def.members {
					if e.def.members[k].keyStart == moved.keyStart {
						spans = append(spans, span{e.def.members[k-1].val.end, moved.val.end, false})
					}
				}
			}
			if e.env != nil {
				spans = append(spans, span{e.env.val.start, e.env.val.end, false})
			}
			continue
		}
		if behind && e.env != nil && len(e.env.val.members) > 0 {
			if st, ok := decodeStash(e.env.val.members[0].val.str); ok {
				end := e.cmd.val.end
				if e.args != nil {
					end = e.args.val.end
				}
				if st.Env {
					spans = append(spans, span{e.env.val.start, e.env.val.end, false})
				} else {
					end = e.env.val.end
				}
				spans = append(spans, span{e.cmd.keyStart, end, false})
				continue
			}
		}
		switch e.form {
		case formArray:
			spans = append(spans, span{e.cmd.val.start, e.cmd.val.end, true})
		case formSplit:
			s := span{e.cmd.keyStart, e.cmd.val.end, true}
			if e.args != nil && e.args.keyStart < s.start {
				s.start = e.args.keyStart
			}
			if e.args != nil && e.args.val.end > s.end {
				s.end = e.args.val.end
			}
			spans = append(spans, s)
		}
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
	var b strings.Builder
	last := 0
	for _, s := range spans {
		if s.start < last {
			continue
		}
		b.Write(c.raw[last:s.start])
		if s.mark {
			b.WriteString("\x00")
		}
		last = s.end
	}
	b.Write(c.raw[last:])
	return b.String()
}

// YAML: random Goose and Continue files.

func drawYAMLScalar(t *rapid.T, s string, flow bool) string {
	style := rapid.IntRange(0, 2).Draw(t, "yaml style")
	switch {
	case style == 1:
		return "'" + strings.ReplaceAll(s, "'", "''") + "'"
	case style == 2 || quoteYAML(s) != s || (flow && strings.ContainsAny(s, ",[]{}")):
		return quoteJSON(s)
	}
	return s
}

func drawYAMLConfig(t *rapid.T) (Location, []byte) {
	goose := rapid.Bool().Draw(t, "goose")
	eol := rapid.SampledFrom([]string{"\n", "\r\n"}).Draw(t, "eol")
	step := rapid.SampledFrom([]string{"  ", "    "}).Draw(t, "indent")
	var b strings.Builder
	b.WriteString("# config" + eol + "version: 1" + eol)
	n := rapid.IntRange(0, 4).Draw(t, "servers")
	if goose {
		b.WriteString("extensions:" + eol)
	} else {
		b.WriteString("mcpServers:" + eol)
	}
	used := map[string]bool{}
	for i := 0; i < n; i++ {
		name := genName.Draw(t, "name")
		if used[name] || strings.ContainsAny(name, ":#") {
			continue
		}
		used[name] = true
		cmd := genText.Draw(t, "command")
		args := rapid.SliceOfN(genText, 0, 3).Draw(t, "args")
		if rapid.IntRange(0, 5).Draw(t, "prewrapped") == 0 {
			args = append([]string{"run", "--name", name, "--", cmd}, args...)
			cmd = "weir"
		}
		var ind string
		var lines []string
		if rapid.IntRange(0, 3).Draw(t, "remote") == 0 {
			// A remote entry: type, URL, headers (block or flow), an env,
			// a kept member, in any order, comments after values.
			if goose {
				b.WriteString(step + drawYAMLScalar(t, name, false) + ":" + eol)
				ind = step + step
				lines = append(lines, "type: streamable_http", "uri: "+drawYAMLScalar(t, genURL.Draw(t, "url"), false), "name: "+drawYAMLScalar(t, name, false))
			} else {
				b.WriteString(step + "- name: " + drawYAMLScalar(t, name, false) + eol)
				ind = step + "  "
				lines = append(lines, "type: streamable-http", "url: "+drawYAMLScalar(t, genURL.Draw(t, "url"), false))
			}
			switch rapid.IntRange(0, 2).Draw(t, "yaml headers") {
			case 1:
				lines = append(lines, "headers: {Authorization: "+drawYAMLScalar(t, genHeaderValue.Draw(t, "header value"), true)+"}")
			case 2:
				l := "headers:"
				for _, h := range rapid.SliceOfNDistinct(genHeaderName, 1, 2, strings.ToLower).Draw(t, "header names") {
					l += eol + ind + "  " + drawYAMLScalar(t, h, false) + ": " + drawYAMLScalar(t, genHeaderValue.Draw(t, "header value"), false)
				}
				lines = append(lines, l)
			}
			k := "env"
			if goose {
				k = "envs"
			}
			switch rapid.IntRange(0, 2).Draw(t, "yaml env") {
			case 1:
				lines = append(lines, k+": {}")
			case 2:
				lines = append(lines, k+":"+eol+ind+"  A: '1'")
			}
			if rapid.Bool().Draw(t, "yaml kept") {
				lines = append(lines, "timeout: 300")
			}
			if rapid.Bool().Draw(t, "comment") {
				lines[0] += "  # first"
			}
			for _, l := range rapid.Permutation(lines).Draw(t, "order") {
				b.WriteString(ind + l + eol)
			}
			continue
		}
		if goose {
			b.WriteString(step + drawYAMLScalar(t, name, false) + ":" + eol)
			ind = step + step
			lines = append(lines, "type: stdio", "cmd: "+drawYAMLScalar(t, cmd, false))
		} else {
			b.WriteString(step + "- name: " + drawYAMLScalar(t, name, false) + eol)
			ind = step + "  "
			lines = append(lines, "command: "+drawYAMLScalar(t, cmd, false))
		}
		switch {
		case len(args) == 0 && rapid.Bool().Draw(t, "no args"):
		case len(args) == 0 || rapid.Bool().Draw(t, "flow args"):
			items := make([]string, len(args))
			for j, a := range args {
				items[j] = drawYAMLScalar(t, a, true)
			}
			lines = append(lines, "args: ["+strings.Join(items, ", ")+"]")
		default:
			dash := rapid.SampledFrom([]string{"", "  "}).Draw(t, "dash indent")
			l := "args:"
			for _, a := range args {
				l += eol + ind + dash + "- " + drawYAMLScalar(t, a, false)
			}
			lines = append(lines, l)
		}
		if rapid.Bool().Draw(t, "env") {
			k := "env"
			if goose {
				k = "envs"
			}
			lines = append(lines, k+": {A: '1'}")
		}
		if rapid.Bool().Draw(t, "comment") {
			lines[0] += "  # first"
		}
		for _, l := range rapid.Permutation(lines).Draw(t, "order") {
			b.WriteString(ind + l + eol)
		}
	}
	if len(used) == 0 {
		b.WriteString(step + map[bool]string{true: "{}", false: "[]"}[goose] + eol)
	}
	f := FormatContinueYAML
	if goose {
		f = FormatGoose
	}
	return Location{Client: Unknown, Path: "config.yaml", Format: f}, []byte(b.String())
}

func TestWrapPropertiesYAML(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		loc, x := drawYAMLConfig(t)
		checkWrapProperties(t, loc, x)
	})
}
