package approval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/weir-sec/weir/internal/jsonrpc"
)

// Fact is one thing a call would do, read from its arguments: where it
// sends, writes or pays, shortened for a person to read.
type Fact struct {
	Kind  Kind   `json:"kind"`
	Path  string `json:"path"`  // the argument's JSON path ("to", "recipients[1]"), shortened and escaped like Value
	Value string `json:"value"` // shortened, control and invisible characters escaped

	dest string // the destination it names, canonical ("" for an amount)
	// more, on the last fact kept, are the destinations of the facts past
	// maxFacts: not shown, but bound by a session approval all the same.
	more []string
}

// Kind is what an argument names.
type Kind string

const (
	KindRecipient Kind = "recipient"
	KindChannel   Kind = "channel"
	KindAccount   Kind = "account"
	KindHost      Kind = "host"
	KindPath      Kind = "path"
	KindAmount    Kind = "amount"
)

// kindWords maps the words of an argument's name to what it names, most
// specific first: "recipient_iban" is an account, "file_url" a host.
var kindWords = []struct {
	kind  Kind
	words []string
}{
	{KindAmount, []string{"amount", "price", "total", "sum", "cost", "quantity"}},
	{KindHost, []string{"url", "uri", "link", "href", "webhook", "endpoint", "host", "domain", "site", "website"}},
	{KindPath, []string{"path", "file", "filename", "filepath", "dir", "directory", "folder", "destination", "target"}},
	{KindAccount, []string{"account", "iban", "wallet", "repo", "repository", "owner", "org", "organization", "organisation", "project", "bucket", "workspace", "team"}},
	{KindChannel, []string{"channel", "channels", "chat", "room", "thread", "conversation", "group"}},
	{KindRecipient, []string{"to", "recipient", "recipients", "cc", "bcc", "email", "emails", "mail", "phone", "tel", "number", "address", "addresses", "user", "users", "username",
		"member", "members", "invitee", "invitees", "assignee", "assignees", "reviewer", "reviewers", "attendee", "attendees",
		"participant", "participants", "contact", "contacts", "receiver", "payee", "beneficiary"}},
}

// maxFactValue bounds the strings read as facts: a longer one is a body,
// not an address.
const maxFactValue = 512

// maxFacts bounds the facts kept for one call.
const maxFacts = 12

// Facts reads what a call would do from its arguments: each string or
// number whose argument name says it is a recipient, channel, account,
// host, path or amount, and each short string that is an e-mail address
// or a URL wherever it is. Bodies and other long text are not facts.
func Facts(args json.RawMessage) []Fact {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || args[0] != '{' || !jsonrpc.Valid(args) {
		return nil
	}
	v, err := jsonrpc.Decode(args)
	if err != nil {
		return nil
	}
	var out []Fact
	var more []string
	add := func(f Fact) {
		if len(out) < maxFacts {
			out = append(out, f)
		} else if f.dest != "" {
			more = append(more, f.dest)
		}
	}
	var walk func(path string, kind Kind, v any)
	walk = func(path string, kind Kind, v any) {
		switch x := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				p := k
				if path != "" {
					p = path + "." + k
				}
				walk(p, kindOf(k, kind), x[k])
			}
		case []any:
			for i, e := range x {
				walk(path+"["+strconv.Itoa(i)+"]", kind, e)
			}
		case string:
			if f, ok := stringFact(path, kind, x); ok {
				add(f)
			}
		case float64:
			if kind == KindAmount {
				add(Fact{Kind: KindAmount, Path: Shorten(path, 72), Value: strconv.FormatFloat(x, 'f', -1, 64)})
			}
		}
	}
	walk("", "", v)
	if len(more) > 0 {
		out[len(out)-1].more = more
	}
	return out
}

// kindOf reads an argument name's words; a name that says nothing keeps
// the kind of the object or list it is in (recipients: [{email: ...}]).
func kindOf(name string, outer Kind) Kind {
	ws := words(name)
	for _, kw := range kindWords {
		for _, w := range ws {
			if slices.Contains(kw.words, w) {
				return kw.kind
			}
		}
	}
	return outer
}

// words splits an argument name at _, -, ., spaces and lower-to-upper case
// changes, lowercased: "channelId" → channel, id.
func words(name string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	prevLower := false
	for _, r := range name {
		switch {
		case r == '_' || r == '-' || r == '.' || r == ' ':
			flush()
			prevLower = false
			continue
		case unicode.IsUpper(r) && prevLower:
			flush()
		}
		cur = append(cur, r)
		prevLower = unicode.IsLower(r) || unicode.IsDigit(r)
	}
	flush()
	return out
}

