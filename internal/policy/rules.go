package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/weir-sec/weir/internal/flow"
)

// Rule is one `rules:` entry. A rule fires for a call when Match matches
// the tool and either When evaluates to true or some argument breaks one of
// Args; firing applies Action. Separately, a call over RateLimit fires the
// rule with a block. See [Policy.Fire].
type Rule struct {
	// ID names the rule in block reasons and the audit log: the id: key,
	// or "rules[N]" (N counting from 0 in its file) when there is none.
	ID        string
	Match     Glob
	Args      []ArgRule  // in file order
	When      *Predicate // nil if none
	RateLimit *RateLimit // nil if none
	// Action is what firing does: allow (record only), warn, block or
	// escalate. Block when the rule does not say.
	Action flow.Verdict
	// Because is the rule's own explanation, used as the block reason.
	Because string
	Line    int    // where it was written (in Source)
	Source  string // the file or preset the rule came from
}

// ArgRule constrains one top-level argument. An argument the call does not
// send is not checked. When the argument is an array, each element is
// checked (arrays nest). A value of the wrong type for a constraint (a
// number where within expects a path, null, an object) is a violation.
type ArgRule struct {
	Name string
	// Within lists directories, absolute and clean, ~ expanded at load
	// (symlinks in them are not resolved: write the real path of an
	// allowed directory that is itself a symlink). The resolved path
	// ([ResolvePath]) must be one of them or lie under one, by whole
	// components.
	Within []string
	// Deny: a value matching any of these is a violation. For a within
	// argument the resolved path is matched too, and either matching
	// violates.
	Deny []*regexp.Regexp
	// Allow: the value must match at least one of these (for a within
	// argument, the resolved path too).
	Allow []*regexp.Regexp
	// OneOf lists the allowed values: strings, numbers (float64) or bools,
	// compared as JSON values (1 equals 1.0, "1" does not).
	OneOf []any
	// Hosts constrains URL values: http or https, host per HostRule.
	Hosts *HostRule
	// MaxLength bounds a string's length in characters (runes); 0 is no
	// bound.
	MaxLength int
	// Min and Max bound a number, inclusive; nil is no bound.
	Min, Max *float64
	Line     int
	// WithinText is Within as the policy wrote it ("~/projects"), for
	// messages; nil means Within is shown.
	WithinText []string
}

// Check checks one argument value. It returns "" when the value satisfies
// the rule, else a short description of the violation, such as
// "$.path is outside ~/projects", which never quotes the value: it goes to
// the audit log and into block reasons.
//
// resolved gives the resolved form ([ResolvePath]) of each string a within
// constraint checks; a string it cannot resolve (false, or resolved is nil)
// is a violation. Check does no I/O.
func (a *ArgRule) Check(value any, resolved func(raw string) (string, bool)) string {
	return a.check(argPath(a.Name), value, resolved, 0)
}

// maxNesting bounds how deep Check follows arrays in arrays.
const maxNesting = 32

func (a *ArgRule) check(path string, v any, resolved func(string) (string, bool), depth int) string {
	switch l := v.(type) {
	case []any:
		if depth >= maxNesting {
			return path + " is nested too deeply"
		}
		for i, e := range l {
			if msg := a.check(path+"["+strconv.Itoa(i)+"]", e, resolved, depth+1); msg != "" {
				return msg
			}
		}
		return ""
	case []string:
		for i, e := range l {
			if msg := a.one(path+"["+strconv.Itoa(i)+"]", e, resolved); msg != "" {
				return msg
			}
		}
		return ""
	}
	return a.one(path, v, resolved)
}

// one checks a value that is not an array.
func (a *ArgRule) one(path string, v any, resolved func(string) (string, bool)) string {
	if len(a.OneOf) > 0 && !oneOf(v, a.OneOf) {
		return path + " is not one of the allowed values"
	}
	if a.wantsString() {
		s, ok := v.(string)
		if !ok {
			return path + " is " + kind(v) + ", not a string"
		}
		forms := [2]string{s}
		n := 1
		if len(a.Within) > 0 {
			var r string
			if resolved != nil {
				r, ok = resolved(s)
			} else {
				ok = false
			}
			if !ok {
				return path + " is not a path Weir could resolve"
			}
			if !slices.ContainsFunc(a.Within, func(dir string) bool { return within(r, dir) }) {
				return path + " is outside " + List(a.withinNames(), " and ")
			}
			if r != s {
				forms[1], n = r, 2
			}
		}
		for _, re := range a.Deny {
			for _, f := range forms[:n] {
				if re.MatchString(f) {
					return fmt.Sprintf("%s matches the denied pattern %s", path, Quote(re.String()))
				}
			}
		}
		if len(a.Allow) > 0 {
			for _, f := range forms[:n] {
				if !slices.ContainsFunc(a.Allow, func(re *regexp.Regexp) bool { return re.MatchString(f) }) {
					return path + " matches none of the allowed patterns"
				}
			}
		}
		if a.Hosts != nil {
			if msg := a.Hosts.check(path, s); msg != "" {
				return msg
			}
		}
		// No more bytes than the limit means no more characters either.
		if a.MaxLength > 0 && len(s) > a.MaxLength && utf8.RuneCountInString(s) > a.MaxLength {
			return fmt.Sprintf("%s is longer than %d characters", path, a.MaxLength)
		}
	}
	if a.Min != nil || a.Max != nil {
		f, ok := number(v)
		if !ok {
			return path + " is " + kind(v) + ", not a number"
		}
		if a.Min != nil && f < *a.Min {
			return fmt.Sprintf("%s is less than %s", path, formatNumber(*a.Min))
		}
		if a.Max != nil && f > *a.Max {
			return fmt.Sprintf("%s is more than %s", path, formatNumber(*a.Max))
		}
	}
	return ""
}

