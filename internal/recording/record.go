package recording

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/publicsuffix"

	"github.com/weir-sec/weir/internal/engine"
	"github.com/weir-sec/weir/internal/fingerprint"
	"github.com/weir-sec/weir/internal/flow"
	"github.com/weir-sec/weir/internal/jsonrpc"
	"github.com/weir-sec/weir/internal/policy"
	"github.com/weir-sec/weir/internal/policy/policyfile"
	"github.com/weir-sec/weir/internal/store"
)

// The kinds of record.
const (
	KindList   = "list"
	KindCall   = "call"
	KindResult = "result"
)

// List is a tools/list as recorded: each definition and its labels.
type List struct {
	Policy string       `json:"policy"`
	Tools  []ListedTool `json:"tools"`
}

// ListedTool is one definition of a tools/list.
type ListedTool struct {
	Def    engine.ToolDef `json:"def"`
	Labels []string       `json:"labels,omitempty"`
	Listed bool           `json:"listed,omitempty"`
}

// Call is a tools/call as recorded: its inputs as the engine saw them,
// and the decision.
type Call struct {
	// Policy is the hash of the policy the call was decided under
	// (PolicyHash); the store keeps its text.
	Policy string   `json:"policy"`
	Labels []string `json:"labels,omitempty"`
	Listed bool     `json:"listed,omitempty"`
	// Watermark is the session mirror's sequence number: the decision read
	// the session's observations up to it.
	Watermark    int64              `json:"watermark"`
	NoID         bool               `json:"no_id,omitempty"`
	Withheld     string             `json:"withheld,omitempty"`
	RateExceeded []string           `json:"rate_exceeded,omitempty"`
	Digest       *engine.DigestWire `json:"digest"`
	Facts        []Fact             `json:"facts,omitempty"`

	Verdict  string    `json:"verdict"`
	Rule     string    `json:"rule,omitempty"`
	Reason   string    `json:"reason,omitempty"`
	Findings []Finding `json:"findings,omitempty"`

	// Sources are the sources the decision rests on ("server/tool").
	Sources []string `json:"sources,omitempty"`

	// For learn, on allowed calls only: the directory each path argument
	// resolved into, and the registrable domain (eTLD+1) of each URL.
	Learned []Learned `json:"learned,omitempty"`
}

// Learned is what learn reads of one argument of an allowed call.
type Learned struct {
	Arg string `json:"arg"`
	// Dir is the directory a path argument resolved into.
	Dir string `json:"dir,omitempty"`
	// Site is the registrable domain of an http or https URL; Other marks
	// a value of a URL argument that is not one.
	Site  string `json:"site,omitempty"`
	Other bool   `json:"other,omitempty"`
}

// Fact is what replay can check of one string argument without its value.
type Fact struct {
	Path string `json:"path"`
	// Arg is the top-level argument the string is in.
	Arg string `json:"arg"`
	// Runes is its length in characters.
	Runes int `json:"runes"`
	// Dirs are keyed hashes of the directories the resolved path is in,
	// itself included, when a within constraint resolved it.
	Dirs []engine.Hash `json:"dirs,omitempty"`
	// Scheme and Hosts, for an absolute URL: its scheme, when it is one of
	// the well-known ones, and keyed hashes of its canonical site host and
	// each domain it is under.
	Scheme string        `json:"scheme,omitempty"`
	Hosts  []engine.Hash `json:"hosts,omitempty"`
	// NotURL marks a string that is not an absolute URL with a host.
	NotURL bool `json:"not_url,omitempty"`
	// Unresolved marks a path argument that could not be resolved.
	Unresolved bool `json:"unresolved,omitempty"`
	// Kind is the JSON type of a value that is not a string (number,
	// boolean, null, object); "" for a string.
	Kind string `json:"kind,omitempty"`
}

// Finding is one finding of a decision.
type Finding struct {
	Rule    string `json:"rule"`
	Verdict string `json:"verdict"`
	Reason  string `json:"reason,omitempty"`
}

