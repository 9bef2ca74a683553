package engine

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/weir-sec/weir/internal/flow"
	"github.com/weir-sec/weir/internal/policy"
)

// ToolDef is the part of an MCP tool definition that labelling reads.
type ToolDef struct {
	Name        string
	Params      []string // names of the input schema's top-level properties
	Annotations Annotations
}

// Annotations are the MCP tool annotation hints that matter for labels. A nil
// hint was not set by the server; only hints set explicitly count, because
// the specification's defaults (openWorldHint and destructiveHint true) would
// make every unannotated tool a sink and drown the signal.
type Annotations struct {
	ReadOnly    *bool
	Destructive *bool
	OpenWorld   *bool
}

// ToolLabels are a tool's labels and the reasons for each, for block
// messages, the audit log and `weir scan`.
type ToolLabels struct {
	Labels flow.Labels
	// Listed reports whether a policy tools: entry matched the tool.
	Listed bool
	Why    []string
}

// Label computes a tool's labels. Sources, strongest first: the policy's
// tools: entries; the server's annotations, which may only add labels; and,
// when no policy entry matched, the name and schema heuristic.
func Label(p *policy.Policy, server string, def ToolDef) ToolLabels {
	var out ToolLabels
	add := func(l flow.Labels, why string) {
		if l == 0 {
			return
		}
		out.Labels |= l
		out.Why = append(out.Why, fmt.Sprintf("%s: %s", l, why))
	}
	if l, entry := p.ToolLabels(server, def.Name); entry != nil {
		out.Listed = true
		if l == 0 {
			out.Why = append(out.Why, fmt.Sprintf("none: policy tools entry %q (line %d)", entry.Match.String(), entry.Line))
		}
		add(l, fmt.Sprintf("policy tools entry %q (line %d)", entry.Match.String(), entry.Line))
	}
	add(annotationLabels(def.Annotations))
	if !out.Listed {
		add(heuristicLabels(def))
	}
	return out
}

// isTrue reports an explicitly set true hint. An explicit false never
// removes a label: hints come from the server, which is not trusted.
func isTrue(b *bool) bool { return b != nil && *b }

func annotationLabels(a Annotations) (flow.Labels, string) {
	var l flow.Labels
	var why []string
	if isTrue(a.OpenWorld) && isTrue(a.ReadOnly) {
		l |= flow.Untrusted
		why = append(why, "openWorldHint with readOnlyHint")
	}
	// A destructive tool that says it stays in a closed world (a file
	// write with openWorldHint false) changes the machine, not the world:
	// the hint adds no sink, and the name heuristic still judges it. Hints
	// only ever add labels, so a server that lies here gains nothing it
	// would not by leaving them out.
	closed := a.OpenWorld != nil && !*a.OpenWorld
	if (isTrue(a.OpenWorld) || isTrue(a.Destructive) && !closed) && !isTrue(a.ReadOnly) {
		l |= flow.Sink
		if isTrue(a.OpenWorld) {
			why = append(why, "openWorldHint without readOnlyHint")
		} else {
			why = append(why, "destructiveHint without readOnlyHint")
		}
	}
	return l, "annotation " + strings.Join(why, ", ")
}

// Word lists for the heuristic. They are deliberately small: the heuristic
// labels tools no policy mentions, and a policy entry replaces it.
var (
	// readVerbs start tools that read and return data.
	readVerbs = words("read get search list query find open view show lookup look describe export download fetch browse retrieve load cat")
	// sendVerbs start tools that move data out or act externally.
	sendVerbs = words("send post create publish upload share forward reply invite transfer notify submit push pay email mail message tweet dm schedule book reserve")
	// privateNouns are the user's own data.
	privateNouns = words("file files dir directory directories folder folders note notes mail mails email emails inbox message messages db database databases table tables record records row rows document documents doc docs contact contacts calendar calendars event events secret secrets password passwords credential credentials account accounts balance balances transaction transactions payment payments customer customers user users profile profiles memory memories graph node nodes entity entities history drive sheet sheets spreadsheet spreadsheets channel channels chat chats conversation conversations iban card cards order orders invoice invoices reservation reservations")
	// outsideNouns are written by other people or the open web, so what a
	// tool reads from them can carry an attacker's text.
	outsideNouns = words("web webpage webpages page pages url urls http https site website internet browser feed rss mail mails email emails inbox message messages channel channels chat chats comment comments issue issues review reviews post posts tweet tweets news")
	// untrustedVerbs fetch from the open web whatever their object.
	untrustedVerbs = words("fetch browse scrape crawl download")
	// urlParams carry a destination the tool contacts: data can leave in
	// the URL itself, so any tool taking one is a sink.
	urlParams = words("url urls uri_to link href endpoint webhook webhook_url webhookurl callback callback_url callbackurl")
	// addresseeParams name who receives something; they make a tool a sink
	// unless its name says it only reads.
	addresseeParams = words("to recipient recipients cc bcc channel channel_id channelid chat_id chatid phone phone_number email_to user_email")
)

