package policyfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/weir-sec/weir/internal/flow"
	"github.com/weir-sec/weir/internal/policy"
)

// CurrentVersion is the only policy format version this package reads.
const CurrentVersion = 1

// MaxFileSize bounds the policy files [Load] reads. Real policies are a few
// kilobytes; anything near this is the wrong file.
const MaxFileSize = 1 << 20

// FileName is the policy file looked for in $WEIR_HOME.
const FileName = "policy.yaml"

// Parse compiles a policy file's contents, layered on the preset its
// `preset:` key names (default when it names none): keys the file sets
// replace the preset's (flow keys one by one, config keys one by one), keys
// it leaves out keep the preset's values, and its tools, rules and
// allow_flows entries come after the preset's. An empty file (or one holding
// only comments) is the default preset. file names the policy in errors and
// in [Policy.Source]; it is not read.
//
// On failure the error is an [ErrorList] holding every problem found, sorted
// by line.
func Parse(file string, data []byte) (*policy.Policy, error) {
	l, errs := decode(file, data)
	if len(errs) > 0 {
		return nil, ErrorList(errs)
	}
	base, err := builtin(l.presetName())
	if err != nil {
		return nil, err
	}
	p := l.apply(base, file)
	p.Text = data
	return p, nil
}

// Load reads and parses a policy file (see [Parse]).
func Load(file string) (*policy.Policy, error) {
	data, err := readFile(file)
	if err != nil {
		return nil, err
	}
	return Parse(file, data)
}

// Resolve finds the policy a proxy runs with: the file given by --policy
// when flagPath is set; else $WEIR_HOME/policy.yaml when it exists; else the
// embedded default preset. A policy file that exists but cannot be read or
// parsed is an error, never a silent fall back to the default.
func Resolve(flagPath, weirHome string) (*policy.Policy, error) {
	if flagPath != "" {
		return Load(flagPath)
	}
	if weirHome != "" {
		file := filepath.Join(weirHome, FileName)
		_, err := os.Stat(file)
		if err == nil {
			return Load(file)
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, ErrorList{readError(file, err)}
		}
	}
	return Preset(defaultPreset)
}

// AskPreset is the preset that decides, when no policy file is given, the
// calls of a client that can put an escalation to a person: with a person
// answering, integrity stops what the default cannot, and leaves the
// user's own work alone (README, "Human approval").
const AskPreset = "integrity"

// ResolveAsk is Resolve, and the ask policy: the policy for the calls of a
// client that can ask a person (elicitation), or nil when a policy file
// decides every call. With no policy file it is the AskPreset.
func ResolveAsk(flagPath, weirHome string) (pol, ask *policy.Policy, err error) {
	if pol, err = Resolve(flagPath, weirHome); err != nil {
		return nil, nil, err
	}
	if pol.Source != "preset:"+defaultPreset {
		return pol, nil, nil
	}
	ask, err = Preset(AskPreset)
	return pol, ask, err
}

func readFile(file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, ErrorList{readError(file, err)}
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return nil, ErrorList{{File: file, Msg: "is a directory; give the path of a policy file"}}
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, ErrorList{readError(file, err)}
	}
	if len(data) > MaxFileSize {
		return nil, ErrorList{{File: file, Msg: fmt.Sprintf("is larger than %d KiB; a policy is a short YAML file, check the path", MaxFileSize>>10)}}
	}
	return data, nil
}

func readError(file string, err error) *Error {
	cause := err
	if pe, ok := err.(*fs.PathError); ok {
		cause = pe.Err // the path is already in File
	}
	return &Error{File: file, Msg: fmt.Sprintf("cannot read the policy file (%v); check the path and its permissions", cause), err: err}
}

// layer is what one policy file sets; nil fields are keys it leaves out.
type layer struct {
	version         *int
	mode            *policy.Mode
	preset          *string
	defaultAction   *policy.DefaultAction
	redactSecrets   *bool
	exfiltration    *flow.Verdict
	trifecta        *flow.Verdict
	integrity       *flow.Verdict
	taintedArgs     *flow.Verdict
	minMatches      *int
	apprTimeout     *time.Duration
	apprTTL         *time.Duration
	recEnabled      *bool
	recRetention    *int
	stateRetention  *int
	sessionMaxBytes *int64
	auditMaxSize    *int64
	scratch         scratchLayer
	allowFlows      []policy.FlowRule
	config          map[string]any
	tools           []policy.ToolEntry
	rules           []policy.Rule
}

// scratchLayer is what a file's scratch: sets.
type scratchLayer struct {
	tools           []policy.Glob
	minRows         *int
	maxPayloadBytes *int64
	maxSessionBytes *int64
	maxSessionCalls *int
}

// presetName is the preset the layer builds on.
func (l *layer) presetName() string {
	if l.preset != nil {
		return *l.preset
	}
	return defaultPreset
}

