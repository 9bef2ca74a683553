package policyfile

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/weir-sec/weir/internal/flow"
	"github.com/weir-sec/weir/internal/policy"
)

// A declassify schema must not admit free text: every string it admits is
// bounded by enum or const, by one of these formats, or by a pattern with
// a maxLength of at most maxFreeLength. A uri needs the hosts keyword too.
var (
	boundedFormats = []string{"date", "date-time", "time", "email", "uuid", "ipv4", "ipv6"}
	hostFormats    = []string{"uri", "iri"}
)

const maxFreeLength = 64

// schemaKeywords are the keywords a declassify schema may use: the ones the
// free-text check understands, and annotations. Anything else (if/then,
// unevaluatedProperties, $dynamicRef, content*) could admit text the check
// does not see, so it is refused rather than guessed at.
var schemaKeywords = []string{
	"$schema", "$defs", "$ref", "$comment", "title", "description", "examples", "default", "deprecated", "readOnly", "writeOnly",
	"type", "enum", "const", "anyOf", "oneOf", "allOf", "not",
	"format", "pattern", "maxLength", "minLength", policy.HostsKeyword,
	"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
	"properties", "required", "additionalProperties", "patternProperties", "propertyNames", "maxProperties", "minProperties", "dependentRequired",
	"items", "prefixItems", "maxItems", "minItems", "uniqueItems", "contains", "minContains", "maxContains",
}

const draft2020 = "https://json-schema.org/draft/2020-12/schema"

//go:embed schemas.yaml
var schemasYAML []byte

// NamedSchema is one schema of the embedded registry.
type NamedSchema struct {
	Name        string
	Description string
	// JSON is the schema as JSON.
	JSON []byte

	node *yaml.Node
	// valid and invalid are JSON values the schema must accept and
	// refuse: its examples, checked by the tests.
	valid, invalid []string
}

var namedSchemas = func() []NamedSchema {
	var doc yaml.Node
	if err := yaml.Unmarshal(schemasYAML, &doc); err != nil {
		panic(fmt.Sprintf("schemas.yaml: %v", err)) // embedded; a test reads it
	}
	var out []NamedSchema
	top := doc.Content[0]
	for i := 0; i+1 < len(top.Content); i += 2 {
		s := NamedSchema{Name: top.Content[i].Value}
		m := top.Content[i+1]
		for j := 0; j+1 < len(m.Content); j += 2 {
			switch m.Content[j].Value {
			case "description":
				s.Description = m.Content[j+1].Value
			case "schema":
				s.node = m.Content[j+1]
			case "valid":
				_ = m.Content[j+1].Decode(&s.valid)
			case "invalid":
				_ = m.Content[j+1].Decode(&s.invalid)
			}
		}
		var v any
		if err := s.node.Decode(&v); err != nil {
			panic(fmt.Sprintf("schemas.yaml: %s: %v", s.Name, err))
		}
		s.JSON, _ = json.Marshal(v)
		out = append(out, s)
	}
	return out
}()

