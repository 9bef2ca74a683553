package scan

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/weir-sec/weir/internal/clients"
)

// sarifSubsetSchema is the part of the official SARIF 2.1.0 schema
// (sarif-schema-2.1.0.json, OASIS errata01) that Weir's output touches,
// transcribed definition by definition with descriptions dropped: every
// object Weir writes is checked for required members, value types and
// enums, and against the complete list of members the standard allows
// there (additionalProperties false). Members Weir does not write keep
// their names with an unconstrained schema.
const sarifSubsetSchema = `{
  "$schema": "http://json-schema.org/draft-04/schema#",
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "$schema": {"type": "string", "format": "uri"},
    "version": {"enum": ["2.1.0"], "type": "string"},
    "runs": {"type": ["array", "null"], "items": {"$ref": "#/definitions/run"}},
    "inlineExternalProperties": {},
    "properties": {"$ref": "#/definitions/propertyBag"}
  },
  "required": ["version", "runs"],
  "definitions": {
    "run": {
      "type": "object", "additionalProperties": false,
      "properties": {
        "tool": {"$ref": "#/definitions/tool"},
        "invocations": {}, "conversion": {}, "language": {}, "versionControlProvenance": {},
        "originalUriBaseIds": {}, "artifacts": {}, "logicalLocations": {}, "graphs": {},
        "results": {"type": "array", "items": {"$ref": "#/definitions/result"}},
        "automationDetails": {}, "runAggregates": {}, "baselineGuid": {}, "redactionTokens": {},
        "defaultEncoding": {}, "defaultSourceLanguage": {}, "newlineSequences": {}, "columnKind": {},
        "externalPropertyFileReferences": {}, "threadFlowLocations": {}, "taxonomies": {}, "addresses": {},
        "translations": {}, "policies": {}, "webRequests": {}, "webResponses": {}, "specialLocations": {},
        "properties": {"$ref": "#/definitions/propertyBag"}
      },
      "required": ["tool"]
    },
    "tool": {
      "type": "object", "additionalProperties": false,
      "properties": {
        "driver": {"$ref": "#/definitions/toolComponent"},
        "extensions": {},
        "properties": {"$ref": "#/definitions/propertyBag"}
      },
      "required": ["driver"]
    },
    "toolComponent": {
      "type": "object", "additionalProperties": false,
      "properties": {
        "guid": {}, "name": {"type": "string"}, "organization": {"type": "string"}, "product": {"type": "string"},
        "productSuite": {}, "shortDescription": {"$ref": "#/definitions/multiformatMessageString"},
        "fullDescription": {"$ref": "#/definitions/multiformatMessageString"}, "fullName": {"type": "string"},
        "version": {"type": "string"}, "semanticVersion": {"type": "string"}, "dottedQuadFileVersion": {},
        "releaseDateUtc": {}, "downloadUri": {}, "informationUri": {"type": "string", "format": "uri"},
        "globalMessageStrings": {}, "notifications": {},
        "rules": {"type": "array", "uniqueItems": true, "items": {"$ref": "#/definitions/reportingDescriptor"}},
        "taxa": {}, "locations": {}, "language": {}, "contents": {}, "isComprehensive": {},
        "localizedDataSemanticVersion": {}, "minimumRequiredLocalizedDataSemanticVersion": {},
        "associatedComponent": {}, "translationMetadata": {}, "supportedTaxonomies": {},
        "properties": {"$ref": "#/definitions/propertyBag"}
      },
      "required": ["name"]
    },
    "reportingDescriptor": {
      "type": "object", "additionalProperties": false,
      "properties": {
        "id": {"type": "string"}, "deprecatedIds": {}, "guid": {}, "deprecatedGuids": {},
        "name": {"type": "string"}, "deprecatedNames": {},
        "shortDescription": {"$ref": "#/definitions/multiformatMessageString"},
        "fullDescription": {"$ref": "#/definitions/multiformatMessageString"},
        "messageStrings": {}, "defaultConfiguration": {"$ref": "#/definitions/reportingConfiguration"},
        "helpUri": {"type": "string", "format": "uri"}, "help": {"$ref": "#/definitions/multiformatMessageString"},
        "relationships": {}, "properties": {"$ref": "#/definitions/propertyBag"}
      },
      "required": ["id"]
    },
    "reportingConfiguration": {
      "type": "object", "additionalProperties": false,
      "properties": {
        "enabled": {"type": "boolean"},
        "level": {"enum": ["none", "note", "warning", "error"], "type": "string"},
        "rank": {"type": "number", "minimum": -1.0, "maximum": 100.0},
        "parameters": {"$ref": "#/definitions/propertyBag"},
        "properties": {"$ref": "#/definitions/propertyBag"}
      }
    },
    "multiformatMessageString": {
      "type": "object", "additionalProperties": false,
      "properties": {"text": {"type": "string"}, "markdown": {"type": "string"}, "properties": {"$ref": "#/definitions/propertyBag"}},
      "required": ["text"]
    },
    "message": {
      "type": "object", "additionalProperties": false,
      "properties": {
        "text": {"type": "string"}, "markdown": {"type": "string"}, "id": {"type": "string"},
        "arguments": {"type": "array", "items": {"type": "string"}}, "properties": {"$ref": "#/definitions/propertyBag"}
      },
      "anyOf": [{"required": ["text"]}, {"required": ["id"]}]
    },
    "propertyBag": {
      "type": "object", "additionalProperties": true,
      "properties": {"tags": {"type": "array", "uniqueItems": true, "items": {"type": "string"}}}
    },
    "result": {
      "type": "object", "additionalProperties": false,
      "properties": {
        "ruleId": {"type": "string"}, "ruleIndex": {"type": "integer", "minimum": -1}, "rule": {},
        "kind": {"enum": ["notApplicable", "pass", "fail", "review", "open", "informational"], "type": "string"},
        "level": {"enum": ["none", "note", "warning", "error"], "type": "string"},
        "message": {"$ref": "#/definitions/message"}, "analysisTarget": {},
        "locations": {"type": "array", "items": {"$ref": "#/definitions/location"}},
        "guid": {}, "correlationGuid": {}, "occurrenceCount": {"type": "integer", "minimum": 1},
        "partialFingerprints": {"type": "object", "additionalProperties": {"type": "string"}},
        "fingerprints": {"type": "object", "additionalProperties": {"type": "string"}},
        "stacks": {}, "codeFlows": {}, "graphs": {}, "graphTraversals": {}, "relatedLocations": {},
        "suppressions": {}, "baselineState": {}, "rank": {}, "attachments": {}, "hostedViewerUri": {},
        "workItemUris": {}, "provenance": {}, "fixes": {}, "taxa": {}, "webRequest": {}, "webResponse": {},
        "properties": {"$ref": "#/definitions/propertyBag"}
      },
      "required": ["message"]
    },
    "location": {
      "type": "object", "additionalProperties": false,
      "properties": {
        "id": {"type": "integer", "minimum": -1},
        "physicalLocation": {"$ref": "#/definitions/physicalLocation"},
        "logicalLocations": {"type": "array", "uniqueItems": true, "items": {"$ref": "#/definitions/logicalLocation"}},
        "message": {"$ref": "#/definitions/message"}, "annotations": {}, "relationships": {},
        "properties": {"$ref": "#/definitions/propertyBag"}
      }
    },
    "logicalLocation": {
      "type": "object", "additionalProperties": false,
      "properties": {
        "name": {"type": "string"}, "index": {"type": "integer", "minimum": -1}, "fullyQualifiedName": {"type": "string"},
        "decoratedName": {"type": "string"}, "parentIndex": {"type": "integer", "minimum": -1}, "kind": {"type": "string"},
        "properties": {"$ref": "#/definitions/propertyBag"}
      }
    },
    "physicalLocation": {
      "type": "object", "additionalProperties": false,
      "properties": {
        "address": {}, "artifactLocation": {"$ref": "#/definitions/artifactLocation"},
        "region": {"$ref": "#/definitions/region"}, "contextRegion": {"$ref": "#/definitions/region"},
        "properties": {"$ref": "#/definitions/propertyBag"}
      },
      "anyOf": [{"required": ["address"]}, {"required": ["artifactLocation"]}]
    },
    "artifactLocation": {
      "type": "object", "additionalProperties": false,
      "properties": {
        "uri": {"type": "string", "format": "uri-reference"}, "uriBaseId": {"type": "string"},
        "index": {"type": "integer", "minimum": -1}, "description": {"$ref": "#/definitions/message"},
        "properties": {"$ref": "#/definitions/propertyBag"}
      }
    },
    "region": {
      "type": "object", "additionalProperties": false,
      "properties": {
        "startLine": {"type": "integer", "minimum": 1}, "startColumn": {"type": "integer", "minimum": 1},
        "endLine": {"type": "integer", "minimum": 1}, "endColumn": {"type": "integer", "minimum": 1},
        "charOffset": {"type": "integer", "minimum": -1}, "charLength": {"type": "integer", "minimum": 0},
        "byteOffset": {"type": "integer", "minimum": -1}, "byteLength": {"type": "integer", "minimum": 0},
        "snippet": {}, "message": {"$ref": "#/definitions/message"}, "sourceLanguage": {"type": "string"},
        "properties": {"$ref": "#/definitions/propertyBag"}
      },
      "anyOf": [{"required": ["startLine"]}, {"required": ["charOffset"]}, {"required": ["byteOffset"]}]
    }
  }
}`

