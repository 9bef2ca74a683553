package policyfile

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/weir-sec/weir/internal/flow"
	"github.com/weir-sec/weir/internal/policy"
)

const (
	exampleRule   = `{match: "slack:post_message", rate_limit: 10/minute}`
	exampleArgs   = `{path: {within: ["~/projects"]}}`
	exampleConfig = `{allowed_domains: [corp.example]}`
)

// Limits on config, whose values can be any YAML: aliases can make a short
// file expand to a huge (or, through a self-reference, endless) value.
const (
	maxConfigValues = 10_000
	maxConfigDepth  = 32
)

func (d *decoder) preset(e entry) {
	if d.isPreset {
		d.errAt(e.k, "preset", "a preset cannot layer on another preset; set every key instead")
		return
	}
	i, ok := d.enum("preset", e, "preset", presetNames)
	if !ok {
		return
	}
	name := presetNames[i]
	d.l.preset = &name
	d.presetNode = deref(e.v)
}

// base returns the preset this file layers on, or nil for a preset itself
// or when the preset cannot be built (reported by Parse).
func (d *decoder) base() *policy.Policy {
	if d.isPreset {
		return nil
	}
	p, err := builtin(d.l.presetName())
	if err != nil {
		return nil
	}
	return p
}

func (d *decoder) config(e entry) {
	v := deref(e.v)
	if isNull(v) { // "config:" with nothing under it sets nothing
		return
	}
	if v.Kind != yaml.MappingNode {
		d.errAt(v, "config", "want a mapping of named values, e.g. %s, got %s", exampleConfig, describe(v))
		return
	}
	budget := maxConfigValues
	if m, ok := d.configValue("config", v, &budget, 0); ok {
		d.l.config = m.(map[string]any)
	}
}

// configValue decodes any YAML value into plain Go values: string, int64,
// float64, bool, nil, []any, map[string]any.
func (d *decoder) configValue(key string, n *yaml.Node, budget *int, depth int) (any, bool) {
	n = deref(n)
	*budget--
	if *budget == -1 {
		d.errAt(n, key, "config holds more than %d values (count what its aliases expand to); keep config small", maxConfigValues)
	}
	if *budget < 0 || depth > maxConfigDepth {
		if depth == maxConfigDepth+1 {
			d.errAt(n, "config", "config is nested more than %d levels deep (does an alias refer to itself?)", maxConfigDepth)
		}
		return nil, false
	}
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		lines := map[string]int{}
		ok := true
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := deref(n.Content[i]), n.Content[i+1]
			if k.ShortTag() == "!!merge" {
				d.errAt(k, key, "merge keys (<<) are not supported in a policy; write the keys out")
				ok = false
				continue
			}
			if !isString(k) {
				d.errAt(k, key, "a config key must be a name, not %s (quote it if you mean the text)", describe(k))
				ok = false
				continue
			}
			ckey := joinKey(key, k.Value)
			if line, dup := lines[k.Value]; dup {
				d.errAt(k, ckey, "duplicate key; it is already set on line %d, keep one", line)
				ok = false
				continue
			}
			lines[k.Value] = k.Line
			val, vok := d.configValue(ckey, v, budget, depth+1)
			ok = ok && vok
			m[k.Value] = val
		}
		return m, ok
	case yaml.SequenceNode:
		l := make([]any, 0, len(n.Content))
		ok := true
		for i, item := range n.Content {
			val, vok := d.configValue(indexKey(key, i), item, budget, depth+1)
			ok = ok && vok
			l = append(l, val)
		}
		return l, ok
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!str", "!!timestamp": // a date stays the text it was written as
			return n.Value, true
		case "!!null":
			return nil, true
		case "!!bool":
			var b bool
			if n.Decode(&b) == nil {
				return b, true
			}
		case "!!int":
			var i int64
			if n.Decode(&i) == nil {
				return i, true
			}
			d.errAt(n, key, "the number %s is too large for a whole number; write it as a decimal (%s.0) or quote it", n.Value, n.Value)
			return nil, false
		case "!!float":
			var f float64
			if n.Decode(&f) == nil {
				return f, true
			}
		}
		d.errAt(n, key, "unsupported value %s; use text, numbers, true/false, lists and mappings", describe(n))
		return nil, false
	}
	d.errAt(n, key, "unsupported value; use text, numbers, true/false, lists and mappings")
	return nil, false
}