// Schemas lists the named declassify schemas, by name.
func Schemas() []NamedSchema {
	out := slices.Clone(namedSchemas)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func schemaNames() []string {
	var names []string
	for _, s := range Schemas() {
		names = append(names, s.Name)
	}
	return names
}

func namedSchema(name string) (NamedSchema, bool) {
	for _, s := range namedSchemas {
		if s.Name == name {
			return s, true
		}
	}
	return NamedSchema{}, false
}

// declassify decodes a tools entry's `declassify:` mapping.
func (d *decoder) declassify(key string, e entry, te *policy.ToolEntry) bool {
	v := deref(e.v)
	if v.Kind != yaml.MappingNode {
		d.errAt(v, key, `want a mapping such as {schema: amount, as: [untrusted]}, got %s`, describe(v))
		return false
	}
	m, typos := d.mapping(v, key, declassifyLevel)
	ok := len(m)*2 == len(v.Content)
	drop := flow.Untrusted
	if a, found := m["as"]; found {
		var l policy.ToolEntry
		if !d.labels(joinKey(key, "as"), a, &l) {
			ok = false
		} else {
			drop = l.Labels
			if drop.Has(flow.Sink) || drop == 0 {
				d.errAt(a.v, joinKey(key, "as"), "declassify drops the labels a result adds: list untrusted, private or both")
				ok = false
			} else if extra := drop &^ te.Labels; extra != 0 && te.Labels != 0 {
				d.errAt(a.v, joinKey(key, "as"), "this entry does not label its tools %s; declassify drops only labels the entry gives", extra)
				ok = false
			}
		}
	}
	se, found := m["schema"]
	if !found {
		if !typos["schema"] {
			d.errAt(v, key, `missing "schema"; name one (%s) or write one inline`, strings.Join(schemaNames(), ", "))
		}
		return false
	}
	skey := joinKey(key, "schema")
	sn := deref(se.v)
	name, root := "inline", sn
	if isString(sn) {
		ns, known := namedSchema(sn.Value)
		if !known {
			d.errAt(sn, skey, "unknown schema %s; the named schemas are %s, or write one inline%s",
				quote(sn.Value), strings.Join(schemaNames(), ", "), didYouMean(sn.Value, schemaNames()))
			return false
		}
		name, root = ns.Name, ns.node
	} else if !d.freeTextFree(skey, sn) {
		return false
	}
	if !ok {
		return false
	}
	var doc any
	if err := root.Decode(&doc); err != nil {
		d.errAt(sn, skey, "the schema is not a JSON value: %v", err)
		return false
	}
	dc, err := policy.CompileDeclassify(name, canonicalHosts(doc), drop)
	if err != nil {
		d.errAt(sn, skey, "the schema does not compile: %s", strings.Join(strings.Fields(err.Error()), " "))
		return false
	}
	dc.Line, dc.Source = v.Line, d.file
	te.Declassify = dc
	return true
}

// canonicalHosts rewrites the hosts keyword's patterns in their canonical
// form, which freeTextFree checked they have.
func canonicalHosts(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, sub := range t {
			if k == policy.HostsKeyword {
				if list, ok := sub.([]any); ok {
					for i, p := range list {
						if s, ok := p.(string); ok {
							if c, err := compileHostPattern(s); err == nil {
								list[i] = c
							}
						}
					}
				}
				continue
			}
			t[k] = canonicalHosts(sub)
		}
	case []any:
		for i := range t {
			t[i] = canonicalHosts(t[i])
		}
	}
	return v
}

// freeTextFree checks that an inline schema admits no free text, and
// reports each place it does at its line, with its path in the schema.
func (d *decoder) freeTextFree(key string, root *yaml.Node) bool {
	c := &schemaCheck{root: root, visiting: map[string]bool{}}
	probs := c.check(root, "$")
	for _, p := range probs {
		d.errAt(p.node, key, "%s: %s", p.path, p.msg)
	}
	return len(probs) == 0
}

// A problem is a place where a schema admits text it must not.
type problem struct {
	node *yaml.Node
	path string
	msg  string
}

type schemaCheck struct {
	root     *yaml.Node
	visiting map[string]bool // $refs being checked, against recursion
}

const stringRule = "a string with no enum, const, format, or pattern and maxLength ≤ 64 can carry an instruction; bound it, e.g. {type: string, pattern: '^[A-Z0-9-]+$', maxLength: 32}"

// check returns the problems of the schema n at path; none means every
// value n admits is bounded. Keywords in one schema apply together, so n
// is bounded when any one of enum/const, $ref, its type's keywords or its
// combinators bounds it; when none does, the problems reported are those
// of the most telling one.
func (c *schemaCheck) check(n *yaml.Node, path string) []problem {
	n = deref(n)
	switch {
	case n.Kind == yaml.ScalarNode && n.ShortTag() == "!!bool":
		if n.Value == "true" {
			return []problem{{n, path, "true admits any value, text included"}}
		}
		return nil
	case n.Kind != yaml.MappingNode:
		return []problem{{n, path, fmt.Sprintf("want a schema (a mapping, or true/false), got %s", describe(n))}}
	}
	m := map[string]*yaml.Node{}
	var probs []problem
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := deref(n.Content[i])
		if !slices.Contains(schemaKeywords, k.Value) {
			probs = append(probs, problem{k, path, fmt.Sprintf("keyword %s is not supported in a declassify schema", quote(k.Value))})
			continue
		}
		if _, dup := m[k.Value]; dup {
			probs = append(probs, problem{k, path, fmt.Sprintf("keyword %s is repeated", quote(k.Value))})
			continue
		}
		m[k.Value] = deref(n.Content[i+1])
	}
	if s, ok := m["$schema"]; ok && (n != c.root || s.Value != draft2020) {
		probs = append(probs, problem{s, path, "$schema may only be " + draft2020 + ", at the top"})
	}
	if defs, ok := m["$defs"]; ok && n != c.root {
		probs = append(probs, problem{defs, path, "$defs may only be written at the top of the schema"})
	}
	if len(probs) > 0 {
		return probs
	}
	if _, ok := m["enum"]; ok {
		return nil
	}
	if _, ok := m["const"]; ok {
		return nil
	}
	var routes [][]problem
	if ref, ok := m["$ref"]; ok {
		routes = append(routes, c.ref(ref, path))
	}
	if t, ok := m["type"]; ok {
		routes = append(routes, c.typed(n, m, t, path))
	}
	for _, comb := range []string{"anyOf", "oneOf", "allOf"} {
		if l, ok := m[comb]; ok {
			routes = append(routes, c.each(l, path+"."+comb))
		}
	}
	if len(routes) == 0 {
		return []problem{{n, path, "admits any value (no type, enum or const)"}}
	}
	for _, r := range routes {
		if len(r) == 0 {
			return nil
		}
	}
	return routes[0]
}

