package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/message"

	"github.com/weir-sec/weir/internal/flow"
	"github.com/weir-sec/weir/internal/jsonrpc"
)

// Declassify is a `tools:` entry's declassify: a result of the entry's
// tools that validates against the schema enters the session without the
// labels in Drop. The schema admits no free text (the loader refuses one
// that does), so a result that validates cannot carry an instruction.
type Declassify struct {
	// Schema names the schema: a registry name ("amount"), or "inline".
	Schema string
	// Drop are the labels a validating result does not add: untrusted
	// unless the policy wrote otherwise.
	Drop   flow.Labels
	Line   int    // where it was written (in Source)
	Source string // the file or preset it came from

	validator *jsonschema.Schema
	// names are the member names the schema's properties list: the only
	// ones a reason may repeat (any other came from the result).
	names map[string]bool
}

// Declassification bounds. A larger or deeper result is not declassified:
// validating it would cost more than a decision may, and no price or date
// needs that much room.
const (
	MaxDeclassifyBytes = 256 << 10
	maxDeclassifyDepth = 32
)

// HostsKeyword is the schema keyword that bounds a "format: uri" string to
// the hosts it lists (canonical patterns, as `hosts:` argument
// constraints write them): a link to a site the user trusts, not text
// anyone can choose.
const HostsKeyword = "hosts"

// CompileDeclassify compiles a declassify schema, a JSON value as
// encoding/json decodes it (json.Number or float64 numbers), whose free
// text the loader has already ruled out. Formats are asserted, and the
// hosts keyword is enforced.
func CompileDeclassify(name string, doc any, drop flow.Labels) (*Declassify, error) {
	// Round-trip through JSON so numbers are json.Number, as the
	// validator wants them.
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("the schema is not a JSON value: %w", err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("the schema is not a JSON value: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.AssertVocabs()
	c.RegisterVocabulary(hostsVocabulary)
	c.UseLoader(noLoader{})
	const url = "weir:declassify.json"
	if err := c.AddResource(url, v); err != nil {
		return nil, err
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, err
	}
	d := &Declassify{Schema: name, Drop: drop, validator: s, names: map[string]bool{}}
	d.collectNames(v)
	return d, nil
}

// collectNames records the member names the schema's properties list.
func (d *Declassify) collectNames(v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, sub := range t {
			if props, ok := sub.(map[string]any); ok && k == "properties" {
				for name, ps := range props {
					d.names[name] = true
					d.collectNames(ps)
				}
				continue
			}
			d.collectNames(sub)
		}
	case []any:
		for _, sub := range t {
			d.collectNames(sub)
		}
	}
}

// noLoader refuses every schema the compiler would fetch: a declassify
// schema is whole in the policy, and compiling it reads no file or URL.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("a declassify schema cannot refer to %s; write the schema inline", url)
}

// Check reports whether v, as [DecodeInstance] returns it, validates. The
// error names where the value failed and which keyword, never the value
// itself: it goes to the audit log.
func (d *Declassify) Check(v any) error {
	err := d.validator.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	kw := "schema"
	if ve.ErrorKind != nil {
		if p := ve.ErrorKind.KeywordPath(); len(p) > 0 {
			kw = strings.Join(p, "/")
		}
	}
	return fmt.Errorf("%s fails %s", d.instancePath(ve.InstanceLocation), kw)
}

// instancePath writes where a value failed, naming the members the schema
// lists and array indexes; any other name came from the result and is
// written as *.
func (d *Declassify) instancePath(loc []string) string {
	var b strings.Builder
	b.WriteString("$")
	for _, k := range loc {
		switch {
		case d.names[k]:
			b.WriteString("." + k)
		case isIndex(k):
			b.WriteString("[" + k + "]")
		default:
			b.WriteString(".*")
		}
	}
	return b.String()
}

func isIndex(k string) bool {
	if k == "" || len(k) > 9 {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < '0' || k[i] > '9' {
			return false
		}
	}
	return true
}