func (d *decoder) rules(e entry) {
	v := deref(e.v)
	if isNull(v) {
		return
	}
	if v.Kind != yaml.SequenceNode {
		hint := ""
		if v.Kind == yaml.MappingNode {
			hint = ` (start each rule with "- ")`
		}
		d.errAt(v, "rules", "want a list of rules, e.g. [%s], got %s%s", exampleRule, describe(v), hint)
		return
	}
	d.ruleIDs = map[string]int{}
	for i, item := range v.Content {
		d.rule(i, deref(item))
	}
}

var ruleIDRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

func (d *decoder) rule(i int, n *yaml.Node) {
	path := indexKey("rules", i)
	if n.Kind != yaml.MappingNode {
		d.errAt(n, path, "want a rule such as %s, got %s", exampleRule, describe(n))
		return
	}
	m, typos := d.mapping(n, path, ruleLevel)
	ok := len(m)*2 == len(n.Content)
	r := policy.Rule{ID: path, Action: flow.Block, Line: n.Line, Source: d.file}
	if e, found := m["id"]; found {
		ok = d.ruleID(joinKey(path, "id"), e, &r) && ok
	} else if d.isPreset {
		d.errAt(n, path, "a preset's rule needs an id, so that user files cannot collide with it")
		ok = false
	}
	if e, found := m["match"]; found {
		var gok bool
		r.Match, gok = d.glob(joinKey(path, "match"), e)
		ok = gok && ok
	} else if !typos["match"] {
		d.errAt(n, path, `missing "match"; say which tools the rule applies to, e.g. match: "slack:post_message"`)
		ok = false
	}
	if e, found := m["args"]; found {
		ok = d.args(joinKey(path, "args"), e, &r) && ok
	}
	if e, found := m["when"]; found {
		ok = d.when(joinKey(path, "when"), e, &r) && ok
	}
	if e, found := m["rate_limit"]; found {
		ok = d.rateLimit(joinKey(path, "rate_limit"), e, &r) && ok
	}
	if e, found := m["action"]; found {
		v, aok := d.action(joinKey(path, "action"), e)
		r.Action = v
		ok = aok && ok
	}
	if e, found := m["because"]; found {
		ok = d.because(joinKey(path, "because"), e, &r) && ok
	}
	_, hasArgs := m["args"]
	_, hasWhen := m["when"]
	_, hasRate := m["rate_limit"]
	// An unknown key is likely what was meant to do something; it has
	// its own error.
	allKnown := len(m)*2 == len(n.Content)
	if !hasArgs && !hasWhen && !hasRate && allKnown {
		d.errAt(n, path, "a rule needs args, when or rate_limit to do anything")
		ok = false
	}
	if ok {
		d.l.rules = append(d.l.rules, r)
	}
}

func (d *decoder) ruleID(key string, e entry, r *policy.Rule) bool {
	v := deref(e.v)
	if !isString(v) || v.Value == "" {
		d.errAt(v, key, "want a short name such as ssh-guard, got %s", describe(v))
		return false
	}
	if !ruleIDRE.MatchString(v.Value) {
		d.errAt(v, key, "%s is not a rule id; use up to 64 letters, digits, \".\", \"_\" and \"-\", starting with a letter or digit, e.g. ssh-guard", quote(v.Value))
		return false
	}
	if line, dup := d.ruleIDs[v.Value]; dup {
		d.errAt(v, key, "duplicate rule id %s; it is already used on line %d, ids must be unique", quote(v.Value), line)
		return false
	}
	if base := d.base(); base != nil {
		for _, br := range base.Rules {
			if br.ID == v.Value {
				d.errAt(v, key, "rule id %s is already used by preset %s; choose another", quote(v.Value), base.Preset)
				return false
			}
		}
	}
	d.ruleIDs[v.Value] = v.Line
	r.ID = v.Value
	return true
}

