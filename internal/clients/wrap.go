package clients

import (
	"bytes"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"unicode"
)

// WrapOptions says how Wrap rewrites stdio entries.
type WrapOptions struct {
	// WeirPath is the command wrapped entries run; "weir" when empty (found
	// on the client's PATH). Give an absolute path for clients started
	// from a desktop session, whose PATH is often minimal.
	WeirPath string
	// Policy, when set, is passed as `--policy FILE` to every wrapped entry.
	Policy string
}

func (o WrapOptions) weir() string {
	if o.WeirPath == "" {
		return "weir"
	}
	return o.WeirPath
}

// Actions a Change reports.
const (
	ActionWrapped   = "wrapped"   // the entry now runs behind weir run (a remote one behind weir run --upstream)
	ActionUnchanged = "unchanged" // nothing to do: already wrapped (Wrap), or not wrapped (Unwrap)
	ActionRefused   = "refused"   // left as it was, running without Weir; Detail says why
	ActionUnwrapped = "unwrapped" // the entry runs (or reaches) its server directly again
)

// Change is what Wrap or Unwrap did, or declined to do, to one entry.
type Change struct {
	Server string // the entry's name
	Path   string // the entry's JSON pointer (Server.Path)
	Action string // one of the Action constants
	Detail string // the new command line (header values masked), the remote server restored, or why the entry was refused
}

// edit replaces raw[start:end] with text.
type edit struct {
	start, end int
	text       string
}

// Wrap rewrites every stdio entry of c to run behind Weir:
//
//	"command": "npx", "args": ["-y", "pkg"]
//
// becomes
//
//	"command": "weir", "args": ["run", "--name", "NAME", "--", "npx", "-y", "pkg"]
//
// Only the command value is replaced, and the new arguments are inserted in
// front of the old ones in the list's own layout, the original command with
// its exact spelling; every other byte, including comments, key order,
// indentation, line endings and a byte order mark, stays as it was. An
// entry without args gets a member right after command, in the entry's
// layout: one item per line in a multi-line entry, padded ([ "run", ... ])
// in a one-line one; an existing "args": [] is filled in unpadded
// (["run", ...]). That difference is what lets Unwrap remove exactly the
// members Wrap added. opencode's "command": [...] lists get the weir
// prefix in front. Env and cwd are kept: they now apply to weir, which
// passes them on to the server.
//
// Entries that already run behind weir run are left alone ("unchanged"), so
// wrapping twice changes nothing. HTTP and SSE entries are left alone and
// reported with the `weir serve` command that would front them. Entries whose
// name ValidName rejects, with a Problem, with "args": null, or that Weir
// cannot edit safely (YAML anchors, multi-line scalars) are left alone and
// reported as refused. The returned changes list every server in file order.
//
// Wrap checks its own work: it parses the output again and returns an error,
// not the output, if any server reads differently from what was intended.
func Wrap(c *Config, opts WrapOptions) (out []byte, changes []Change, err error) {
	weir := opts.weir()
	var pend []pending
	expect := make([]Server, len(c.Servers))
	copy(expect, c.Servers)
	for i, s := range c.Servers {
		ch := Change{Server: s.Name, Path: s.Path}
		switch {
		case s.Problem != "":
			ch.Action, ch.Detail = ActionRefused, s.Problem
		case s.Transport == TransportSSE:
			ch.Action, ch.Detail = ActionRefused, sseRefusal(s, c.Location.Format)
		case s.Transport == TransportHTTP:
			plan, why := c.wrapRemote(i, weir, opts.Policy)
			if why != "" {
				ch.Action, ch.Detail = ActionRefused, why
				break
			}
			pend = append(pend, pending{i, plan.edits})
			expect[i] = plan.server
			ch.Action, ch.Detail = ActionWrapped, plan.detail
		case s.Transport == TransportBuiltin:
			ch.Action, ch.Detail = ActionRefused, "provided by the client itself (or one of its extensions); there is no command for Weir to run"
		case s.Transport != TransportStdio:
			ch.Action, ch.Detail = ActionRefused, "not a stdio server"
		case s.Wrapped:
			ch.Action, ch.Detail = ActionUnchanged, "already runs behind weir run"
			if name, _ := s.RunFlags(); name != "" && name != s.Name {
				ch.Detail += fmt.Sprintf(" (as --name %s)", name)
			}
		default:
			if err := ValidName(s.Name); err != nil {
				ch.Action, ch.Detail = ActionRefused, err.Error()
				break
			}
			prefix := []string{"run", "--name", s.Name}
			if opts.Policy != "" {
				prefix = append(prefix, "--policy", opts.Policy)
			}
			prefix = append(prefix, "--")
			es, why := c.wrapEdits(c.entries[i], weir, prefix)
			if why != "" {
				ch.Action, ch.Detail = ActionRefused, why
				break
			}
			pend = append(pend, pending{i, es})
			args := append(append(append([]string(nil), prefix...), s.Command), s.Args...)
			expect[i].Command, expect[i].Args, expect[i].Wrapped = weir, args, true
			ch.Action, ch.Detail = ActionWrapped, shellJoin(append([]string{weir}, args...))
		}
		changes = append(changes, ch)
	}
	out, err = c.applyChecked(pend, expect, changes)
	if err != nil {
		return nil, nil, err
	}
	return out, changes, nil
}