// sampleReport is a report with every kind of result: a poisoned tool, a
// server-level finding, an unreachable server and an unguarded trifecta.
func sampleReport() Report {
	poisoned := ServerReport{Name: "calc", WeirName: "calc", Pointer: "/mcpServers/calc", Line: 7, Transport: clients.TransportStdio, Status: StatusScanned,
		Tools: []ToolReport{{Name: "add", Labels: []string{}, Severity: "high", Findings: []Finding{
			{Detector: "instruction-markup", Severity: "high", Field: "description", Evidence: "<IMPORTANT>", Message: "Fake instruction markup."},
			{Detector: "sensitive-path", Severity: "high", Field: "description", Evidence: "~/.ssh/id_rsa", Message: "Names a file that holds secrets."},
			{Detector: "brand-new-detector", Severity: "low", Field: "title", Evidence: "x", Message: "Something new."},
		}}},
		Findings: []Finding{{Detector: "hidden-html", Severity: "medium", Field: `prompts["p"].description`, Evidence: "<!-- x -->", Message: "Hidden."}},
	}
	notes := ServerReport{Name: "notes", WeirName: "notes", Pointer: "/mcpServers/notes", Line: 3, Transport: clients.TransportStdio, Status: StatusScanned,
		Tools: []ToolReport{{Name: "read_note", Labels: []string{"private"}}, {Name: "fetch", Labels: []string{"untrusted", "sink"}}}}
	hang := ServerReport{Name: "hang", WeirName: "hang", Pointer: "/mcpServers/hang", Line: 11, Transport: clients.TransportStdio, Status: StatusFailed, Error: "did not answer initialize within 2s; stopped"}
	c := ConfigReport{Client: "claude-desktop", ClientName: "Claude Desktop", Path: "config dir/claude_desktop_config.json", Servers: []ServerReport{notes, poisoned, hang}}
	c.Trifecta = AssessTrifecta(c.Servers)
	abs := ConfigReport{Client: "cursor", Path: "/home/u/.cursor/mcp.json", Servers: []ServerReport{}, Trifecta: AssessTrifecta(nil)}
	return NewReport([]ConfigReport{c, abs})
}