// wantsString reports whether some constraint of a reads strings.
func (a *ArgRule) wantsString() bool {
	return len(a.Within) > 0 || len(a.Deny) > 0 || len(a.Allow) > 0 || a.Hosts != nil || a.MaxLength > 0
}

func (a *ArgRule) withinNames() []string {
	if len(a.WithinText) == len(a.Within) {
		return a.WithinText
	}
	return a.Within
}

// oneOf reports whether v equals one of allowed, as JSON values.
func oneOf(v any, allowed []any) bool {
	switch x := v.(type) {
	case string, bool:
		return slices.Contains(allowed, v)
	default:
		f, ok := number(x)
		if !ok {
			return false
		}
		for _, a := range allowed {
			if g, ok := number(a); ok && g == f {
				return true
			}
		}
	}
	return false
}

// number reads a JSON number however it was decoded.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, !math.IsNaN(x)
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case int32:
		return float64(x), true
	case uint64:
		return float64(x), true
	case float32:
		return float64(x), true
	}
	return 0, false
}

// kind names the JSON type of v, for violations (never its value).
func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "true or false"
	case map[string]any:
		return "an object"
	case []any, []string:
		return "a list"
	}
	if _, ok := number(v); ok {
		return "a number"
	}
	return "not a JSON value"
}

func formatNumber(f float64) string {
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// argPath writes an argument's JSON path the way the engine does: $.name,
// or $["name"] when the name is not an identifier.
func argPath(name string) string {
	ident := name != ""
	for i, r := range name {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			ident = false
			break
		}
	}
	if ident {
		return "$." + name
	}
	q, _ := json.Marshal(name)
	return "$[" + string(q) + "]"
}

// RulesFor returns the rules whose pattern matches tool on server, in
// order (the preset's first).
func (p *Policy) RulesFor(server, tool string) []*Rule {
	if p == nil {
		return nil
	}
	var out []*Rule
	for i := range p.Rules {
		if r := &p.Rules[i]; r.Match.Match(server, tool) {
			out = append(out, r)
		}
	}
	return out
}

// PathArgs returns the names of the arguments that some rule matching tool
// on server checks with `within`, each once, in rule order. Those
// arguments are resolved on disk (for an array, each string in it) before
// the decision, which then stays pure.
func (p *Policy) PathArgs(server, tool string) []string {
	if p == nil {
		return nil
	}
	var out []string
	for i := range p.Rules {
		r := &p.Rules[i]
		if !r.Match.Match(server, tool) {
			continue
		}
		for j := range r.Args {
			if a := &r.Args[j]; len(a.Within) > 0 && !slices.Contains(out, a.Name) {
				out = append(out, a.Name)
			}
		}
	}
	return out
}

// RateLimits returns the rules matching tool on server that have a
// rate_limit, in order: the calls the state store must count, per session
// and rule ID.
func (p *Policy) RateLimits(server, tool string) []*Rule {
	if p == nil {
		return nil
	}
	var out []*Rule
	for i := range p.Rules {
		if r := &p.Rules[i]; r.RateLimit != nil && r.Match.Match(server, tool) {
			out = append(out, r)
		}
	}
	return out
}

// Firing is one rule that fired for a call.
type Firing struct {
	Rule   *Rule
	Action flow.Verdict
	// Reason is the text for the person and the model: the rule's because
	// when it has one, else Detail.
	Reason string
	// Detail says what fired it: the argument violation
	// ("$.path is outside ~/projects"), "when: EXPR", the rate limit, or
	// why the predicate could not be evaluated. It never quotes argument
	// values.
	Detail string
	// Err is the evaluation error when `when` could not be evaluated. CEL's
	// message may quote argument values: show it to the person running
	// `weir policy check`, never write it to a log.
	Err error
}