// Unwrap restores every entry that runs behind `weir run` to run its server
// directly: the command and arguments after `weir run [flags] [--]` go back
// into the command and args values, in place, and every other byte stays as
// it was. An args member Wrap inserted (recognised by its exact layout; see
// Wrap) is removed again, so for a file Wrap produced, Unwrap(Wrap(x)) is x
// byte for byte; entries that were already wrapped in x are unwrapped too.
// Entries whose weir run arguments name no command are refused.
func Unwrap(c *Config) (out []byte, changes []Change, err error) {
	var pend []pending
	expect := make([]Server, len(c.Servers))
	copy(expect, c.Servers)
	for i, s := range c.Servers {
		ch := Change{Server: s.Name, Path: s.Path}
		if !s.Wrapped {
			ch.Action, ch.Detail = ActionUnchanged, "does not run behind weir run"
			changes = append(changes, ch)
			continue
		}
		if _, _, remote := s.Upstream(); remote {
			got, orig, why := c.remoteUnwrapEdits(i)
			if why != "" {
				ch.Action, ch.Detail = ActionRefused, why
			} else {
				pend = append(pend, pending{i, got})
				expect[i] = orig
				ch.Action, ch.Detail = ActionUnwrapped, remoteDetail(orig)
			}
			changes = append(changes, ch)
			continue
		}
		cmd, args, ok := s.Inner()
		var got []edit
		why := "the weir run arguments name no server command"
		if ok {
			got, why = c.unwrapEdits(c.entries[i])
		}
		if why != "" {
			ch.Action, ch.Detail = ActionRefused, why
		} else {
			pend = append(pend, pending{i, got})
			expect[i].Command, expect[i].Args, expect[i].Wrapped = cmd, args, isWrapped(cmd, args)
			if len(args) == 0 {
				expect[i].Args = nil
			}
			ch.Action, ch.Detail = ActionUnwrapped, shellJoin(append([]string{cmd}, args...))
		}
		changes = append(changes, ch)
	}
	out, err = c.applyChecked(pend, expect, changes)
	if err != nil {
		return nil, nil, err
	}
	return out, changes, nil
}

// pending is the edits for one server (index i).
type pending struct {
	i     int
	edits []edit
}

// applyChecked applies the edits of every pending entry and checks the
// result. Should the check fail, it finds the entries whose edits alone go
// wrong, reports them as refused (in changes) and applies the others: one
// entry Weir cannot rewrite safely does not stop the rest.
func (c *Config) applyChecked(pend []pending, expect []Server, changes []Change) ([]byte, error) {
	var all []edit
	for _, p := range pend {
		all = append(all, p.edits...)
	}
	out, err := c.apply(all, expect)
	if err == nil {
		return out, nil
	}
	all = nil
	for _, p := range pend {
		one := make([]Server, len(c.Servers))
		copy(one, c.Servers)
		one[p.i] = expect[p.i]
		if _, err := c.apply(p.edits, one); err != nil {
			changes[p.i].Action = ActionRefused
			changes[p.i].Detail = "Weir could not rewrite this entry safely (" + err.Error() + "); edit it by hand"
			expect[p.i] = c.Servers[p.i]
			continue
		}
		all = append(all, p.edits...)
	}
	return c.apply(all, expect)
}