func (d *decoder) because(key string, e entry, r *policy.Rule) bool {
	v := deref(e.v)
	if !isString(v) {
		d.errAt(v, key, `want a sentence saying why, e.g. because: "mail outside the company needs a human", got %s`, describe(v))
		return false
	}
	text := strings.Join(strings.Fields(v.Value), " ")
	if text == "" {
		d.errAt(v, key, "empty; say why the rule exists, or remove the key")
		return false
	}
	r.Because = text
	return true
}

func (d *decoder) rateLimit(key string, e entry, r *policy.Rule) bool {
	v := deref(e.v)
	if !isString(v) {
		d.errAt(v, key, `want a rate such as 10/minute, got %s`, describe(v))
		return false
	}
	rl, err := ParseRateLimit(v.Value)
	if err != nil {
		d.errAt(v, key, "%v", err)
		return false
	}
	r.RateLimit = &rl
	return true
}

func (d *decoder) when(key string, e entry, r *policy.Rule) bool {
	v := deref(e.v)
	if isNull(v) {
		d.errAt(e.k, key, `missing value; want a CEL expression, e.g. when: '"private" in session.legs'`)
		return false
	}
	if !isString(v) {
		d.errAt(v, key, "want a CEL expression as text, got %s (quote it: when: '%s')", describe(v), v.Value)
		return false
	}
	if strings.TrimSpace(v.Value) == "" {
		d.errAt(v, key, `empty; write a CEL expression, e.g. when: '"private" in session.legs'`)
		return false
	}
	pred, issues := policy.CompilePredicate(v.Value)
	if len(issues) > 0 {
		for _, is := range issues {
			line, col := d.celPos(v, is.Line, is.Col)
			e := &Error{File: d.file, Line: line, Column: col, Key: key, Msg: celMessage(is.Msg)}
			d.errs = append(d.errs, e)
		}
		return false
	}
	r.When = pred
	d.whens = append(d.whens, whenRef{key, v, pred})
	return true
}