// apply layers l over base and returns the result; base is not changed.
// Every predicate, the base's included, is bound to the merged config: a
// file can tune a preset's rules by setting the config keys they read.
func (l *layer) apply(base *policy.Policy, source string) *policy.Policy {
	p := base.Clone()
	p.Source = source
	set(&p.Version, l.version)
	set(&p.Mode, l.mode)
	set(&p.Preset, l.preset)
	set(&p.DefaultAction, l.defaultAction)
	set(&p.RedactSecrets, l.redactSecrets)
	set(&p.Flow.Exfiltration, l.exfiltration)
	set(&p.Flow.Trifecta, l.trifecta)
	set(&p.Flow.Integrity, l.integrity)
	set(&p.Flow.TaintedArgs, l.taintedArgs)
	set(&p.Flow.MinMatches, l.minMatches)
	set(&p.Approval.Timeout, l.apprTimeout)
	set(&p.Approval.TTL, l.apprTTL)
	set(&p.Record.Enabled, l.recEnabled)
	set(&p.Record.RetentionDays, l.recRetention)
	set(&p.StateRetentionDays, l.stateRetention)
	set(&p.SessionMaxBytes, l.sessionMaxBytes)
	set(&p.AuditMaxSize, l.auditMaxSize)
	p.Scratch.Tools = append(p.Scratch.Tools, l.scratch.tools...)
	set(&p.Scratch.MinRows, l.scratch.minRows)
	set(&p.Scratch.MaxPayloadBytes, l.scratch.maxPayloadBytes)
	set(&p.Scratch.MaxSessionBytes, l.scratch.maxSessionBytes)
	set(&p.Scratch.MaxSessionCalls, l.scratch.maxSessionCalls)
	p.Flow.AllowFlows = append(p.Flow.AllowFlows, l.allowFlows...)
	p.Tools = append(p.Tools, l.tools...)
	if p.Config == nil {
		p.Config = map[string]any{}
	}
	maps.Copy(p.Config, l.config)
	p.Rules = append(p.Rules, l.rules...)
	p.BindConfig()
	return p
}

func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// missing lists the scalar keys l leaves out, by key path. Presets must set
// every key so that reading one tells the whole story.
func (l *layer) missing() []string {
	var out []string
	for _, k := range []struct {
		name string
		set  bool
	}{
		{"version", l.version != nil},
		{"mode", l.mode != nil},
		{"default_action", l.defaultAction != nil},
		{"redact_secrets", l.redactSecrets != nil},
		{"flow.exfiltration", l.exfiltration != nil},
		{"flow.trifecta", l.trifecta != nil},
		{"flow.integrity", l.integrity != nil},
		{"flow.tainted_args", l.taintedArgs != nil},
		{"flow.min_matches", l.minMatches != nil},
		{"approval.timeout", l.apprTimeout != nil},
		{"approval.ttl", l.apprTTL != nil},
		{"record.enabled", l.recEnabled != nil},
		{"record.retention_days", l.recRetention != nil},
		{"state.retention_days", l.stateRetention != nil},
		{"session.max_bytes", l.sessionMaxBytes != nil},
		{"audit.max_size", l.auditMaxSize != nil},
	} {
		if !k.set {
			out = append(out, k.name)
		}
	}
	return out
}

// A level is one kind of mapping in the policy and the keys valid in it.
type level struct {
	where string // where its keys are written, for "belongs ..." hints
	keys  []string
}

var (
	topLevel        = &level{where: "at the top level", keys: []string{"version", "mode", "preset", "default_action", "redact_secrets", "flow", "approval", "record", "state", "session", "audit", "scratch", "config", "tools", "rules"}}
	flowLevel       = &level{where: `under "flow:"`, keys: []string{"exfiltration", "trifecta", "integrity", "tainted_args", "min_matches", "allow_flows"}}
	toolLevel       = &level{where: `in a "tools:" entry`, keys: []string{"match", "labels", "declassify"}}
	declassifyLevel = &level{where: `under "declassify:"`, keys: []string{"schema", "as"}}
	ruleLevel       = &level{where: `in a "rules:" entry`, keys: []string{"id", "match", "args", "when", "rate_limit", "action", "because"}}
	argLevel        = &level{where: `in an argument's constraints, under "args:"`, keys: []string{"within", "deny", "allow", "one_of", "hosts", "max_length", "min", "max"}}
	hostsLevel      = &level{where: `under "hosts:"`, keys: []string{"allow", "deny"}}
	apprLevel       = &level{where: `under "approval:"`, keys: []string{"timeout", "ttl"}}
	recLevel        = &level{where: `under "record:"`, keys: []string{"enabled", "retention_days"}}
	auditLevel      = &level{where: `under "audit:"`, keys: []string{"max_size"}}
	stateLevel      = &level{where: `under "state:"`, keys: []string{"retention_days"}}
	sessionLevel    = &level{where: `under "session:"`, keys: []string{"max_bytes"}}
	scratchLevel    = &level{where: `under "scratch:"`, keys: []string{"tools", "min_rows", "max_payload_bytes", "max_session_bytes", "max_session_calls"}}

	levels = []*level{topLevel, flowLevel, apprLevel, recLevel, stateLevel, sessionLevel, auditLevel, scratchLevel, toolLevel, declassifyLevel, ruleLevel, argLevel, hostsLevel}
)