// apply applies edits to the raw bytes and checks that the result parses to
// the expected servers.
func (c *Config) apply(edits []edit, expect []Server) ([]byte, error) {
	if len(edits) == 0 {
		return bytes.Clone(c.raw), nil
	}
	out, err := splice(c.raw, edits)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", c.Location.Path, err)
	}

	c2, err := Parse(c.Location, out)
	if err != nil {
		return nil, fmt.Errorf("%s: internal error: the rewritten file would not parse (%v); the file was not changed", c.Location.Path, err)
	}
	if len(c2.Servers) != len(expect) {
		return nil, fmt.Errorf("%s: internal error: the rewritten file would hold %d servers, not %d; the file was not changed", c.Location.Path, len(c2.Servers), len(expect))
	}
	for i := range expect {
		if d := differ(normal(expect[i]), normal(c2.Servers[i])); d != "" {
			// Name the fields only: values can be secrets (env, headers).
			return nil, fmt.Errorf("%s: internal error: server %q would read differently after the rewrite (%s); the file was not changed", c.Location.Path, expect[i].Name, d)
		}
	}
	return out, nil
}

// differ names the fields in which two servers differ.
func differ(a, b Server) string {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	var names []string
	for i := 0; i < va.NumField(); i++ {
		if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			names = append(names, va.Type().Field(i).Name)
		}
	}
	return strings.Join(names, ", ")
}

func normal(s Server) Server {
	if len(s.Args) == 0 {
		s.Args = nil
	}
	return s
}

// canEdit says why n cannot be edited in place, or "".
func (c *Config) canEdit(n *node, what string) string {
	if c.syntax == syntaxYAML && (!n.editable || n.problem != "") {
		if n.problem != "" {
			return what + " " + n.problem
		}
		return what + " is written in a YAML style Weir does not rewrite (multi-line or block scalar); edit it by hand"
	}
	return ""
}

// enc encodes a string in the file's syntax.
func (c *Config) enc(s string) string {
	if c.syntax == syntaxYAML {
		return quoteYAML(s)
	}
	return quoteJSON(s)
}

// move returns the text of scalar n for use in another place of the file:
// its raw bytes when they mean the same there, else a fresh encoding.
func (c *Config) move(n *node, intoFlow bool) string {
	raw := string(c.raw[n.start:n.end])
	if c.syntax == syntaxJSON || raw == "" {
		return raw
	}
	if raw[0] == '"' || raw[0] == '\'' {
		return raw
	}
	if intoFlow && (strings.ContainsAny(raw, ",[]{}") || strings.Contains(raw, ": ") || strings.Contains(raw, " #")) {
		return c.enc(n.str)
	}
	return raw
}

var sepRE = regexp.MustCompile(`^[ \t\r\n]*,[ \t\r\n]*$`)

// arraySep returns what goes between two elements inserted into array a, in
// the array's own layout.
func (c *Config) arraySep(a *node) (string, string) {
	raw := c.raw
	first := a.elems[0]
	if c.syntax == syntaxYAML && !a.flow {
		ls := lineStart(raw, first.start)
		prefix := string(raw[ls:first.start])
		if !blockItemRE.MatchString(prefix) || ls == 0 {
			return "", "the args list is laid out in a way Weir does not rewrite (one \"- item\" per line expected); edit it by hand"
		}
		return lineBreakBefore(raw, ls) + prefix, ""
	}
	if len(a.elems) >= 2 {
		if between := string(raw[first.end:a.elems[1].start]); sepRE.MatchString(between) {
			return between, ""
		}
	}
	ws := first.start
	for ws > a.start+1 && isSpace(raw[ws-1]) {
		ws--
	}
	if run := string(raw[ws:first.start]); strings.ContainsAny(run, "\r\n") {
		return "," + run, ""
	}
	return ", ", ""
}