// checkConfigKeys reports config keys a predicate names that the policy's
// config (the preset's merged with the file's) does not hold: evaluating
// such a predicate could only fail, so it is a load error, not a block on
// every call.
func (d *decoder) checkConfigKeys() {
	if len(d.whens) == 0 {
		return
	}
	var keys []string
	if b := d.base(); b != nil {
		for k := range b.Config {
			keys = append(keys, k)
		}
	}
	for k := range d.l.config {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, w := range d.whens {
		for _, ck := range w.pred.ConfigKeys() {
			if slices.Contains(keys, ck.Name) {
				continue
			}
			line, col := d.celPos(w.node, ck.Line, ck.Col)
			msg := fmt.Sprintf("config has no key %s", quote(ck.Name))
			if s := didYouMean(ck.Name, keys); s != "" {
				msg += s
			} else if len(keys) == 0 {
				msg += fmt.Sprintf("; add it under config:, e.g. config: {%s: ...}", ck.Name)
			} else {
				msg += "; its keys are " + andList(keys)
			}
			d.errs = append(d.errs, &Error{File: d.file, Line: line, Column: col, Key: w.key, Msg: msg})
		}
	}
}

// celPos maps a position CEL reports inside an expression (1-based line,
// 0-based column) to the file, when the expression is written so that the
// mapping is certain: on one line, plain or quoted, or in a literal block
// (|). Otherwise it is the position of the expression itself.
func (d *decoder) celPos(n *yaml.Node, line, col int) (int, int) {
	lines := strings.Split(n.Value, "\n")
	if line < 1 || line > len(lines) {
		return n.Line, n.Column
	}
	expr := []rune(lines[line-1])
	col = min(max(col, 0), len(expr))
	prefix := string(expr[:col])
	switch n.Style {
	case 0, yaml.SingleQuotedStyle, yaml.DoubleQuotedStyle:
		if len(lines) != 1 {
			break
		}
		q := 0
		if n.Style != 0 {
			q = 1
		}
		src := []rune(d.lineText(n.Line))
		start := n.Column - 1 + q
		if start <= len(src) && strings.HasPrefix(string(src[start:]), prefix) {
			return n.Line, n.Column + q + col
		}
	case yaml.LiteralStyle:
		fileLine := n.Line + line
		src := d.lineText(fileLine)
		if exprLine := lines[line-1]; strings.HasSuffix(src, exprLine) && strings.TrimSpace(src[:len(src)-len(exprLine)]) == "" {
			return fileLine, utf8.RuneCountInString(src[:len(src)-len(exprLine)]) + 1 + col
		}
	}
	return n.Line, n.Column
}

// lineText returns line n (1-based) of the file, without its newline.
func (d *decoder) lineText(n int) string {
	data := string(d.data)
	for i := 1; i < n; i++ {
		j := strings.IndexByte(data, '\n')
		if j < 0 {
			return ""
		}
		data = data[j+1:]
	}
	if j := strings.IndexByte(data, '\n'); j >= 0 {
		data = data[:j]
	}
	return strings.TrimSuffix(data, "\r")
}

func (d *decoder) args(key string, e entry, r *policy.Rule) bool {
	v := deref(e.v)
	if isNull(v) {
		d.errAt(e.k, key, "missing value; want constraints per argument, e.g. %s", exampleArgs)
		return false
	}
	if v.Kind != yaml.MappingNode {
		d.errAt(v, key, "want constraints per argument name, e.g. %s, got %s", exampleArgs, describe(v))
		return false
	}
	if len(v.Content) == 0 {
		d.errAt(v, key, "no argument constraints; write some, e.g. %s, or remove args", exampleArgs)
		return false
	}
	ok := true
	lines := map[string]int{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := deref(v.Content[i]), v.Content[i+1]
		if k.ShortTag() == "!!merge" {
			d.errAt(k, key, "merge keys (<<) are not supported in a policy; write the keys out")
			ok = false
			continue
		}
		if !isString(k) || k.Value == "" {
			d.errAt(k, key, "want an argument name such as path, got %s", describe(k))
			ok = false
			continue
		}
		name := k.Value
		akey := joinKey(key, name)
		if line, dup := lines[name]; dup {
			d.errAt(k, akey, "duplicate argument; it is already constrained on line %d, merge the two", line)
			ok = false
			continue
		}
		lines[name] = k.Line
		if strings.HasPrefix(name, "$") {
			d.errAt(k, akey, "args are keyed by top-level argument name; write %s, not %s", quote(strings.TrimLeft(name, "$.")), quote(name))
			ok = false
			continue
		}
		if slices.Contains(argLevel.keys, name) {
			// "args: {within: [...]}": the argument name is missing.
			d.errAt(k, akey, "%s is a constraint, not an argument name; write the argument first, e.g. args: {path: {%s: ...}}", quote(name), name)
			ok = false
			continue
		}
		a, aok := d.constraint(akey, name, entry{k, val})
		if aok {
			r.Args = append(r.Args, a)
		}
		ok = aok && ok
	}
	return ok
}

// constraint decodes one argument's constraints.
func (d *decoder) constraint(key, name string, e entry) (policy.ArgRule, bool) {
	a := policy.ArgRule{Name: name, Line: e.k.Line}
	v := deref(e.v)
	if isNull(v) || v.Kind != yaml.MappingNode {
		d.errAt(v, key, "want constraints such as {within: [\"~/projects\"]} or {one_of: [a, b]}, got %s", describe(v))
		return a, false
	}
	m, typos := d.mapping(v, key, argLevel)
	ok := len(m)*2 == len(v.Content)
	if len(m) == 0 && len(typos) == 0 && ok {
		d.errAt(v, key, "no constraints; use %s", orList(argLevel.keys))
		return a, false
	}
	if e, found := m["within"]; found {
		ok = d.within(joinKey(key, "within"), e, &a) && ok
	}
	for _, k := range []string{"deny", "allow"} {
		if e, found := m[k]; found {
			res, rok := d.regexps(joinKey(key, k), e)
			if k == "deny" {
				a.Deny = res
			} else {
				a.Allow = res
			}
			ok = rok && ok
		}
	}
	if e, found := m["one_of"]; found {
		ok = d.oneOf(joinKey(key, "one_of"), e, &a) && ok
	}
	if e, found := m["hosts"]; found {
		ok = d.hosts(joinKey(key, "hosts"), e, &a) && ok
	}
	if e, found := m["max_length"]; found {
		ok = d.maxLength(joinKey(key, "max_length"), e, &a) && ok
	}
	for _, k := range []string{"min", "max"} {
		if e, found := m[k]; found {
			f, fok := d.number(joinKey(key, k), e)
			if fok {
				if k == "min" {
					a.Min = &f
				} else {
					a.Max = &f
				}
			}
			ok = fok && ok
		}
	}
	if a.Min != nil && a.Max != nil && *a.Min > *a.Max {
		d.errAt(deref(m["min"].v), joinKey(key, "min"), "min %s is more than max %s, so no value could pass; swap them", strconv.FormatFloat(*a.Min, 'g', -1, 64), strconv.FormatFloat(*a.Max, 'g', -1, 64))
		ok = false
	}
	// Constraints that want different kinds of value cannot all hold.
	var str []string
	for _, k := range []string{"within", "deny", "allow", "hosts", "max_length"} {
		if _, found := m[k]; found {
			str = append(str, k)
		}
	}
	var num []string
	for _, k := range []string{"min", "max"} {
		if _, found := m[k]; found {
			num = append(num, k)
		}
	}
	if len(str) > 0 && len(num) > 0 {
		d.errAt(v, key, "%s check text and %s check numbers; one argument cannot be both, so every call would break the rule", andList(str), andList(num))
		ok = false
	}
	if _, w := m["within"]; w {
		if _, h := m["hosts"]; h {
			d.errAt(v, key, "within checks file paths and hosts checks URLs; one argument cannot be both, so every call would break the rule")
			ok = false
		}
	}
	return a, ok
}

// listItem is a string in a list and its key path.
type listItem struct {
	key string
	n   *yaml.Node
}

// stringList decodes a non-empty list of strings; item names one, for
// messages ("directory"), what all of them ("directories").
func (d *decoder) stringList(key string, e entry, item, what, example string) ([]listItem, bool) {
	v := deref(e.v)
	if isNull(v) {
		d.errAt(e.k, key, "missing value; want a list of %s, e.g. %s", what, example)
		return nil, false
	}
	if v.Kind != yaml.SequenceNode {
		hint := ""
		if isString(v) {
			hint = fmt.Sprintf(" (write [%s])", quoteYAML(v.Value))
		}
		d.errAt(v, key, "want a list of %s, e.g. %s, got %s%s", what, example, describe(v), hint)
		return nil, false
	}
	if len(v.Content) == 0 {
		d.errAt(v, key, "empty list; list at least one %s, e.g. %s, or remove the key", item, example)
		return nil, false
	}
	var out []listItem
	ok := true
	for i, n := range v.Content {
		n = deref(n)
		if !isString(n) {
			d.errAt(n, indexKey(key, i), "want %s, got %s", article(item), describe(n))
			ok = false
			continue
		}
		out = append(out, listItem{indexKey(key, i), n})
	}
	return out, ok
}

// article puts "a" or "an" before a noun phrase.
func article(s string) string {
	if s != "" && strings.ContainsRune("aeiou", rune(s[0])) {
		return "an " + s
	}
	return "a " + s
}

// quoteYAML writes s as a YAML flow scalar for a hint.
func quoteYAML(s string) string {
	if strings.ContainsAny(s, `'":{}[],#&*!|>%@\`+"`") || strings.TrimSpace(s) != s {
		return "'" + strings.ReplaceAll(s, "'", "''") + "'"
	}
	return s
}

func (d *decoder) within(key string, e entry, a *policy.ArgRule) bool {
	items, ok := d.stringList(key, e, "directory", "directories", `["~/projects", "/srv/data"]`)
	for _, it := range items {
		dir, err := expandWithin(it.n.Value)
		if err != nil {
			d.errAt(it.n, it.key, "%v", err)
			ok = false
			continue
		}
		a.Within = append(a.Within, dir)
		a.WithinText = append(a.WithinText, it.n.Value)
	}
	return ok
}

// expandWithin checks a within directory and makes it absolute and clean.
func expandWithin(p string) (string, error) {
	const fix = `within needs absolute paths or ~/…`
	switch {
	case p == "":
		return "", errors.New("empty path; " + fix)
	case strings.IndexByte(p, 0) >= 0:
		return "", errors.New("path contains a NUL byte")
	case p == "~" || strings.HasPrefix(p, "~/"):
		home, err := os.UserHomeDir()
		if err != nil || !filepath.IsAbs(home) {
			return "", fmt.Errorf("cannot expand %s: the home directory is not known ($HOME is not set); write an absolute path", quote(p))
		}
		return filepath.Join(home, p[1:]), nil
	case strings.HasPrefix(p, "~"):
		return "", fmt.Errorf("%s: %s; ~user is not expanded, write the absolute path", quote(p), fix)
	case !filepath.IsAbs(p):
		return "", fmt.Errorf("%s is relative; %s, e.g. %s", quote(p), fix, quote("~/"+strings.TrimPrefix(p, "./")))
	}
	return filepath.Clean(p), nil
}

func (d *decoder) regexps(key string, e entry) ([]*regexp.Regexp, bool) {
	items, ok := d.stringList(key, e, "regular expression", "regular expressions", `['(^|/)\.ssh(/|$)']`)
	var out []*regexp.Regexp
	for _, it := range items {
		re, err := regexp.Compile(it.n.Value)
		if err != nil {
			d.errAt(it.n, it.key, "%s", regexpError(err))
			ok = false
			continue
		}
		out = append(out, re)
	}
	return out, ok
}

// regexpError explains an RE2 syntax error, with a hint for the Perl
// features RE2 leaves out on purpose.
func regexpError(err error) string {
	var se *syntax.Error
	if !errors.As(err, &se) {
		return fmt.Sprintf("not a valid regular expression (%v)", err)
	}
	msg := fmt.Sprintf("not a valid RE2 regular expression: %s: `%s`", se.Code, se.Expr)
	switch {
	case se.Code == syntax.ErrInvalidPerlOp && (strings.HasPrefix(se.Expr, "(?=") || strings.HasPrefix(se.Expr, "(?!") || strings.HasPrefix(se.Expr, "(?<")):
		msg += "; RE2 has no lookahead or lookbehind (that is what keeps matching fast on any input)"
	case se.Code == syntax.ErrInvalidEscape && len(se.Expr) == 2 && se.Expr[1] >= '1' && se.Expr[1] <= '9':
		msg += "; RE2 has no backreferences (that is what keeps matching fast on any input)"
	}
	return msg
}

func (d *decoder) oneOf(key string, e entry, a *policy.ArgRule) bool {
	v := deref(e.v)
	const example = `["#eng-bots", "#alerts"]`
	if isNull(v) {
		d.errAt(e.k, key, "missing value; want a list of allowed values, e.g. %s", example)
		return false
	}
	if v.Kind != yaml.SequenceNode {
		d.errAt(v, key, "want a list of allowed values, e.g. %s, got %s", example, describe(v))
		return false
	}
	if len(v.Content) == 0 {
		d.errAt(v, key, "empty list; no value could pass, so list at least one (or use a rule with when: 'true' to refuse every call)")
		return false
	}
	ok := true
	for i, item := range v.Content {
		item = deref(item)
		ikey := indexKey(key, i)
		if item.Kind != yaml.ScalarNode {
			d.errAt(item, ikey, "want a string, number or true/false, got %s", describe(item))
			ok = false
			continue
		}
		switch item.ShortTag() {
		case "!!str":
			a.OneOf = append(a.OneOf, item.Value)
			continue
		case "!!bool":
			var b bool
			if item.Decode(&b) == nil {
				a.OneOf = append(a.OneOf, b)
				continue
			}
		case "!!int", "!!float":
			var f float64
			if item.Decode(&f) == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
				a.OneOf = append(a.OneOf, f)
				continue
			}
		}
		d.errAt(item, ikey, "want a string, number or true/false, got %s", describe(item))
		ok = false
	}
	return ok
}