const (
	exampleTool = `{match: "notes:*", labels: [private]}`
	exampleFlow = `"notes:* -> slack:post_message"`
	actionList  = "allow, warn, block or escalate"
	maxErrors   = 100 // report at most this many problems; the first ones matter
)

// decoder walks a policy's YAML node tree, filling a layer and collecting
// every problem with its position.
type decoder struct {
	file     string
	data     []byte
	isPreset bool // decoding an embedded preset: it has no base
	errs     []*Error
	l        layer

	presetNode *yaml.Node // the preset: value, when valid
	ruleIDs    map[string]int
	whens      []whenRef // every compiled predicate, for the config check
}

// whenRef is a predicate and where it was written.
type whenRef struct {
	key  string
	node *yaml.Node
	pred *policy.Predicate
}

// decode parses one user policy document into a layer.
func decode(file string, data []byte) (*layer, []*Error) {
	return decodeAs(file, data, false)
}

// decodeAs parses one policy document into a layer; isPreset says it is an
// embedded preset, which layers on nothing.
func decodeAs(file string, data []byte, isPreset bool) (*layer, []*Error) {
	d := &decoder{file: file, data: data, isPreset: isPreset}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := safeDecode(dec, &doc); err != nil {
		if err == io.EOF { // empty, or only comments
			return &d.l, nil
		}
		return nil, []*Error{d.syntaxError(err)}
	}
	var extra yaml.Node
	switch err := safeDecode(dec, &extra); {
	case err == io.EOF:
	case err != nil:
		d.errs = append(d.errs, d.syntaxError(err))
	default:
		d.errAt(&extra, "", `a policy file holds one YAML document; remove this "---" and what follows, or merge it into the first document`)
	}
	d.document(&doc)
	sortErrors(d.errs)
	if len(d.errs) > maxErrors {
		d.errs = d.errs[:maxErrors]
	}
	return &d.l, d.errs
}

// safeDecode reads the next YAML document. The YAML parser is not ours: a
// panic in it must not take the proxy down (rule 5), so it becomes an error.
func safeDecode(dec *yaml.Decoder, n *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: cannot parse (%v)", r)
		}
	}()
	return dec.Decode(n)
}

var (
	yamlLineRE   = regexp.MustCompile(`(?s)^yaml: line (\d+): (.*)$`)
	yamlAnchorRE = regexp.MustCompile(`^yaml: unknown anchor '(.*)' referenced$`)
	wholeRE      = regexp.MustCompile(`^[-+]?[0-9]+$`)
)

// syntaxError turns a YAML parser error into an *Error that keeps the
// parser's line number.
func (d *decoder) syntaxError(err error) *Error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	e := &Error{File: d.file, err: err}
	hint := "check the indentation and quoting near this line"
	if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
		msg = m[2]
		if lineIndentHasTab(d.data, e.Line) {
			hint = "indent with spaces; YAML does not allow tabs"
		}
	} else if m := yamlAnchorRE.FindStringSubmatch(err.Error()); m != nil {
		// The parser gives no position here; the first use is the culprit.
		e.Line, e.Column = position(d.data, "*"+m[1])
		msg = fmt.Sprintf("alias *%s names no anchor", m[1])
		hint = fmt.Sprintf("define it first with &%s, or remove the *", m[1])
	} else {
		// Encoding problems come without a position; point at the first
		// byte that is not text.
		hint = "save the file as UTF-8 text"
		if i := firstNonText(d.data); i >= 0 {
			e.Line, e.Column = offsetPosition(d.data, i)
		}
	}
	e.Msg = fmt.Sprintf("invalid YAML: %s; %s", msg, hint)
	return e
}

// position returns the 1-based line and column of the first s in data, or
// 0, 0 when it is not there.
func position(data []byte, s string) (line, col int) {
	i := bytes.Index(data, []byte(s))
	if i < 0 {
		return 0, 0
	}
	return offsetPosition(data, i)
}

// offsetPosition returns the 1-based line and column of byte offset i.
func offsetPosition(data []byte, i int) (line, col int) {
	before := data[:i]
	line = bytes.Count(before, []byte("\n")) + 1
	col = utf8.RuneCount(before[bytes.LastIndexByte(before, '\n')+1:]) + 1
	return line, col
}

// firstNonText returns the offset of the first byte of data that is not
// UTF-8 text (invalid UTF-8, or a control character other than tab, line
// feed and carriage return), or -1.
func firstNonText(data []byte) int {
	for i := 0; i < len(data); {
		r, w := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && w == 1 || r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0x7f {
			return i
		}
		i += w
	}
	return -1
}