var blockItemRE = regexp.MustCompile(`^ *- +$`)

// skipSpace returns the offset of the first byte at or after i that is not
// whitespace or a comment.
func (c *Config) skipSpace(i int) int {
	raw := c.raw
	for i < len(raw) {
		switch {
		case isSpace(raw[i]):
			i++
		case c.syntax == syntaxJSON && i+1 < len(raw) && raw[i] == '/' && raw[i+1] == '/':
			for i < len(raw) && raw[i] != '\n' && raw[i] != '\r' {
				i++
			}
		case c.syntax == syntaxJSON && i+1 < len(raw) && raw[i] == '/' && raw[i+1] == '*':
			end := bytes.Index(raw[i+2:], []byte("*/"))
			if end < 0 {
				return len(raw)
			}
			i += 2 + end + 2
		case c.syntax == syntaxYAML && raw[i] == '#':
			for i < len(raw) && raw[i] != '\n' && raw[i] != '\r' {
				i++
			}
		default:
			return i
		}
	}
	return i
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

// lineStart returns the offset of the start of the line holding off.
func lineStart(raw []byte, off int) int {
	for off > 0 && raw[off-1] != '\n' && raw[off-1] != '\r' {
		off--
	}
	return off
}

// lineBreakBefore returns the line break that ends just before offset ls.
func lineBreakBefore(raw []byte, ls int) string {
	if ls >= 2 && raw[ls-2] == '\r' && raw[ls-1] == '\n' {
		return "\r\n"
	}
	if ls >= 1 {
		return string(raw[ls-1 : ls])
	}
	return "\n"
}

// lineBreakAfter returns the line break that ends the line holding off, or
// the file's first line break, or "\n".
func lineBreakAfter(raw []byte, off int) string {
	for _, from := range []int{off, 0} {
		for i := from; i < len(raw); i++ {
			if raw[i] == '\n' {
				return "\n"
			}
			if raw[i] == '\r' {
				if i+1 < len(raw) && raw[i+1] == '\n' {
					return "\r\n"
				}
				return "\r"
			}
		}
	}
	return "\n"
}

// memberLayout returns the whitespace before the command key and the
// key/value separator, which an inserted args member copies.
func (c *Config) memberLayout(e entry) (lead, colon string) {
	return c.memberLayoutOf(e.obj, e.cmd)
}

// memberLayoutOf returns the whitespace before the key of member m of obj
// and its key/value separator, for members written next to it.
func (c *Config) memberLayoutOf(obj *node, m *member) (lead, colon string) {
	raw := c.raw
	k := m.keyStart
	ws := k
	for ws > 0 && isSpace(raw[ws-1]) {
		ws--
	}
	lead = string(raw[ws:k])
	colon = string(raw[m.keyEnd:m.val.start])
	if c.syntax == syntaxYAML {
		if !yamlColonRE.MatchString(colon) {
			colon = ": "
		}
		if !obj.flow {
			ls := lineStart(raw, k)
			lead = lineBreakAfter(raw, m.val.end) + strings.Repeat(" ", k-ls)
		}
		return lead, colon
	}
	if !jsonColonRE.MatchString(colon) {
		colon = ": "
	}
	if lead == "" && colon != ":" {
		lead = " " // {"command": "x"} → {"command": "weir", "args": [...]}
	}
	return lead, colon
}

var (
	jsonColonRE = regexp.MustCompile(`^[ \t]*:[ \t]*$`)
	yamlColonRE = regexp.MustCompile(`^:[ ]+$`)
	yamlLeadRE  = regexp.MustCompile(`^[ -]*$`)
)

// insertedArgs returns the text of an args member inserted right after the
// command value, holding items (encoded). Its layout tells it apart from
// an "args": [] that was in the file before, which Wrap fills in as
// ["run", ...] with the first item right after the bracket: an inserted
// array always has whitespace there. In a multi-line entry the array has
// one item per line, one indentation step deeper than the key; in a
// one-line entry it is padded: [ "run", ... ].
func (c *Config) insertedArgs(e entry, items []string) (string, string) {
	return c.insertedArgsStep(e, items, c.indentStep)
}

// insertedArgsStep is insertedArgs with the indentation step found by step.
func (c *Config) insertedArgsStep(e entry, items []string, step func(entry, string) string) (string, string) {
	lead, colon := c.memberLayout(e)
	if c.syntax == syntaxYAML {
		list := "[ " + strings.Join(items, ", ") + " ]"
		if !e.obj.flow {
			ls := lineStart(c.raw, e.cmd.keyStart)
			if !yamlLeadRE.Match(c.raw[ls:e.cmd.keyStart]) {
				return "", "the entry is laid out in a way Weir does not rewrite; edit it by hand"
			}
			return lead + "args" + colon + list, ""
		}
		return ", args" + colon + list, ""
	}
	nl := strings.LastIndexAny(lead, "\r\n")
	if nl < 0 {
		isep := ", "
		if colon == ":" {
			isep = ","
		}
		return "," + lead + `"args"` + colon + "[ " + strings.Join(items, isep) + " ]", ""
	}
	eol := "\n"
	if strings.Contains(lead, "\r\n") {
		eol = "\r\n"
	} else if !strings.Contains(lead, "\n") {
		eol = "\r"
	}
	indent := lead[nl+1:]
	inner := indent + step(e, indent)
	var b strings.Builder
	b.WriteString("," + lead + `"args"` + colon + "[")
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(eol + inner + it)
	}
	b.WriteString(eol + indent + "]")
	return b.String(), ""
}