func (d *decoder) hosts(key string, e entry, a *policy.ArgRule) bool {
	v := deref(e.v)
	const example = `{allow: ["corp.example", "*.corp.example"]}`
	if isNull(v) || v.Kind != yaml.MappingNode {
		hint := ""
		if v.Kind == yaml.SequenceNode {
			hint = " (put the list under allow: or deny:)"
		}
		d.errAt(v, key, "want allow and/or deny host lists, e.g. %s, got %s%s", example, describe(v), hint)
		return false
	}
	m, typos := d.mapping(v, key, hostsLevel)
	ok := len(m)*2 == len(v.Content)
	if len(m) == 0 && len(typos) == 0 && ok {
		d.errAt(v, key, "no host lists; want %s", example)
		return false
	}
	h := &policy.HostRule{}
	for _, k := range []string{"allow", "deny"} {
		e, found := m[k]
		if !found {
			continue
		}
		hkey := joinKey(key, k)
		items, lok := d.stringList(hkey, e, "host pattern", "host patterns", `["corp.example", "*.corp.example"]`)
		ok = lok && ok
		for _, it := range items {
			p, err := compileHostPattern(it.n.Value)
			if err != nil {
				d.errAt(it.n, it.key, "%v", err)
				ok = false
				continue
			}
			if k == "allow" {
				h.Allow = append(h.Allow, p)
			} else {
				h.Deny = append(h.Deny, p)
			}
		}
	}
	a.Hosts = h
	return ok
}