func lineIndentHasTab(data []byte, line int) bool {
	for i := 1; i < line; i++ {
		j := bytes.IndexByte(data, '\n')
		if j < 0 {
			return false
		}
		data = data[j+1:]
	}
	for _, c := range data {
		switch c {
		case '\t':
			return true
		case ' ':
			continue
		}
		return false
	}
	return false
}

func (d *decoder) errAt(n *yaml.Node, key, format string, args ...any) {
	e := &Error{File: d.file, Key: key, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line, e.Column = n.Line, n.Column
	}
	d.errs = append(d.errs, e)
}

// deref follows an alias to the node it names.
func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

func isString(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str"
}

// describe says what a node holds, for "got ..." messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return "nothing"
		case "!!str":
			return "the string " + quote(n.Value)
		case "!!int", "!!float":
			return "the number " + n.Value
		case "!!bool":
			return n.Value
		}
		return n.ShortTag() + " " + quote(n.Value)
	}
	return "a YAML document"
}

func joinKey(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func indexKey(path string, i int) string {
	return path + "[" + strconv.Itoa(i) + "]"
}

// entry is one key and its value in a mapping.
type entry struct{ k, v *yaml.Node }

// mapping checks the keys of a mapping node against lvl and returns the
// valid ones. Unknown, duplicate and malformed keys are reported. typos holds
// the valid keys suggested for unknown ones, so that a misspelt required key
// is not also reported missing.
func (d *decoder) mapping(n *yaml.Node, path string, lvl *level) (out map[string]entry, typos map[string]bool) {
	out = make(map[string]entry, len(n.Content)/2)
	typos = map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.errAt(k, path, "a key must be a plain name such as %q, not %s", lvl.keys[0], describe(k))
			continue
		}
		name := k.Value
		key := joinKey(path, name)
		if k.ShortTag() == "!!merge" {
			d.errAt(k, path, "merge keys (<<) are not supported in a policy; write the keys out")
			continue
		}
		if prev, dup := out[name]; dup {
			d.errAt(k, key, "duplicate key; it is already set on line %d, keep one", prev.k.Line)
			continue
		}
		if !slices.Contains(lvl.keys, name) {
			if m := suggest(name, lvl.keys); m != "" {
				typos[m] = true
				d.errAt(k, key, "unknown key %s; did you mean %q?", quote(name), m)
			} else {
				d.errAt(k, key, "%s", unknownKey(name, lvl))
			}
			continue
		}
		out[name] = entry{k, v}
	}
	return out, typos
}

// unknownKey explains a key that is not valid here and not a likely typo.
func unknownKey(name string, lvl *level) string {
	for _, other := range levels {
		if other != lvl && slices.Contains(other.keys, name) {
			return fmt.Sprintf("unknown key %s here; it belongs %s", quote(name), other.where)
		}
	}
	return fmt.Sprintf("unknown key %s; valid keys here are %s", quote(name), andList(lvl.keys))
}

// document decodes the top-level mapping.
func (d *decoder) document(doc *yaml.Node) {
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return
	}
	top := deref(doc.Content[0])
	if isNull(top) { // "---" alone, or "null": same as an empty file
		return
	}
	if top.Kind != yaml.MappingNode {
		d.errAt(top, "", "a policy is a mapping of keys (%s), got %s", strings.Join(topLevel.keys, ", "), describe(top))
		return
	}
	m, typos := d.mapping(top, "", topLevel)
	if e, ok := m["version"]; ok {
		d.version(e)
	} else if !typos["version"] {
		d.errAt(top, "version", "missing; start the file with \"version: %d\"", CurrentVersion)
	}
	if e, ok := m["preset"]; ok {
		d.preset(e)
	}
	if e, ok := m["mode"]; ok {
		if i, ok := d.enum("mode", e, "mode", policy.ModeNames()); ok {
			v := policy.Mode(i)
			d.l.mode = &v
		}
	}
	if e, ok := m["default_action"]; ok {
		if v := deref(e.v); isString(v) && slices.Contains([]string{"block", "escalate", "warn"}, v.Value) {
			d.errAt(v, "default_action", "%s is a flow action, not a default action; want allow or deny (deny refuses every tool that no tools: entry matches)", quote(v.Value))
		} else if i, ok := d.enum("default_action", e, "default action", policy.DefaultActionNames()); ok {
			v := policy.DefaultAction(i)
			d.l.defaultAction = &v
		}
	}
	if e, ok := m["redact_secrets"]; ok {
		if v, ok := d.boolean("redact_secrets", deref(e.v)); ok {
			d.l.redactSecrets = &v
		}
	}
	if e, ok := m["flow"]; ok {
		d.flow(e)
	}
	if e, ok := m["record"]; ok {
		d.record(e)
	}
	if e, ok := m["state"]; ok {
		d.state(e)
	}
	if e, ok := m["session"]; ok {
		d.session(e)
	}
	if e, ok := m["audit"]; ok {
		d.auditSection(e)
	}
	if e, ok := m["scratch"]; ok {
		d.scratch(e)
	}
	if e, ok := m["approval"]; ok {
		d.approval(e)
	}
	if e, ok := m["config"]; ok {
		d.config(e)
	}
	if e, ok := m["tools"]; ok {
		d.tools(e)
	}
	if e, ok := m["rules"]; ok {
		d.rules(e)
	}
	d.checkConfigKeys()
}