// indentStep returns one level of indentation as the entry uses it: the
// difference between the command key's indentation and that of the line
// where the entry's object closes, when its closing brace is on a line of
// its own (bytes of the entry itself, which rewriting another entry cannot
// change), else that of the line where it opens; a tab or two spaces when
// that tells nothing.
func (c *Config) indentStep(e entry, keyIndent string) string {
	if st, ok := c.closingStep(e.obj, keyIndent); ok {
		return st
	}
	return c.openingStep(e, keyIndent)
}

// openingStep is the indentation step from the line where the entry's
// object opens (what weir wrap used before the closing line came first;
// wasInserted still recognises it).
func (c *Config) openingStep(e entry, keyIndent string) string {
	ls := lineStart(c.raw, e.obj.start)
	outer := ls
	for outer < len(c.raw) && (c.raw[outer] == ' ' || c.raw[outer] == '\t') {
		outer++
	}
	o := string(c.raw[ls:outer])
	if len(keyIndent) > len(o) && strings.HasPrefix(keyIndent, o) {
		return keyIndent[len(o):]
	}
	return defaultStep(keyIndent)
}

// closingStep is the indentation step from the line where obj closes,
// when its closing brace is alone on it.
func (c *Config) closingStep(obj *node, keyIndent string) (string, bool) {
	raw := c.raw
	end := obj.end - 1
	if end <= obj.start || end >= len(raw) || raw[end] != '}' {
		return "", false
	}
	ls := lineStart(raw, end)
	o := string(raw[ls:end])
	if ls <= obj.start || strings.Trim(o, " \t") != "" || len(keyIndent) <= len(o) || !strings.HasPrefix(keyIndent, o) {
		return "", false
	}
	return keyIndent[len(o):], true
}

func defaultStep(keyIndent string) string {
	if strings.Contains(keyIndent, "\t") {
		return "\t"
	}
	return "  "
}