func TestSARIFValidates(t *testing.T) {
	rep := sampleReport()
	out, err := rep.SARIF("1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	sch := validateSARIF(t, out)
	// The schema has teeth: a member SARIF does not define is refused.
	bad, _ := jsonschema.UnmarshalJSON(bytes.NewReader(bytes.Replace(out, []byte(`"ruleId"`), []byte(`"rule_id"`), 1)))
	if sch.Validate(bad) == nil {
		t.Errorf("the schema accepted a result with an unknown member")
	}

	// What code scanning needs beyond the schema: rule ids unique, every
	// result naming a rule that exists at its ruleIndex, a location with
	// a URI, a fingerprint, and numeric security severities.
	var log struct {
		Schema string `json:"$schema"`
		Runs   []struct {
			Tool struct {
				Driver struct {
					Name  string
					Rules []struct {
						ID         string
						Properties map[string]any
					}
				}
			}
			Results []struct {
				RuleID              string
				RuleIndex           int
				Level               string
				Message             struct{ Text string }
				PartialFingerprints map[string]string
				Locations           []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI string }
						Region           *struct{ StartLine int }
					}
				}
			}
		}
	}
	if err := json.Unmarshal(out, &log); err != nil {
		t.Fatal(err)
	}
	if log.Schema != SARIFSchema || len(log.Runs) != 1 || log.Runs[0].Tool.Driver.Name != "weir" {
		t.Fatalf("header: %s %d runs", log.Schema, len(log.Runs))
	}
	run := log.Runs[0]
	ids := map[string]bool{}
	for _, r := range run.Tool.Driver.Rules {
		if ids[r.ID] {
			t.Errorf("rule %s twice", r.ID)
		}
		ids[r.ID] = true
		if s, ok := r.Properties["security-severity"].(string); !ok || s == "" {
			t.Errorf("rule %s: security-severity %v", r.ID, r.Properties["security-severity"])
		}
	}
	for _, id := range []string{"instruction-markup", "sensitive-path", "shadowing", RuleTrifecta, RuleUnreachable, "brand-new-detector"} {
		if !ids[id] {
			t.Errorf("no rule %s", id)
		}
	}
	got := map[string]int{}
	for _, r := range run.Results {
		got[r.RuleID]++
		if r.RuleIndex < 0 || r.RuleIndex >= len(run.Tool.Driver.Rules) || run.Tool.Driver.Rules[r.RuleIndex].ID != r.RuleID {
			t.Errorf("%s: ruleIndex %d points elsewhere", r.RuleID, r.RuleIndex)
		}
		if len(r.Locations) != 1 || r.Locations[0].PhysicalLocation.ArtifactLocation.URI != "config%20dir/claude_desktop_config.json" {
			t.Errorf("%s: locations %+v", r.RuleID, r.Locations)
		}
		if len(r.PartialFingerprints) == 0 || r.Message.Text == "" {
			t.Errorf("%s: no fingerprint or message", r.RuleID)
		}
	}
	want := map[string]int{"instruction-markup": 1, "sensitive-path": 1, "brand-new-detector": 1, "hidden-html": 1, RuleUnreachable: 1, RuleTrifecta: 1}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%d results for %s, want %d (all: %v)", got[k], k, v, got)
		}
	}
	for _, r := range run.Results {
		switch r.RuleID {
		case "instruction-markup":
			if r.Level != "error" || r.Locations[0].PhysicalLocation.Region.StartLine != 7 || !strings.Contains(r.Message.Text, "calc/add, description") || !strings.Contains(r.Message.Text, `"<IMPORTANT>"`) {
				t.Errorf("finding result: %+v", r)
			}
		case RuleTrifecta:
			if r.Level != "error" || !strings.Contains(r.Message.Text, "notes/read_note") || r.Locations[0].PhysicalLocation.Region.StartLine != 3 {
				t.Errorf("trifecta result: %+v", r)
			}
		case RuleUnreachable:
			if r.Level != "warning" || !strings.Contains(r.Message.Text, "Server hang could not be scanned: did not answer initialize") {
				t.Errorf("unreachable result: %+v", r)
			}
		}
	}

	// The same report encodes to the same bytes.
	again, _ := rep.SARIF("1.2.3")
	if !bytes.Equal(out, again) {
		t.Errorf("SARIF output is not stable")
	}
}