// Result is a tools/call result as recorded.
type Result struct {
	Labels     []string `json:"labels,omitempty"`
	Declassify string   `json:"declassify,omitempty"`
}

// PolicyHash names a policy by its source and text.
func PolicyHash(p *policy.Policy) string {
	h := sha256.New()
	h.Write([]byte(p.Source))
	h.Write([]byte{0})
	h.Write(p.Text)
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// NewList records a tools/list.
func NewList(session, server string, at int64, pol *policy.Policy, defs []engine.ToolDef, labels []engine.ToolLabels) store.Rec {
	l := List{Policy: PolicyHash(pol)}
	for i, d := range defs {
		t := ListedTool{Def: d}
		if i < len(labels) {
			t.Labels, t.Listed = labels[i].Labels.Names(), labels[i].Listed
		}
		l.Tools = append(l.Tools, t)
	}
	return rec(session, server, "", at, KindList, l)
}

// NewResult records a tools/call result, with the labels it entered the
// session with.
func NewResult(session, server, tool string, at int64, labels flow.Labels, d *engine.Decision) store.Rec {
	r := Result{Labels: labels.Names()}
	if d.Declassify != nil {
		r.Declassify = d.Declassify.String()
	}
	return rec(session, server, tool, at, KindResult, r)
}

// CallInputs are what the relay knows of a decided call.
type CallInputs struct {
	Session, Server string
	At              int64
	Policy          *policy.Policy
	Call            engine.Call // as gathered: Resolved, RateExceeded, Withheld filled
	Watermark       int64
	Decision        engine.Decision
	// Home and Cwd resolve path arguments, for learn's directories.
	Home, Cwd string
}

// NewCall records a decided call. It computes the argument digest of a
// sink call when the decision did not, which is why the relay calls it off
// the hot path; for any other call the decision did not read the
// arguments for, only what DigestNames keeps.
func NewCall(h *fingerprint.Hasher, in CallInputs) store.Rec {
	c, d := in.Call, in.Decision
	body := Call{
		Policy: PolicyHash(in.Policy), Labels: c.Labels.Labels.Names(), Listed: c.Labels.Listed,
		Watermark: in.Watermark, NoID: c.NoID, Withheld: c.Withheld, RateExceeded: c.RateExceeded,
		Verdict: d.Verdict.String(), Rule: string(d.Rule), Reason: d.Reason, Sources: d.Sources,
	}
	dg := d.Digest
	switch {
	case dg != nil:
	case c.Labels.Labels.Has(flow.Sink):
		dg = engine.DigestCall(h, c.Args, c.Earlier)
	default:
		// Not a sink, and the decision needed no attribution (it would
		// have made the digest): a replay under a policy that judges
		// this call by its arguments says it cannot (see Replay).
		dg = engine.DigestNames(c.Args)
	}
	body.Digest = dg.Wire()
	for _, f := range d.Findings {
		body.Findings = append(body.Findings, Finding{string(f.Rule), f.Verdict.String(), f.Reason})
	}
	allowed := d.Verdict == flow.Allow || d.Verdict == flow.Warn
	pathArgs := in.Policy.PathArgs(c.Server, c.Tool)
	eachValue(c.Args, func(path, arg, kind, v string) {
		if kind != "" {
			body.Facts = append(body.Facts, Fact{Path: path, Arg: arg, Kind: kind})
			return
		}
		f := Fact{Path: path, Arg: arg, Runes: utf8.RuneCountInString(v)}
		resolved, ok := c.Resolved[v]
		if !ok && (engine.PathArg(arg) || slices.Contains(pathArgs, arg)) {
			r, err := policyfile.ResolvePath(v, in.Home, in.Cwd)
			resolved, ok = r, err == nil
			f.Unresolved = err != nil
		}
		if ok {
			for dir := resolved; ; dir = filepath.Dir(dir) {
				f.Dirs = append(f.Dirs, engine.Hash(h.Digest("dir:"+dir)))
				if dir == filepath.Dir(dir) {
					break
				}
			}
			if allowed {
				dir := resolved
				if st, err := os.Stat(resolved); err != nil || !st.IsDir() {
					dir = filepath.Dir(resolved)
				}
				body.Learned = append(body.Learned, Learned{Arg: arg, Dir: dir})
			}
		}
		scheme, host, err := "", "", errNoScheme
		if schemeFirst(v) {
			scheme, host, err = policy.URLHost(v)
		}
		if err != nil {
			f.NotURL = true
		} else {
			f.Hosts = hostHashes(h, policy.SiteHost(host))
		}
		if knownScheme(scheme) {
			f.Scheme = scheme
		}
		if allowed && engine.URLArg(arg) {
			l := Learned{Arg: arg, Other: true}
			if site, err := publicsuffix.EffectiveTLDPlusOne(host); err == nil && (scheme == "http" || scheme == "https") {
				l.Site, l.Other = site, false
			}
			body.Learned = append(body.Learned, l)
		}
		body.Facts = append(body.Facts, f)
	})
	return rec(in.Session, in.Server, c.Tool, in.At, KindCall, body)
}

var errNoScheme = errors.New("no scheme")

// schemeFirst reports whether s begins with a scheme as url.Parse reads
// one (a letter, then letters, digits, "+", "-" or ".", then ":"). A
// string that does not has neither scheme nor host for policy.URLHost,
// whatever follows, so it need not be parsed: url.Parse of 4 KB of prose
// escapes all of it.
func schemeFirst(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' || c == '+' || c == '-' || c == '.':
			if i == 0 {
				return false
			}
		case c == ':':
			return i > 0
		default:
			return false
		}
	}
	return false
}