func (d *decoder) maxLength(key string, e entry, a *policy.ArgRule) bool {
	v := deref(e.v)
	const want = "a whole number of characters of at least 1, e.g. 200"
	if isNull(v) {
		d.errAt(e.k, key, "missing value; want %s", want)
		return false
	}
	n, ok := d.integer(key, v, want)
	if !ok {
		return false
	}
	if n < 1 {
		d.errAt(v, key, "must be at least 1, got %d; remove max_length for no limit", n)
		return false
	}
	a.MaxLength = n
	return true
}

// number decodes a finite number for min and max.
func (d *decoder) number(key string, e entry) (float64, bool) {
	v := deref(e.v)
	if isNull(v) {
		d.errAt(e.k, key, "missing value; want a number, e.g. 100")
		return 0, false
	}
	if v.Kind == yaml.ScalarNode && (v.ShortTag() == "!!int" || v.ShortTag() == "!!float") {
		var f float64
		if v.Decode(&f) == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
			return f, true
		}
		d.errAt(v, key, "want a finite number, got %s", describe(v))
		return 0, false
	}
	hint := ""
	if isString(v) {
		var f float64
		if yaml.Unmarshal([]byte(v.Value), &f) == nil {
			hint = "; drop the quotes"
		}
	}
	d.errAt(v, key, "want a number, e.g. 100, got %s%s", describe(v), hint)
	return 0, false
}