func TestArtifactURI(t *testing.T) {
	for in, want := range map[string]string{
		".mcp.json":            ".mcp.json",
		"./x/.cursor/mcp.json": "x/.cursor/mcp.json",
		"/home/u/.claude.json": "file:///home/u/.claude.json",
		"/Users/a/Library/Application Support/Claude/claude_desktop_config.json": "file:///Users/a/Library/Application%20Support/Claude/claude_desktop_config.json",
	} {
		if got := artifactURI(in); got != want {
			t.Errorf("artifactURI(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestReportJSONStable(t *testing.T) {
	rep := sampleReport()
	out, err := rep.JSON()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out, []byte(`"evidence": "<IMPORTANT>"`)) {
		t.Errorf("HTML characters escaped, or evidence missing:\n%s", out)
	}
	// Keys sorted: "client" before "client_name" before "format".
	i, j := bytes.Index(out, []byte(`"client"`)), bytes.Index(out, []byte(`"trifecta"`))
	if i < 0 || j < 0 || i > j {
		t.Errorf("keys not sorted:\n%s", out)
	}
	s := rep.Summary
	if s.Servers != 3 || s.Scanned != 2 || s.Failed != 1 || s.Findings["high"] != 3 || s.Findings["medium"] != 1 || s.Findings["low"] != 1 || s.Trifecta != 1 || s.Unguarded != 1 || s.Highest != "high" {
		t.Errorf("summary %+v", s)
	}
}

// validateSARIF checks a SARIF log against sarifSubsetSchema, and returns
// the compiled schema.
func validateSARIF(t *testing.T, out []byte) *jsonschema.Schema {
	t.Helper()
	schemaDoc, err := jsonschema.UnmarshalJSON(strings.NewReader(sarifSubsetSchema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("sarif.json", schemaDoc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("sarif.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(doc); err != nil {
		t.Fatalf("SARIF output does not validate: %v\n%s", err, out)
	}
	return sch
}