func stringFact(path string, kind Kind, s string) (Fact, bool) {
	s = strings.TrimSpace(s)
	// A long string under an unnamed key is a body, not an address; under
	// a destination's name (a 600-character bcc list) it is a destination
	// all the same, shown shortened and remembered whole.
	if s == "" || kind == "" && len(s) > maxFactValue {
		return Fact{}, false
	}
	if kind == "" {
		// Unnamed: only an address is a fact.
		switch {
		case isEmail(s):
			kind = KindRecipient
		case isURL(s):
			kind = KindHost
		default:
			return Fact{}, false
		}
	}
	// The path is made of member names the caller chose: escaped like
	// the value.
	f := Fact{Kind: kind, Path: Shorten(path, 72), Value: Shorten(s, 72)}
	switch kind {
	case KindAmount:
	case KindHost:
		f.dest = "host:" + hostOf(s)
	case KindRecipient:
		f.dest = "recipient:" + strings.ToLower(s)
	case KindPath:
		f.dest = "path:" + s
	default:
		f.dest = string(kind) + ":" + s
	}
	return f, true
}

func isEmail(s string) bool {
	at := strings.IndexByte(s, '@')
	return at > 0 && at < len(s)-3 && !strings.ContainsAny(s, " \t\n<>") && strings.Contains(s[at:], ".")
}

func isURL(s string) bool {
	l := strings.ToLower(s)
	return (strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")) && !strings.ContainsAny(s, " \t\n")
}

// hostOf is the host a URL (or bare host) names, lowercased; the string
// itself when it has none.
func hostOf(s string) string {
	if u, err := url.Parse(s); err == nil && u.Host != "" {
		return strings.ToLower(u.Hostname())
	}
	return strings.ToLower(s)
}

// maxScopeValue bounds the argument values that stand in for a destination
// when no argument names one (see Scope).
const maxScopeValue = 64

// SessionScope is what a session approval of the call remembers: the destinations
// its facts name or, when none is recognised, every short string or number
// among its arguments. An argument Weir cannot read as an address may still
// be one (a phone number under "n"), and a session grant must never cover a
// call to somewhere the person did not see: with nothing recognised, any
// change to a short argument is a new question.
func SessionScope(args json.RawMessage, facts []Fact) []string {
	if d := Destinations(facts); len(d) > 0 {
		return d
	}
	args = bytes.TrimSpace(args)
	if len(args) == 0 || args[0] != '{' || !jsonrpc.Valid(args) {
		return nil
	}
	v, err := jsonrpc.Decode(args)
	if err != nil {
		return nil
	}
	var out []string
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				walk(path+"["+strconv.Quote(k)+"]", e)
			}
		case []any:
			for i, e := range x {
				walk(path+"["+strconv.Itoa(i)+"]", e)
			}
		case string:
			if len(x) <= maxScopeValue {
				out = append(out, "arg:"+path+"="+strconv.Quote(x))
			}
		case float64:
			out = append(out, "arg:"+path+"="+strconv.FormatFloat(x, 'g', -1, 64))
		case bool:
			out = append(out, "arg:"+path+"="+strconv.FormatBool(x))
		}
	}
	walk("$", v)
	slices.Sort(out)
	return out
}

// Destinations are the canonical destinations the facts name, sorted and
// unique.
func Destinations(facts []Fact) []string {
	var out []string
	for _, f := range facts {
		if f.dest != "" {
			out = append(out, f.dest)
		}
		out = append(out, f.more...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Shorten makes s safe and short for a person to read: control, format
// (bidirectional, zero-width) and other invisible characters are shown as
// \u escapes, and a string over max characters keeps its start and end
// around an ellipsis.
func Shorten(s string, max int) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == utf8.RuneError:
			b.WriteString(`\ufffd`)
		case r == ' ' || unicode.IsGraphic(r) && !unicode.Is(unicode.Cf, r):
			b.WriteRune(r)
		default:
			if r > 0xffff {
				fmt.Fprintf(&b, `\U%08x`, r)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		}
	}
	out := []rune(b.String())
	if len(out) <= max || max < 8 {
		return string(out)
	}
	head := (max - 1) * 2 / 3
	tail := max - 1 - head
	return string(out[:head]) + "…" + string(out[len(out)-tail:])
}