func words(s string) map[string]bool {
	m := make(map[string]bool)
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

func heuristicLabels(def ToolDef) (flow.Labels, string) {
	name := splitName(def.Name)
	if len(name) == 0 {
		return 0, ""
	}
	verb := name[0]
	hasNoun := func(nouns map[string]bool) string {
		for _, w := range name[1:] {
			if nouns[w] {
				return w
			}
		}
		return ""
	}
	var l flow.Labels
	var why []string
	reads := readVerbs[verb] || strings.HasPrefix(verb, "query")
	if reads {
		if n := hasNoun(privateNouns); n != "" {
			l |= flow.Private
			why = append(why, fmt.Sprintf("name reads %q", n))
		}
		if n := hasNoun(outsideNouns); n != "" {
			l |= flow.Untrusted
			why = append(why, fmt.Sprintf("name reads %q written by others", n))
		}
	}
	if verb == "query" || verb == "sql" {
		l |= flow.Private
		why = append(why, "name queries a data store")
	}
	if untrustedVerbs[verb] || isWebSearch(name) {
		l |= flow.Untrusted
		why = append(why, fmt.Sprintf("name %q reads the web", def.Name))
	}
	if sendVerbs[verb] {
		l |= flow.Sink
		why = append(why, fmt.Sprintf("name starts with %q", verb))
	}
	for _, p := range def.Params {
		pl := strings.ToLower(p)
		switch {
		case urlParams[pl]:
			l |= flow.Sink
			why = append(why, fmt.Sprintf("parameter %q", p))
		case addresseeParams[pl] && !reads:
			l |= flow.Sink
			why = append(why, fmt.Sprintf("parameter %q", p))
		}
	}
	return l, "heuristic " + strings.Join(why, ", ")
}

func isWebSearch(name []string) bool {
	has := func(w string) bool {
		for _, x := range name {
			if x == w {
				return true
			}
		}
		return false
	}
	return has("search") && (has("web") || has("internet") || has("google") || has("bing"))
}

// splitName splits a tool name into lowercase words at underscores, dashes,
// dots, slashes, spaces and camelCase boundaries.
func splitName(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && i > 0 && (unicode.IsLower(rs[i-1]) || (i+1 < len(rs) && unicode.IsLower(rs[i+1]) && unicode.IsUpper(rs[i-1]))):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	return out
}

// Equal reports whether two definitions label the same way.
func (d ToolDef) Equal(o ToolDef) bool {
	return d.Name == o.Name && slices.Equal(d.Params, o.Params) &&
		eqHint(d.Annotations.ReadOnly, o.Annotations.ReadOnly) &&
		eqHint(d.Annotations.Destructive, o.Annotations.Destructive) &&
		eqHint(d.Annotations.OpenWorld, o.Annotations.OpenWorld)
}

func eqHint(a, b *bool) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// LabelDefs labels a tool from every definition the server has shown
// under its name: the union of their labels, so that a changed definition
// can widen a tool's labels, never narrow them. With no definition (a
// client that cached the list, or calls blind) the tool is labelled from
// its name alone.
func LabelDefs(p *policy.Policy, server, name string, defs []ToolDef) ToolLabels {
	if len(defs) == 0 {
		return Label(p, server, ToolDef{Name: name})
	}
	var out ToolLabels
	for _, d := range defs {
		l := Label(p, server, d)
		out.Labels |= l.Labels
		out.Listed = out.Listed || l.Listed
		out.Why = append(out.Why, l.Why...)
	}
	out.Why = slices.Compact(out.Why)
	return out
}