// hostHashes are the keyed hashes of a canonical host and of every domain
// it is under (a.b.example: a.b.example, b.example, example), which is
// what a hosts pattern is checked against.
func hostHashes(h *fingerprint.Hasher, host string) []engine.Hash {
	var out []engine.Hash
	for d := host; d != ""; {
		out = append(out, engine.Hash(h.Digest("host:"+d)))
		_, rest, ok := strings.Cut(d, ".")
		if !ok {
			break
		}
		d = rest
	}
	return out
}

func knownScheme(s string) bool {
	switch s {
	case "http", "https", "ftp", "ftps", "sftp", "file", "data", "javascript", "mailto", "ws", "wss", "ssh", "git":
		return true
	}
	return false
}

// eachValue calls fn for each value a rule's argument constraints check:
// a top-level argument, or each element of one that is an array (arrays
// nest), with its JSON path, the argument's name, and its kind: "" and the
// string for a string, else the JSON type.
func eachValue(args json.RawMessage, fn func(path, arg, kind, v string)) {
	if len(args) == 0 || args[0] != '{' {
		return
	}
	_ = jsonrpc.EachMember(args, func(name string, value []byte) error {
		walkValues("$."+name, value, func(path, kind, v string) { fn(path, name, kind, v) })
		return nil
	})
}

func walkValues(path string, v []byte, fn func(path, kind, v string)) {
	if len(v) == 0 {
		return
	}
	switch v[0] {
	case '"':
		if s, err := jsonrpc.Unquote(v); err == nil {
			fn(path, "", s)
		}
	case '[':
		_ = jsonrpc.EachElement(v, func(i int, e []byte) error {
			walkValues(path+"["+itoa(i)+"]", e, fn)
			return nil
		})
	case '{':
		fn(path, "object", "")
	case 't', 'f':
		fn(path, "boolean", "")
	case 'n':
		fn(path, "null", "")
	default:
		fn(path, "number", "")
	}
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

func rec(session, server, tool string, at int64, kind string, body any) store.Rec {
	b, _ := json.Marshal(body)
	return store.Rec{Session: session, At: at, Kind: kind, Server: server, Tool: tool, Body: b}
}