// wrapEdits returns the edits that put one stdio entry behind weir run, or
// why it cannot be done.
func (c *Config) wrapEdits(e entry, weir string, prefix []string) ([]edit, string) {
	items := make([]string, len(prefix))
	for i, p := range prefix {
		items[i] = c.enc(p)
	}
	switch e.form {
	case formArray:
		a := e.cmd.val
		if why := c.canEditList(a, "command"); why != "" {
			return nil, why
		}
		sep, why := c.arraySep(a)
		if why != "" {
			return nil, why
		}
		text := c.enc(weir) + sep + strings.Join(items, sep) + sep
		return []edit{{a.elems[0].start, a.elems[0].start, text}}, ""
	case formSplit:
		cmd := e.cmd.val
		if why := c.canEdit(cmd, "the command"); why != "" {
			return nil, why
		}
		edits := []edit{{cmd.start, cmd.end, c.enc(weir)}}
		if e.args == nil || e.args.val.kind == kNull {
			intoFlow := c.syntax == syntaxYAML
			all := append(items, c.move(cmd, intoFlow))
			if e.args != nil {
				// "args": null (or YAML "args:" with nothing after it) could
				// not be told apart from "args": [] after wrapping, and Unwrap
				// must give back the bytes it was given.
				return nil, "\"args\" is null; write [] or remove it, then run weir wrap again"
			}
			text, why := c.insertedArgs(e, all)
			if why != "" {
				return nil, why
			}
			return append(edits, edit{cmd.end, cmd.end, text}), ""
		}
		a := e.args.val
		if a.kind != kArray {
			return nil, fmt.Sprintf("\"args\" is %s; want a list of strings", a.kind)
		}
		if len(a.elems) == 0 {
			if a.start >= len(c.raw) || c.raw[a.start] != '[' {
				return nil, "the args list is written in a way Weir does not rewrite; edit it by hand"
			}
			isep := ", "
			if c.syntax == syntaxJSON {
				if _, colon := c.memberLayout(e); colon == ":" {
					isep = ","
				}
			}
			all := append(items, c.move(cmd, true))
			return append(edits, edit{a.start + 1, a.start + 1, strings.Join(all, isep)}), ""
		}
		if why := c.canEditList(a, "args"); why != "" {
			return nil, why
		}
		sep, why := c.arraySep(a)
		if why != "" {
			return nil, why
		}
		intoFlow := c.syntax == syntaxYAML && a.flow
		text := strings.Join(items, sep) + sep + c.move(cmd, intoFlow) + sep
		return append(edits, edit{a.elems[0].start, a.elems[0].start, text}), ""
	}
	return nil, "the entry has no command to wrap"
}

// canEditList says why the elements of list a cannot be edited, or "".
func (c *Config) canEditList(a *node, what string) string {
	if a.kind != kArray || len(a.elems) == 0 {
		return fmt.Sprintf("%q is not a non-empty list", what)
	}
	if c.syntax == syntaxYAML && a.problem != "" {
		return what + " " + a.problem
	}
	for _, el := range a.elems {
		if el.kind != kString {
			return fmt.Sprintf("%q holds values that are not strings", what)
		}
		if why := c.canEdit(el, what); why != "" {
			return why
		}
	}
	return ""
}

// unwrapEdits returns the edits that make a wrapped entry run its server
// directly again, or why that cannot be done.
func (c *Config) unwrapEdits(e entry) ([]edit, string) {
	switch e.form {
	case formArray:
		a := e.cmd.val
		if why := c.canEditList(a, "command"); why != "" {
			return nil, why
		}
		k, _, _, ok := parseRun(stringsOf(a)[1:])
		if !ok {
			return nil, "the weir run arguments name no server command"
		}
		return []edit{{a.elems[0].start, a.elems[k+1].start, ""}}, ""
	case formSplit:
		cmd := e.cmd.val
		if why := c.canEdit(cmd, "the command"); why != "" {
			return nil, why
		}
		a := e.args.val
		if why := c.canEditList(a, "args"); why != "" {
			return nil, why
		}
		k, _, _, ok := parseRun(stringsOf(a))
		if !ok {
			return nil, "the weir run arguments name no server command"
		}
		el := a.elems[k]
		edits := []edit{{cmd.start, cmd.end, c.move(el, c.syntax == syntaxYAML && e.obj.flow)}}
		first := a.elems[0].start
		switch {
		case k+1 < len(a.elems):
			return append(edits, edit{first, a.elems[k+1].start, ""}), ""
		case c.wasInserted(e, k):
			return append(edits, edit{cmd.end, a.end, ""}), ""
		case c.syntax == syntaxJSON || a.flow:
			// Remove the items, and a trailing comma after them if any, so
			// that the list's own interior ("[ ]", "[\n]") stays.
			end := el.end
			if i := c.skipSpace(end); i < len(c.raw) && c.raw[i] == ',' {
				end = i + 1
			}
			return append(edits, edit{first, end, ""}), ""
		default: // a YAML block list left with no items becomes "args: []"
			return append(edits, edit{e.args.keyEnd, el.end, ": []"}), ""
		}
	}
	return nil, "the entry has no command to unwrap"
}

