package policyfile

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/weir-sec/weir/internal/flow"
	"github.com/weir-sec/weir/internal/policy"
)

// TestNamedSchemas: every schema of the registry passes the free-text
// check a policy's inline schemas must pass, compiles, accepts its valid
// examples and refuses its invalid ones; the editor schema offers exactly
// these names.
func TestNamedSchemas(t *testing.T) {
	if len(Schemas()) < 9 {
		t.Fatalf("%d named schemas, want the nine the docs list", len(Schemas()))
	}
	for _, s := range Schemas() {
		t.Run(s.Name, func(t *testing.T) {
			d := &decoder{file: "schemas.yaml"}
			if !d.freeTextFree("schemas."+s.Name, s.node) {
				t.Fatalf("admits free text: %v", ErrorList(d.errs))
			}
			if s.Description == "" || len(s.valid) == 0 || len(s.invalid) == 0 {
				t.Fatalf("needs a description and valid and invalid examples")
			}
			var doc any
			if err := json.Unmarshal(s.JSON, &doc); err != nil {
				t.Fatal(err)
			}
			dc, err := policy.CompileDeclassify(s.Name, doc, flow.Untrusted)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range s.valid {
				inst, err := policy.DecodeInstance([]byte(v))
				if err != nil {
					t.Fatalf("valid example %s: %v", v, err)
				}
				if err := dc.Check(inst); err != nil {
					t.Errorf("valid example %s refused: %v", v, err)
				}
			}
			for _, v := range s.invalid {
				inst, err := policy.DecodeInstance([]byte(v))
				if err != nil {
					t.Fatalf("invalid example %s: %v", v, err)
				}
				if err := dc.Check(inst); err == nil {
					t.Errorf("invalid example %s accepted", v)
				}
			}
		})
	}
	var editor struct {
		Defs map[string]struct {
			Properties map[string]struct {
				Properties map[string]struct {
					AnyOf []struct {
						Enum []string `json:"enum"`
					} `json:"anyOf"`
				} `json:"properties"`
			} `json:"properties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(Schema(), &editor); err != nil {
		t.Fatal(err)
	}
	got := editor.Defs["tool"].Properties["declassify"].Properties["schema"].AnyOf[0].Enum
	if !slices.Equal(got, schemaNames()) {
		t.Errorf("policy.schema.json offers %v, the registry has %v", got, schemaNames())
	}
}

func TestDeclassifyEntry(t *testing.T) {
	p, err := Parse("p.yaml", []byte(`version: 1
tools:
  - {match: "shop:get_price", labels: [untrusted], declassify: {schema: amount}}
  - {match: "shop:*", labels: [untrusted], declassify: {schema: date}}
  - {match: "bank:get_balance", labels: [private, untrusted], declassify: {schema: amount, as: [private, untrusted]}}
  - {match: "web:fetch", labels: [untrusted, sink]}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		server, tool string
		schema       string // "" for none
		drop         flow.Labels
		line         int
	}{
		{"shop", "get_price", "amount", flow.Untrusted, 3}, // the first matching entry wins
		{"shop", "get_date", "date", flow.Untrusted, 4},
		{"bank", "get_balance", "amount", flow.Private | flow.Untrusted, 5},
		{"web", "fetch", "", 0, 0},
	} {
		dc := p.DeclassifyFor(tt.server, tt.tool)
		switch {
		case tt.schema == "" && dc != nil:
			t.Errorf("%s:%s: declassify %+v, want none", tt.server, tt.tool, dc)
		case tt.schema == "":
		case dc == nil:
			t.Errorf("%s:%s: no declassify, want %s", tt.server, tt.tool, tt.schema)
		case dc.Schema != tt.schema || dc.Drop != tt.drop || dc.Line != tt.line || dc.Source != "p.yaml":
			t.Errorf("%s:%s: declassify %s drops %v at %s:%d, want %s drops %v at line %d",
				tt.server, tt.tool, dc.Schema, dc.Drop, dc.Source, dc.Line, tt.schema, tt.drop, tt.line)
		}
	}
}

// TestDeclassifyFreeText: schemas that admit no free text load; each way
// of admitting text is refused, at the line of the part that admits it.
func TestDeclassifyFreeText(t *testing.T) {
	accept := []string{
		`{enum: ["a long sentence the policy's author wrote is fine"]}`,
		`{const: 3}`,
		`{type: [integer, "null"]}`,
		`{type: string, format: uuid}`,
		`{type: string, format: ipv6}`,
		`{type: string, pattern: '^[a-z]+$', maxLength: 64}`,
		`{type: string, format: uri, hosts: [shop.example, "*.cdn.shop.example"]}`,
		`{type: array, maxItems: 3, prefixItems: [{type: number}, {type: boolean}], items: false}`,
		`{type: object, properties: {a: {type: number}}, additionalProperties: false, not: {required: [b]}}`,
		`{type: object, maxProperties: 4, propertyNames: {enum: [a, b]}, additionalProperties: {type: number}}`,
		`{type: object, maxProperties: 4, patternProperties: {'^x_': {type: integer}}, propertyNames: {pattern: '^x_[a-z]+$', maxLength: 10}, additionalProperties: false}`,
		`{allOf: [{type: integer}, {minimum: 0, type: number}]}`,
		`{$ref: "#/$defs/a", $defs: {a: {$ref: "#/$defs/b"}, b: {type: boolean}}}`,
		`false`,
	}
	for _, s := range accept {
		d := &decoder{file: "p.yaml"}
		n := yamlNode(t, s)
		if !d.freeTextFree("schema", n) {
			t.Errorf("%s refused: %v", s, ErrorList(d.errs))
		}
	}
	refuse := map[string]string{
		`{type: string}`:                   "$: a string with no enum",
		`{type: string, maxLength: 10}`:    "$: a string with no enum",
		`{type: string, format: hostname}`: "$: a string with no enum",
		`{type: string, format: iri}`:      "$: a iri string needs hosts",
		`{type: [number, string]}`:         "$: a string with no enum",
		`{type: object, properties: {a: {type: object, properties: {b: {type: string}}, additionalProperties: false}}, additionalProperties: false}`: "$.properties.a.properties.b: a string",
		`{type: object, additionalProperties: true, maxProperties: 2, propertyNames: {enum: [a]}}`:                                                   "$.additionalProperties: true admits any value",
		`{type: object, maxProperties: 4, propertyNames: {maxLength: 10}, additionalProperties: {type: number}}`:                                     "$.propertyNames: a string with no enum",
		`{type: object, patternProperties: {'^x': {type: number}}, additionalProperties: false}`:                                                     "needs maxProperties",
		`{type: array, maxItems: 2, prefixItems: [{type: number}]}`:                                                                                  "an array needs items",
		`{type: array, maxItems: 2, items: {type: array, items: {type: number}}}`:                                                                    "$.items: an array needs maxItems",
		`{oneOf: [{type: integer}, {type: array, maxItems: 1, items: true}]}`:                                                                        "$.oneOf[1].items: true admits",
		`{type: tuple}`: `unknown type "tuple"`,
		`{type: number, $defs: {}, $schema: "http://json-schema.org/draft-07/schema#"}`: "$schema may only be",
		`{type: number, unevaluatedProperties: false}`:                                  `keyword "unevaluatedProperties" is not supported`,
		`{type: number, contentSchema: {type: string}}`:                                 `keyword "contentSchema" is not supported`,
		`{$ref: "#/$defs/missing"}`:                                                     `$defs has no "missing"`,
		`{$ref: "#/definitions/a"}`:                                                     `only references to this schema's $defs`,
		`"a string"`:                                                                    "want a schema",
	}
	for s, want := range refuse {
		d := &decoder{file: "p.yaml"}
		if d.freeTextFree("schema", yamlNode(t, s)) {
			t.Errorf("%s accepted", s)
			continue
		}
		if got := ErrorList(d.errs).Error(); !strings.Contains(got, want) {
			t.Errorf("%s:\n got %s\nwant ...%s...", s, got, want)
		}
		for _, e := range d.errs {
			if e.Line == 0 {
				t.Errorf("%s: %v has no line", s, e)
			}
		}
	}
}

// yamlNode parses one YAML value, as the decoder sees a schema.
func yamlNode(t *testing.T, s string) *yaml.Node {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(s), &doc); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return doc.Content[0]
}