func (d *decoder) version(e entry) {
	v := deref(e.v)
	if isNull(v) {
		d.errAt(e.k, "version", "missing value; write \"version: %d\"", CurrentVersion)
		return
	}
	n, ok := d.integer("version", v, fmt.Sprintf("the number %d", CurrentVersion))
	if !ok {
		return
	}
	if n != CurrentVersion {
		d.errAt(v, "version", "version %d is not supported; this Weir reads version %d", n, CurrentVersion)
		return
	}
	d.l.version = &n
}

// integer decodes a whole number; want describes what is expected.
func (d *decoder) integer(key string, v *yaml.Node, want string) (int, bool) {
	var n int
	if v.Kind == yaml.ScalarNode && v.ShortTag() == "!!int" {
		if v.Decode(&n) != nil {
			d.errAt(v, key, "the number %s is too large; want %s", v.Value, want)
			return 0, false
		}
		return n, true
	}
	hint := ""
	if _, err := strconv.Atoi(strings.TrimSpace(v.Value)); err == nil && isString(v) {
		hint = "; drop the quotes"
	} else if v.Kind == yaml.ScalarNode && v.ShortTag() == "!!float" && wholeRE.MatchString(v.Value) {
		d.errAt(v, key, "the number %s is too large; want %s", v.Value, want)
		return 0, false
	}
	d.errAt(v, key, "want %s, got %s%s", want, describe(v), hint)
	return 0, false
}

// boolean decodes true or false.
func (d *decoder) boolean(key string, v *yaml.Node) (bool, bool) {
	if v.Kind == yaml.ScalarNode && v.ShortTag() == "!!bool" {
		var b bool
		if v.Decode(&b) == nil {
			return b, true
		}
	}
	hint := ""
	if l := strings.ToLower(strings.TrimSpace(v.Value)); isString(v) && (l == "true" || l == "false") {
		hint = "; drop the quotes"
	}
	d.errAt(v, key, "want true or false, got %s%s", describe(v), hint)
	return false, false
}

// enum decodes a string that must be one of names and returns its index.
func (d *decoder) enum(key string, e entry, what string, names []string) (int, bool) {
	v := deref(e.v)
	want := orList(names)
	if isNull(v) {
		d.errAt(e.k, key, "missing value; want %s", want)
		return 0, false
	}
	if !isString(v) {
		d.errAt(v, key, "want %s, got %s", want, describe(v))
		return 0, false
	}
	if i := slices.Index(names, v.Value); i >= 0 {
		return i, true
	}
	d.errAt(v, key, "unknown %s %s; want %s%s", what, quote(v.Value), want, didYouMean(v.Value, names))
	return 0, false
}

func (d *decoder) flow(e entry) {
	v := deref(e.v)
	if isNull(v) { // "flow:" with nothing under it sets nothing
		return
	}
	if v.Kind != yaml.MappingNode {
		d.errAt(v, "flow", "want a mapping of flow settings, e.g. {exfiltration: block, trifecta: warn}, got %s", describe(v))
		return
	}
	m, _ := d.mapping(v, "flow", flowLevel)
	for _, a := range []struct {
		name string
		dst  **flow.Verdict
	}{
		{"exfiltration", &d.l.exfiltration},
		{"trifecta", &d.l.trifecta},
		{"integrity", &d.l.integrity},
		{"tainted_args", &d.l.taintedArgs},
	} {
		if e, ok := m[a.name]; ok {
			if verdict, ok := d.action("flow."+a.name, e); ok {
				*a.dst = &verdict
			}
		}
	}
	if e, ok := m["min_matches"]; ok {
		d.minMatches(e)
	}
	if e, ok := m["allow_flows"]; ok {
		d.allowFlows(e)
	}
}

// Bounds of the approval durations: a question nobody can answer in a
// second is no question, and a request open for days is a standing grant.
var (
	apprTimeoutBounds = [2]time.Duration{time.Second, time.Hour}
	apprTTLBounds     = [2]time.Duration{10 * time.Second, 24 * time.Hour}
)

func (d *decoder) approval(e entry) {
	m, ok := d.section(e, "approval", "{timeout: 2m, ttl: 10m}", apprLevel)
	if !ok {
		return
	}
	for _, a := range []struct {
		name   string
		dst    **time.Duration
		bounds [2]time.Duration
		what   string
	}{
		{"timeout", &d.l.apprTimeout, apprTimeoutBounds, "how long a call waits for a person's answer"},
		{"ttl", &d.l.apprTTL, apprTTLBounds, "how long an approval request stays open"},
	} {
		if e, ok := m[a.name]; ok {
			if dur, ok := d.duration("approval."+a.name, e, a.bounds, a.what); ok {
				*a.dst = &dur
			}
		}
	}
}