// wasInserted reports whether the args member of e, whose last element is
// the server's command at index k, is exactly what Wrap inserts when an
// entry has no args: then Unwrap removes the member instead of emptying it.
func (c *Config) wasInserted(e entry, k int) bool {
	a := e.args.val
	if e.args.keyStart < e.cmd.val.end || (c.syntax == syntaxYAML && !a.flow) {
		return false
	}
	items := make([]string, k+1)
	for i, el := range a.elems[:k+1] {
		items[i] = string(c.raw[el.start:el.end])
	}
	// The layout Wrap writes, or the one earlier versions wrote.
	for _, step := range []func(entry, string) string{c.indentStep, c.openingStep} {
		text, why := c.insertedArgsStep(e, items, step)
		if why != "" {
			return false
		}
		end := e.cmd.val.end + len(text)
		// The member must end where the text does: nothing of the list is left.
		if end <= len(c.raw) && string(c.raw[e.cmd.val.end:end]) == text && a.end == end {
			return true
		}
	}
	return false
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// ValidName reports whether name can be a Weir server name (`weir run
// --name`): 1 to 64 ASCII letters, digits, '.', '_' and '-', starting with a
// letter or digit. The name is the server half of policy patterns
// ("server:tool") and of flow sources ("server/tool"), so ':' and '/' (and
// glob wildcards, spaces and other punctuation) cannot be part of it. The
// error says what is wrong and suggests a name that would do.
func ValidName(name string) error {
	if nameRE.MatchString(name) {
		return nil
	}
	var why string
	switch {
	case name == "":
		why = "it is empty"
	case strings.Contains(name, ":"):
		why = "it contains ':', which separates server from tool in policy patterns (server:tool)"
	case strings.Contains(name, "/"):
		why = "it contains '/', which separates server from tool in flow sources (server/tool)"
	case strings.ContainsFunc(name, unicode.IsSpace):
		why = "it contains a space"
	case strings.ContainsAny(name, `*?\[]`):
		why = "it contains a wildcard or escape character of policy patterns (* ? \\ [ ])"
	case len(name) > 64:
		why = "it is longer than 64 characters"
	case !isAlnum(rune(name[0])):
		why = fmt.Sprintf("it starts with %q, not a letter or digit", []rune(name)[0])
	default:
		for _, r := range name {
			if !isAlnum(r) && r != '.' && r != '_' && r != '-' {
				why = fmt.Sprintf("it contains %q", r)
				break
			}
		}
	}
	return fmt.Errorf("server name %q cannot be used with weir run --name: %s; a name is 1 to 64 letters, digits, '.', '_' and '-', starting with a letter or digit. Rename the entry (e.g. to %q) and run weir wrap again", name, why, SuggestName(name))
}

func isAlnum(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}

// SuggestName turns any string into a valid server name: runs of other
// characters become '-', leading and trailing punctuation goes, and the
// result is cut to 64 characters ("server" when nothing is left).
func SuggestName(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range name {
		if isAlnum(r) || r == '.' || r == '_' || r == '-' {
			b.WriteRune(r)
			dash = false
		} else if !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	s := strings.Trim(b.String(), "-._")
	if len(s) > 64 {
		s = strings.TrimRight(s[:64], "-._")
	}
	if s == "" {
		return "server"
	}
	return s
}

// shellJoin renders a command line for people to read and paste into a
// POSIX shell: arguments that need it are single-quoted.
func shellJoin(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(isAlnum(r) || strings.ContainsRune("-_./:=@%+,", r))
		}) < 0 {
			out[i] = a
		} else {
			out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(out, " ")
}