// each checks a list of schemas: all must be bounded.
func (c *schemaCheck) each(l *yaml.Node, path string) []problem {
	if l.Kind != yaml.SequenceNode || len(l.Content) == 0 {
		return []problem{{l, path, "want a non-empty list of schemas"}}
	}
	var probs []problem
	for i, s := range l.Content {
		probs = append(probs, c.check(s, path+"["+strconv.Itoa(i)+"]")...)
	}
	return probs
}

func (c *schemaCheck) ref(ref *yaml.Node, path string) []problem {
	name, ok := strings.CutPrefix(ref.Value, "#/$defs/")
	if !isString(ref) || !ok {
		return []problem{{ref, path + ".$ref", "only references to this schema's $defs (\"#/$defs/NAME\") are allowed"}}
	}
	if c.visiting[name] {
		return []problem{{ref, path + ".$ref", "a recursive reference admits unbounded nesting"}}
	}
	target := c.def(name)
	if target == nil {
		return []problem{{ref, path + ".$ref", fmt.Sprintf("$defs has no %s", quote(name))}}
	}
	c.visiting[name] = true
	defer delete(c.visiting, name)
	return c.check(target, "$.$defs."+name)
}

func (c *schemaCheck) def(name string) *yaml.Node {
	root := deref(c.root)
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value != "$defs" {
			continue
		}
		defs := deref(root.Content[i+1])
		for j := 0; j+1 < len(defs.Content); j += 2 {
			if defs.Content[j].Value == name {
				return defs.Content[j+1]
			}
		}
	}
	return nil
}

// typed checks the schema n by its type keyword.
func (c *schemaCheck) typed(n *yaml.Node, m map[string]*yaml.Node, t *yaml.Node, path string) []problem {
	var types []*yaml.Node
	switch {
	case isString(t):
		types = []*yaml.Node{t}
	case t.Kind == yaml.SequenceNode && len(t.Content) > 0:
		types = t.Content
	default:
		return []problem{{t, path + ".type", "want a type name or a non-empty list of them"}}
	}
	var probs []problem
	for _, tn := range types {
		switch deref(tn).Value {
		case "number", "integer", "boolean", "null":
		case "string":
			probs = append(probs, c.str(n, m, path)...)
		case "object":
			probs = append(probs, c.object(n, m, path)...)
		case "array":
			probs = append(probs, c.array(n, m, path)...)
		default:
			probs = append(probs, problem{tn, path + ".type", fmt.Sprintf("unknown type %s", quote(tn.Value))})
		}
	}
	return probs
}

// str checks a string schema's bounds.
func (c *schemaCheck) str(n *yaml.Node, m map[string]*yaml.Node, path string) []problem {
	if f, ok := m["format"]; ok {
		switch {
		case slices.Contains(boundedFormats, f.Value):
			return nil
		case slices.Contains(hostFormats, f.Value):
			return c.hosts(n, m, path)
		}
	}
	if pat, ok := m["pattern"]; ok {
		if _, err := regexp.Compile(pat.Value); err != nil || !isString(pat) {
			return []problem{{pat, path + ".pattern", fmt.Sprintf("not a valid regular expression (RE2 syntax): %v", err)}}
		}
		if ml, ok := m["maxLength"]; ok {
			if v, err := strconv.Atoi(ml.Value); err == nil && v <= maxFreeLength {
				return nil
			}
			return []problem{{ml, path + ".maxLength", fmt.Sprintf("a maxLength over %d lets a string carry an instruction", maxFreeLength)}}
		}
	}
	return []problem{{n, path, stringRule}}
}