// section decodes a top-level mapping of scalar settings (approval:,
// record:, audit:): its valid keys, or false when it is absent or not a
// mapping (reported).
func (d *decoder) section(e entry, key, example string, lvl *level) (map[string]entry, bool) {
	v := deref(e.v)
	if isNull(v) {
		return nil, false
	}
	if v.Kind != yaml.MappingNode {
		d.errAt(v, key, "want a mapping, e.g. %s, got %s", example, describe(v))
		return nil, false
	}
	m, _ := d.mapping(v, key, lvl)
	return m, true
}

func (d *decoder) record(e entry) {
	m, ok := d.section(e, "record", "{enabled: true, retention_days: 30}", recLevel)
	if !ok {
		return
	}
	if e, ok := m["enabled"]; ok {
		if b, ok := d.boolean("record.enabled", e.v); ok {
			d.l.recEnabled = &b
		}
	}
	if e, ok := m["retention_days"]; ok {
		d.retentionDays("record.retention_days", e, &d.l.recRetention)
	}
}

// retentionDays decodes a number of days from 1 to 3650 into dst.
func (d *decoder) retentionDays(key string, e entry, dst **int) {
	const want = "a number of days from 1 to 3650"
	n, ok := d.integer(key, e.v, want)
	switch {
	case !ok:
	case n < 1 || n > 3650:
		d.errAt(e.v, key, "%d is out of range; want %s", n, want)
	default:
		*dst = &n
	}
}

func (d *decoder) state(e entry) {
	m, ok := d.section(e, "state", "{retention_days: 30}", stateLevel)
	if !ok {
		return
	}
	if e, ok := m["retention_days"]; ok {
		d.retentionDays("state.retention_days", e, &d.l.stateRetention)
	}
}

// The bounds of session.max_bytes: below a megabyte a session of a few
// pages would be judged strictly; above 64 GiB is no bound on a laptop.
const (
	minSessionBytes = 1 << 20
	maxSessionBytes = 64 << 30
)

func (d *decoder) session(e entry) {
	m, ok := d.section(e, "session", "{max_bytes: 64MiB}", sessionLevel)
	if !ok {
		return
	}
	if e, ok := m["max_bytes"]; ok {
		sv := deref(e.v)
		want := fmt.Sprintf("a size such as 64MiB or 1GiB, from %s to %s", FormatSize(minSessionBytes), FormatSize(maxSessionBytes))
		n, err := ParseSize(sv.Value)
		switch {
		case sv.Kind != yaml.ScalarNode || err != nil:
			d.errAt(sv, "session.max_bytes", "want %s, got %s", want, describe(sv))
		case n < minSessionBytes || n > maxSessionBytes:
			d.errAt(sv, "session.max_bytes", "%s is out of range; want %s", sv.Value, want)
		default:
			d.l.sessionMaxBytes = &n
		}
	}
}

func (d *decoder) auditSection(e entry) {
	m, ok := d.section(e, "audit", "{max_size: 64MiB}", auditLevel)
	if !ok {
		return
	}
	if e, ok := m["max_size"]; ok {
		sv := deref(e.v)
		n, err := ParseSize(sv.Value)
		if sv.Kind != yaml.ScalarNode || err != nil {
			d.errAt(sv, "audit.max_size", "want a size such as 64MiB, 512KiB or 1GB, or 0 (or off) for no rotation, got %s", describe(sv))
			return
		}
		d.l.auditMaxSize = &n
	}
}

// The bounds of the scratch: settings.
const (
	maxScratchRows         = 1_000_000
	minScratchPayload      = 1 << 10
	maxScratchPayload      = 64 << 20
	minScratchSession      = 1 << 20
	maxScratchSession      = 4 << 30
	maxScratchSessionCalls = 10_000
)