// DecodeInstance reads a JSON value for [Declassify.Check], strictly: a
// member repeated in an object, anywhere, is an error (two readers could
// take different copies, and the model reads both), as are trailing data,
// nesting deeper than 32 and more than [MaxDeclassifyBytes]. Numbers are
// float64 (json.Number beyond its range).
func DecodeInstance(data []byte) (any, error) {
	if len(data) > MaxDeclassifyBytes {
		return nil, fmt.Errorf("larger than %d bytes", MaxDeclassifyBytes)
	}
	if !jsonrpc.Valid(data) {
		return nil, errors.New("not JSON")
	}
	// One pass over the tokens; stack holds the open containers and, for
	// objects, the name whose value comes next.
	type open struct {
		obj  map[string]any
		arr  []any
		name string
	}
	var (
		stack []open
		root  any
	)
	put := func(v any) error {
		if len(stack) == 0 {
			root = v
			return nil
		}
		top := &stack[len(stack)-1]
		if top.obj == nil {
			top.arr = append(top.arr, v)
			return nil
		}
		if _, dup := top.obj[top.name]; dup {
			return errors.New("a member is repeated")
		}
		top.obj[top.name] = v
		return nil
	}
	err := jsonrpc.Walk(data, func(tok jsonrpc.Token, text string, raw []byte) error {
		switch tok {
		case jsonrpc.ObjectStart, jsonrpc.ArrayStart:
			if len(stack) >= maxDeclassifyDepth {
				return fmt.Errorf("nested deeper than %d", maxDeclassifyDepth)
			}
			o := open{arr: []any{}}
			if tok == jsonrpc.ObjectStart {
				o = open{obj: map[string]any{}}
			}
			stack = append(stack, o)
		case jsonrpc.ObjectEnd, jsonrpc.ArrayEnd:
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			var v any = top.arr
			if top.obj != nil {
				v = top.obj
			}
			return put(v)
		case jsonrpc.Key:
			stack[len(stack)-1].name = text
		case jsonrpc.Scalar:
			return put(scalar(raw))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return root, nil
}

// scalar is one JSON scalar as the validator reads it.
func scalar(raw []byte) any {
	switch raw[0] {
	case '"':
		s, _ := jsonrpc.Unquote(raw)
		return s
	case 't':
		return true
	case 'f':
		return false
	case 'n':
		return nil
	}
	// float64 where it is exact enough to validate: the validator reads
	// it far faster than a json.Number, which it parses as a big.Rat.
	if f, err := strconv.ParseFloat(string(raw), 64); err == nil {
		return f
	}
	return json.Number(raw)
}

// hostsVocabulary enforces the hosts keyword.
var hostsVocabulary = func() *jsonschema.Vocabulary {
	meta, err := jsonschema.UnmarshalJSON(strings.NewReader(
		`{"properties": {"hosts": {"type": "array", "items": {"type": "string"}, "minItems": 1}}}`))
	if err != nil {
		panic(err) // a constant
	}
	c := jsonschema.NewCompiler()
	const url = "weir:hosts-vocabulary.json"
	if err := c.AddResource(url, meta); err != nil {
		panic(err)
	}
	return &jsonschema.Vocabulary{URL: url, Schema: c.MustCompile(url), Compile: compileHosts}
}()

func compileHosts(_ *jsonschema.CompilerContext, obj map[string]any) (jsonschema.SchemaExt, error) {
	list, ok := obj[HostsKeyword].([]any)
	if !ok {
		return nil, nil
	}
	h := &hostsExt{}
	for _, p := range list {
		s, _ := p.(string)
		h.rule.Allow = append(h.rule.Allow, s)
	}
	return h, nil
}

type hostsExt struct{ rule HostRule }

func (h *hostsExt) Validate(ctx *jsonschema.ValidatorContext, v any) {
	s, ok := v.(string)
	if !ok {
		return
	}
	if h.rule.check("", s) != "" {
		ctx.AddError(hostNotAllowed{})
	}
}

type hostNotAllowed struct{}

func (hostNotAllowed) KeywordPath() []string { return []string{HostsKeyword} }
func (hostNotAllowed) LocalizedString(p *message.Printer) string {
	return p.Sprintf("the URL's host is not one the schema allows")
}

// DeclassifyFor returns the declassify of the first `tools:` entry that
// matches tool on server and has one, or nil.
func (p *Policy) DeclassifyFor(server, tool string) *Declassify {
	if p == nil {
		return nil
	}
	for i := range p.Tools {
		e := &p.Tools[i]
		if e.Declassify != nil && e.Match.Match(server, tool) {
			return e.Declassify
		}
	}
	return nil
}