func (c *schemaCheck) hosts(n *yaml.Node, m map[string]*yaml.Node, path string) []problem {
	h, ok := m[policy.HostsKeyword]
	if !ok {
		return []problem{{n, path, fmt.Sprintf("a %s string needs %s: [the sites it may name]; any other URL can carry text in its host and path", m["format"].Value, policy.HostsKeyword)}}
	}
	if h.Kind != yaml.SequenceNode || len(h.Content) == 0 {
		return []problem{{h, path + "." + policy.HostsKeyword, `want a non-empty list of hosts, e.g. ["shop.example", "*.shop.example"]`}}
	}
	var probs []problem
	for i, p := range h.Content {
		if _, err := compileHostPattern(p.Value); err != nil || !isString(p) {
			probs = append(probs, problem{p, path + "." + policy.HostsKeyword + "[" + strconv.Itoa(i) + "]", fmt.Sprintf("not a host pattern: %v", err)})
		}
	}
	return probs
}

// object checks an object schema: its members are bounded and so is the
// set of member names.
func (c *schemaCheck) object(n *yaml.Node, m map[string]*yaml.Node, path string) []problem {
	var probs []problem
	if props, ok := m["properties"]; ok {
		for i := 0; i+1 < len(props.Content); i += 2 {
			probs = append(probs, c.check(props.Content[i+1], path+".properties."+props.Content[i].Value)...)
		}
	}
	open := false // names other than the listed properties are admitted
	if pp, ok := m["patternProperties"]; ok {
		open = true
		for i := 0; i+1 < len(pp.Content); i += 2 {
			if _, err := regexp.Compile(pp.Content[i].Value); err != nil {
				probs = append(probs, problem{pp.Content[i], path + ".patternProperties", fmt.Sprintf("not a valid regular expression (RE2 syntax): %v", err)})
			}
			probs = append(probs, c.check(pp.Content[i+1], path+".patternProperties."+pp.Content[i].Value)...)
		}
	}
	switch ap, ok := m["additionalProperties"]; {
	case !ok:
		probs = append(probs, problem{n, path, "an object needs additionalProperties: false (or a bounded schema), or any member could carry text"})
	case ap.Kind == yaml.ScalarNode && ap.Value == "false":
	default:
		open = true
		probs = append(probs, c.check(ap, path+".additionalProperties")...)
	}
	if open {
		if _, ok := m["maxProperties"]; !ok {
			probs = append(probs, problem{n, path, "an object that admits members not listed in properties needs maxProperties"})
		}
		if pn, ok := m["propertyNames"]; !ok {
			probs = append(probs, problem{n, path, "an object that admits members not listed in properties needs propertyNames, bounded like a string (member names are text too)"})
		} else {
			probs = append(probs, c.names(pn, path+".propertyNames")...)
		}
	}
	return probs
}

// names checks a propertyNames schema: names are strings, so it is bounded
// as a string schema is, with or without a type keyword.
func (c *schemaCheck) names(n *yaml.Node, path string) []problem {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		return c.check(n, path)
	}
	m := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		m[n.Content[i].Value] = deref(n.Content[i+1])
	}
	if _, ok := m["enum"]; ok {
		return nil
	}
	if _, ok := m["const"]; ok {
		return nil
	}
	return c.str(n, m, path)
}

// array checks an array schema: bounded items, and a bounded count.
func (c *schemaCheck) array(n *yaml.Node, m map[string]*yaml.Node, path string) []problem {
	var probs []problem
	if _, ok := m["maxItems"]; !ok {
		probs = append(probs, problem{n, path, "an array needs maxItems, or it can hold any amount of text"})
	}
	prefix, hasPrefix := m["prefixItems"]
	if hasPrefix {
		probs = append(probs, c.each(prefix, path+".prefixItems")...)
	}
	items, ok := m["items"]
	switch {
	case ok && items.Kind == yaml.SequenceNode:
		probs = append(probs, problem{items, path + ".items", "items is one schema; write a list of schemas as prefixItems (JSON Schema 2020-12)"})
	case ok && hasPrefix && items.Kind == yaml.ScalarNode && items.Value == "false":
	case ok:
		probs = append(probs, c.check(items, path+".items")...)
	default:
		probs = append(probs, problem{n, path, "an array needs items (a bounded schema for its elements)"})
	}
	return probs
}