func (d *decoder) scratch(e entry) {
	m, ok := d.section(e, "scratch", `{tools: ["github:list_*"], min_rows: 20}`, scratchLevel)
	if !ok {
		return
	}
	if e, ok := m["tools"]; ok {
		v := deref(e.v)
		switch {
		case isNull(v):
			d.errAt(e.k, "scratch.tools", `missing value; want a list of tool patterns whose results become tables, e.g. ["github:list_*"]`)
		case v.Kind != yaml.SequenceNode:
			hint := ""
			if isString(v) {
				hint = fmt.Sprintf(` (write [%q])`, v.Value)
			}
			d.errAt(v, "scratch.tools", `want a list of tool patterns, e.g. ["github:list_*"], got %s%s`, describe(v), hint)
		default:
			for i, item := range v.Content {
				if g, ok := d.glob(indexKey("scratch.tools", i), entry{k: e.k, v: item}); ok {
					d.l.scratch.tools = append(d.l.scratch.tools, g)
				}
			}
		}
	}
	for _, c := range []struct {
		key      string
		min, max int
		dst      **int
	}{
		{"min_rows", 1, maxScratchRows, &d.l.scratch.minRows},
		{"max_session_calls", 1, maxScratchSessionCalls, &d.l.scratch.maxSessionCalls},
	} {
		if e, ok := m[c.key]; ok {
			want := fmt.Sprintf("a whole number from %d to %d", c.min, c.max)
			if n, ok := d.integer("scratch."+c.key, deref(e.v), want); ok {
				if n < c.min || n > c.max {
					d.errAt(deref(e.v), "scratch."+c.key, "%d is out of range; want %s", n, want)
				} else {
					*c.dst = &n
				}
			}
		}
	}
	for _, c := range []struct {
		key      string
		min, max int64
		dst      **int64
	}{
		{"max_payload_bytes", minScratchPayload, maxScratchPayload, &d.l.scratch.maxPayloadBytes},
		{"max_session_bytes", minScratchSession, maxScratchSession, &d.l.scratch.maxSessionBytes},
	} {
		if e, ok := m[c.key]; ok {
			sv := deref(e.v)
			want := fmt.Sprintf("a size such as 1MiB or 512KiB, from %s to %s", FormatSize(c.min), FormatSize(c.max))
			n, err := ParseSize(sv.Value)
			switch {
			case sv.Kind != yaml.ScalarNode || err != nil:
				d.errAt(sv, "scratch."+c.key, "want %s, got %s", want, describe(sv))
			case n < c.min || n > c.max:
				d.errAt(sv, "scratch."+c.key, "%s is out of range; want %s", sv.Value, want)
			default:
				*c.dst = &n
			}
		}
	}
	if s := d.l.scratch; s.maxPayloadBytes != nil && s.maxSessionBytes != nil && *s.maxPayloadBytes > *s.maxSessionBytes {
		d.errAt(deref(m["max_payload_bytes"].v), "scratch.max_payload_bytes", "is larger than max_session_bytes (%s): a result that size could never be stored", FormatSize(*s.maxSessionBytes))
	}
}

// duration decodes a Go duration ("90s", "2m", "1h30m") within bounds.
func (d *decoder) duration(key string, e entry, bounds [2]time.Duration, what string) (time.Duration, bool) {
	v := deref(e.v)
	want := fmt.Sprintf("a duration such as \"90s\" or \"2m\" (%s), from %s to %s", what, bounds[0], bounds[1])
	if isNull(v) {
		d.errAt(e.k, key, "missing value; want %s", want)
		return 0, false
	}
	if v.Kind != yaml.ScalarNode {
		d.errAt(v, key, "want %s, got %s", want, describe(v))
		return 0, false
	}
	dur, err := time.ParseDuration(strings.TrimSpace(v.Value))
	if err != nil {
		hint := ""
		if _, nerr := strconv.Atoi(strings.TrimSpace(v.Value)); nerr == nil {
			hint = fmt.Sprintf("; a number needs a unit, e.g. \"%ss\"", strings.TrimSpace(v.Value))
		}
		d.errAt(v, key, "%s is not a duration; want %s%s", quote(v.Value), want, hint)
		return 0, false
	}
	if dur < bounds[0] || dur > bounds[1] {
		d.errAt(v, key, "%s is out of range; want %s", dur, want)
		return 0, false
	}
	return dur, true
}

// action decodes a flow action: allow, warn, block or escalate.
func (d *decoder) action(key string, e entry) (flow.Verdict, bool) {
	v := deref(e.v)
	if isNull(v) {
		d.errAt(e.k, key, "missing value; want %s", actionList)
		return 0, false
	}
	if !isString(v) {
		d.errAt(v, key, "want an action (%s), got %s", actionList, describe(v))
		return 0, false
	}
	verdict, err := flow.ParseVerdict(v.Value)
	if err == nil && slices.Contains(policy.FlowActions(), verdict) {
		return verdict, true
	}
	if err == nil {
		d.errAt(v, key, "%s is not a flow action; want %s", quote(v.Value), actionList)
		return 0, false
	}
	actions := policy.FlowActions()
	names := make([]string, len(actions))
	for i, a := range actions {
		names[i] = a.String()
	}
	hint := didYouMean(v.Value, names)
	if v.Value == "deny" {
		hint = `; did you mean "block"? (deny is a default_action)`
	}
	d.errAt(v, key, "unknown action %s; want %s%s", quote(v.Value), actionList, hint)
	return 0, false
}

func (d *decoder) minMatches(e entry) {
	const key = "flow.min_matches"
	v := deref(e.v)
	if isNull(v) {
		d.errAt(e.k, key, "missing value; want a whole number of at least 1, e.g. 2")
		return
	}
	n, ok := d.integer(key, v, "a whole number of at least 1, e.g. 2")
	if !ok {
		return
	}
	if n < 1 {
		d.errAt(v, key, "must be at least 1, got %d; 1 calls a single fingerprint hit a leak", n)
		return
	}
	d.l.minMatches = &n
}