// Fire returns the rules that fire for a call, in rule order. It is pure
// and deterministic; the engine calls it for every tools/call.
//
// Predicates see server, tool and args as given to Fire, whatever
// vars.Server, vars.Tool and vars.Args say. resolved gives the resolved form
// of path arguments (see [ArgRule.Check]).
//
// For each rule whose pattern matches:
//
//   - when its ID is in vars.RateExceeded, it fires with a block (a rate
//     limit is not softened by the rule's action);
//   - when its `when` is true, or some argument breaks its constraints, it
//     fires once with its action (an allow firing is recorded and changes
//     nothing); the detail is "when: EXPR" if the predicate is true, else
//     the first violation;
//   - when its `when` cannot be evaluated (a missing key, a type error, the
//     cost limit), it fires with a block whose reason names the rule: it
//     fails closed.
//
// Rules only add firings, so adding a rule never makes a call more allowed.
func (p *Policy) Fire(server, tool string, args map[string]any, vars Vars, resolved func(string) (string, bool)) []Firing {
	if p == nil {
		return nil
	}
	var fired []Firing
	var act *activation // built when the first predicate runs, shared by all
	for i := range p.Rules {
		r := &p.Rules[i]
		if !r.Match.Match(server, tool) {
			continue
		}
		if r.RateLimit != nil && slices.Contains(vars.RateExceeded, r.ID) {
			d := fmt.Sprintf("this call is over the rate limit of rule %s (%s)", r.ID, r.RateLimit.Text)
			fired = append(fired, Firing{Rule: r, Action: flow.Block, Reason: d, Detail: d})
		}
		violation := ""
		for j := range r.Args {
			a := &r.Args[j]
			if v, present := args[a.Name]; present {
				if violation = a.Check(v, resolved); violation != "" {
					break
				}
			}
		}
		// A rule that blocks on its arguments fires with a block whatever
		// its predicate says (true, false or an error), so the predicate
		// need not run.
		if r.When != nil && (violation == "" || r.Action != flow.Block) {
			if act == nil {
				act = &activation{v: vars}
				act.v.Server, act.v.Tool, act.v.Args = server, tool, args
			}
			act.config = r.When.config
			ok, err := r.When.eval(context.Background(), act)
			if err != nil {
				d := fmt.Sprintf("rule %s could not be evaluated, so the call is blocked (when: %s)", r.ID, r.When.src)
				if errCost(err) {
					d = fmt.Sprintf("rule %s needed more than its evaluation budget, so the call is blocked (when: %s)", r.ID, r.When.src)
				}
				fired = append(fired, Firing{Rule: r, Action: flow.Block, Reason: d, Detail: d, Err: err})
				continue
			}
			if ok {
				fired = append(fired, r.firing("when: "+r.When.src))
				continue
			}
		}
		if violation != "" {
			fired = append(fired, r.firing(violation))
		}
	}
	return fired
}

// Fired is the rule firing for detail, the violation or "when: EXPR" that
// made it fire: its action, and its because: as the reason when it has one.
func (r *Rule) Fired(detail string) Firing { return r.firing(detail) }

func (r *Rule) firing(detail string) Firing {
	reason := detail
	if r.Because != "" {
		reason = r.Because
	}
	return Firing{Rule: r, Action: r.Action, Reason: reason, Detail: detail}
}

// MostSevere returns the most severe action among fired, Allow if none.
func MostSevere(fired []Firing) flow.Verdict {
	v := flow.Allow
	for _, f := range fired {
		v = flow.Max(v, f.Action)
	}
	return v
}

// within reports whether the clean absolute path p is dir or lies under it,
// by whole path components: /home/u/projects2 is not within /home/u/projects.
func within(p, dir string) bool {
	if p == dir {
		return true
	}
	if dir == string(filepath.Separator) {
		return strings.HasPrefix(p, dir)
	}
	return len(p) > len(dir) && p[len(dir)] == filepath.Separator && strings.HasPrefix(p, dir)
}

// Quote puts a user's text in double quotes for a message. Printable text
// is shown as written, so a Windows path or a regular expression keeps
// single backslashes; text with a quote or an unprintable character is
// escaped as a Go string.
func Quote(s string) string {
	if !utf8.ValidString(s) {
		return strconv.Quote(s)
	}
	for _, r := range s {
		if r == '"' || !unicode.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return `"` + s + `"`
}

// List writes names as "a, b" followed by last and the final name:
// List(names, " or ") gives "a, b or c".
func List(names []string, last string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + last + names[len(names)-1]
}