func (d *decoder) allowFlows(e entry) {
	const key = "flow.allow_flows"
	v := deref(e.v)
	if isNull(v) {
		return
	}
	if v.Kind != yaml.SequenceNode {
		d.errAt(v, key, "want a list of flows, e.g. [%s], got %s", exampleFlow, describe(v))
		return
	}
	for i, item := range v.Content {
		item = deref(item)
		ikey := indexKey(key, i)
		if !isString(item) {
			hint := ""
			if item.Kind == yaml.MappingNode {
				hint = ` (quote the flow: a ": " in it starts a mapping)`
			}
			d.errAt(item, ikey, "want a flow written \"FROM -> TO\", e.g. %s, got %s%s", exampleFlow, describe(item), hint)
			continue
		}
		r, err := parseFlowRule(item.Value)
		if err != nil {
			d.errAt(item, ikey, "%v", err)
			continue
		}
		r.Line, r.Source = item.Line, d.file
		d.l.allowFlows = append(d.l.allowFlows, r)
	}
}

func (d *decoder) tools(e entry) {
	v := deref(e.v)
	if isNull(v) {
		return
	}
	if v.Kind != yaml.SequenceNode {
		d.errAt(v, "tools", "want a list of tool entries, e.g. [%s], got %s", exampleTool, describe(v))
		return
	}
	for i, item := range v.Content {
		d.tool(indexKey("tools", i), deref(item))
	}
}

func (d *decoder) tool(path string, n *yaml.Node) {
	if n.Kind != yaml.MappingNode {
		d.errAt(n, path, "want a tool entry such as %s, got %s", exampleTool, describe(n))
		return
	}
	m, typos := d.mapping(n, path, toolLevel)
	te := policy.ToolEntry{Line: n.Line, Source: d.file}
	ok := len(m)*2 == len(n.Content) // every key was valid
	if e, found := m["match"]; found {
		ok = d.match(joinKey(path, "match"), e, &te) && ok
	} else if !typos["match"] {
		d.errAt(n, path, `missing "match"; say which tools this entry labels, e.g. match: "notes:*"`)
	}
	if e, found := m["labels"]; found {
		ok = d.labels(joinKey(path, "labels"), e, &te) && ok
	} else if !typos["labels"] {
		d.errAt(n, path, `missing "labels"; list the labels these tools carry, e.g. labels: [private], or labels: [] for none`)
	}
	if e, found := m["declassify"]; found {
		ok = d.declassify(joinKey(path, "declassify"), e, &te) && ok
	}
	if ok {
		d.l.tools = append(d.l.tools, te)
	}
}

func (d *decoder) match(key string, e entry, te *policy.ToolEntry) bool {
	g, ok := d.glob(key, e)
	te.Match = g
	return ok
}

// glob decodes a `match:` tool pattern.
func (d *decoder) glob(key string, e entry) (policy.Glob, bool) {
	v := deref(e.v)
	if isNull(v) {
		d.errAt(e.k, key, `missing value; want a tool pattern such as "notes:*"`)
		return policy.Glob{}, false
	}
	if !isString(v) {
		d.errAt(v, key, `want a tool pattern such as "notes:*", got %s`, describe(v))
		return policy.Glob{}, false
	}
	g, err := policy.CompileGlob(v.Value)
	if err != nil {
		d.errAt(v, key, "%v", err)
		return policy.Glob{}, false
	}
	return g, true
}

func (d *decoder) labels(key string, e entry, te *policy.ToolEntry) bool {
	v := deref(e.v)
	if isNull(v) {
		d.errAt(e.k, key, "missing value; want a list of labels, e.g. [private, sink], or [] for none")
		return false
	}
	if v.Kind != yaml.SequenceNode {
		hint := ""
		if isString(v) {
			hint = fmt.Sprintf(" (write [%s])", v.Value)
		}
		d.errAt(v, key, "want a list of labels, e.g. [private, sink], got %s%s", describe(v), hint)
		return false
	}
	ok := true
	allLabels := flow.Private | flow.Untrusted | flow.Sink
	for i, item := range v.Content {
		item = deref(item)
		ikey := indexKey(key, i)
		if !isString(item) {
			d.errAt(item, ikey, "want a label (private, untrusted or sink), got %s", describe(item))
			ok = false
			continue
		}
		l, err := flow.ParseLabel(item.Value)
		if err != nil {
			d.errAt(item, ikey, "unknown label %s; want private, untrusted or sink%s", quote(item.Value), didYouMean(item.Value, allLabels.Names()))
			ok = false
			continue
		}
		if te.Labels.Has(l) {
			d.errAt(item, ikey, "label %s is listed twice; remove one", quote(item.Value))
			ok = false
			continue
		}
		te.Labels |= l
	}
	return ok
}
