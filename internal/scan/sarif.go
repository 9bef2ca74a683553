package scan

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
)

// SARIF 2.1.0 output of `weir scan --format sarif`, for GitHub code
// scanning and other SARIF viewers. One run; one rule per detector, plus
// "lethal-trifecta" and "server-unreachable"; one result per finding, each
// located at the line of the server entry in the configuration file. A
// file whose trifecta verdict is unknown (Trifecta.Known false) gets a
// lethal-trifecta result of kind "open" (level "none") saying why.

// SARIFSchema is the URI of the SARIF 2.1.0 schema the output follows.
const SARIFSchema = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

// Rule ids besides the detectors'.
const (
	RuleTrifecta    = "lethal-trifecta"
	RuleUnreachable = "server-unreachable"
)

// sarifRule describes one rule for people.
type sarifRule struct {
	id, name, short, full string
	severity              string // the usual severity: low, medium, high
}

// sarifRules are the rules Weir can report, in a stable order: the
// detectors of internal/detect, then the configuration-level rules. A
// detector id missing here (a new detector) still gets a rule, with a
// generic description.
var sarifRules = []sarifRule{
	{"instruction-markup", "InstructionMarkup", "Fake system or instruction markup in a definition",
		"The definition carries markup that imitates system or instruction tags (<IMPORTANT>, <system>, [INST]...), a common way to smuggle orders to the model into a tool description.", "high"},
	{"ignore-instructions", "IgnoreInstructions", "Tells the model to ignore or override its instructions",
		"The text asks the model to disregard previous instructions or its rules: prompt injection placed in a definition.", "high"},
	{"prompt-extraction", "PromptExtraction", "Asks the model to reveal its prompt or context",
		"The text asks the model to disclose its system prompt, instructions or conversation.", "high"},
	{"conceal-from-user", "ConcealFromUser", "Tells the model to hide something from the user",
		"The text asks the model not to tell the user what it does: a hallmark of tool poisoning.", "high"},
	{"read-before-use", "ReadBeforeUse", "Demands that something be read or called before the tool is used",
		"The text tells the model to read a file or call a tool first, the way poisoned tools make an agent fetch data to leak.", "high"},
	{"addressed-to-model", "AddressedToModel", "Text addressed to the model rather than describing the tool",
		"The definition speaks to the AI assistant directly instead of describing what the tool does.", "medium"},
	{"sensitive-path", "SensitivePath", "Mentions a sensitive file or directory",
		"The text names a path that holds secrets (~/.ssh, .env, credentials, browser profiles...), which a description has no reason to mention.", "high"},
	{"secret-request", "SecretRequest", "Asks for secrets or credentials",
		"The text asks the model to provide keys, tokens, passwords or other credentials.", "high"},
	{"exfiltration-request", "ExfiltrationRequest", "Asks the model to send data somewhere",
		"The text asks the model to pass data to a parameter, address or URL where it leaves the session.", "high"},
	{"tool-call-request", "ToolCallRequest", "Asks the model to call a tool",
		"The text tells the model to invoke a tool, steering the agent from inside a definition.", "medium"},
	{"shadowing", "Shadowing", "Steers how another server's tools are used",
		"The definition names a tool of another server and tells the model how to use it: cross-server shadowing lets one server hijack another's tools.", "high"},
	{"name-collision", "NameCollision", "Tool name used by another server",
		"Two servers offer a tool of the same name; a client that does not namespace tools may call the wrong one.", "low"},
	{"tag-smuggling", "TagSmuggling", "Hidden text in Unicode tag characters",
		"Unicode tag characters encode text the user cannot see but the model reads.", "high"},
	{"invisible-control", "InvisibleControl", "Invisible control characters",
		"Zero-width or other invisible characters hide or split text.", "medium"},
	{"bidi-control", "BidiControl", "Bidirectional text controls",
		"Bidi controls can make text display differently from what the model reads.", "medium"},
	{"variation-selector-smuggling", "VariationSelectorSmuggling", "Hidden bytes in variation selectors",
		"A run of variation selectors encodes hidden bytes after a visible character.", "high"},
	{"homoglyph", "Homoglyph", "Look-alike characters from other scripts",
		"Latin letters mixed with Cyrillic or Greek look-alikes make a name or word read as one thing and match as another.", "medium"},
	{"ansi-escape", "ANSIEscape", "Terminal escape sequences",
		"ANSI escape sequences can hide or rewrite text in a terminal that shows the definition.", "medium"},
	{"hidden-html", "HiddenHTML", "Text hidden by HTML or CSS",
		"Text hidden from view by markup (display:none, comments...) that the model still reads.", "medium"},
	{"image-exfiltration", "ImageExfiltration", "Markdown image that carries data out",
		"An image URL with data in it: the client fetches it without asking, which leaks the data.", "high"},
	{"oversized", "Oversized", "Unusually long definition",
		"A definition far longer than a tool needs, room to hide instructions in.", "low"},
	{RuleTrifecta, "LethalTrifecta", "The configuration holds the lethal trifecta",
		"Tools that read private data, tools that bring in text an attacker can write, and tools that can send data out are all available to one agent: a prompt injection can make it leak. Run every server supplying a leg behind Weir (weir wrap) so that each sink call is decided from what the session has read.", "high"},
	{RuleUnreachable, "ServerUnreachable", "A server could not be scanned",
		"The server could not be started or did not answer in time, so its tools were not checked and are not counted in the trifecta verdict.", "medium"},
}

type (
	sarifLog struct {
		Schema  string     `json:"$schema"`
		Version string     `json:"version"`
		Runs    []sarifRun `json:"runs"`
	}
	sarifRun struct {
		Tool    sarifTool     `json:"tool"`
		Results []sarifResult `json:"results"`
	}
	sarifTool struct {
		Driver sarifDriver `json:"driver"`
	}
	sarifDriver struct {
		Name           string           `json:"name"`
		Version        string           `json:"version,omitempty"`
		InformationURI string           `json:"informationUri"`
		Rules          []sarifRuleDescr `json:"rules"`
	}
	sarifRuleDescr struct {
		ID                   string         `json:"id"`
		Name                 string         `json:"name"`
		ShortDescription     sarifText      `json:"shortDescription"`
		FullDescription      sarifText      `json:"fullDescription"`
		Help                 sarifText      `json:"help"`
		DefaultConfiguration sarifConfig    `json:"defaultConfiguration"`
		Properties           map[string]any `json:"properties"`
	}
	sarifConfig struct {
		Level string `json:"level"`
	}
	sarifText struct {
		Text string `json:"text"`
	}
	sarifResult struct {
		RuleID              string            `json:"ruleId"`
		RuleIndex           int               `json:"ruleIndex"`
		Kind                string            `json:"kind,omitempty"` // "fail" when absent
		Level               string            `json:"level"`
		Message             sarifText         `json:"message"`
		Locations           []sarifLocation   `json:"locations"`
		PartialFingerprints map[string]string `json:"partialFingerprints"`
		Properties          map[string]any    `json:"properties,omitempty"`
	}
	sarifLocation struct {
		PhysicalLocation sarifPhysical  `json:"physicalLocation"`
		LogicalLocations []sarifLogical `json:"logicalLocations,omitempty"`
	}
	sarifPhysical struct {
		ArtifactLocation sarifArtifact `json:"artifactLocation"`
		Region           *sarifRegion  `json:"region,omitempty"`
	}
	sarifArtifact struct {
		URI string `json:"uri"`
	}
	sarifRegion struct {
		StartLine int `json:"startLine"`
	}
	sarifLogical struct {
		Name               string `json:"name"`
		FullyQualifiedName string `json:"fullyQualifiedName"`
		Kind               string `json:"kind"`
	}
)

// sarifLevel maps a severity to a SARIF level.
func sarifLevel(sev string) string {
	switch sev {
	case "high":
		return "error"
	case "medium":
		return "warning"
	case "none":
		return "none"
	}
	return "note"
}

// securitySeverity is GitHub's numeric severity (0-10) for a severity.
func securitySeverity(sev string) string {
	switch sev {
	case "high":
		return "8.0"
	case "medium":
		return "5.0"
	}
	return "2.0"
}

// SARIF encodes the report as a SARIF 2.1.0 log. version is Weir's
// version, for the tool driver.
func (r Report) SARIF(version string) ([]byte, error) {
	rules := slices.Clone(sarifRules)
	index := map[string]int{}
	for i, ru := range rules {
		index[ru.id] = i
	}
	ruleIndex := func(id string) int {
		if i, ok := index[id]; ok {
			return i
		}
		rules = append(rules, sarifRule{id: id, name: id, short: "Tool-poisoning detector " + id, full: "Reported by Weir's tool-definition detector " + id + ".", severity: "medium"})
		index[id] = len(rules) - 1
		return index[id]
	}
	results := []sarifResult{}
	add := func(c ConfigReport, line int, ruleID, sev, msg string, logical *sarifLogical, identity ...string) {
		loc := sarifLocation{PhysicalLocation: sarifPhysical{ArtifactLocation: sarifArtifact{URI: artifactURI(c.Path)}}}
		if line > 0 {
			loc.PhysicalLocation.Region = &sarifRegion{StartLine: line}
		}
		if logical != nil {
			loc.LogicalLocations = []sarifLogical{*logical}
		}
		h := sha256.Sum256([]byte(strings.Join(append([]string{ruleID, c.Path}, identity...), "\x00")))
		results = append(results, sarifResult{
			RuleID: ruleID, RuleIndex: ruleIndex(ruleID), Level: sarifLevel(sev), Message: sarifText{msg},
			Locations:           []sarifLocation{loc},
			PartialFingerprints: map[string]string{"weirFinding/v1": hex.EncodeToString(h[:16])},
			Properties:          map[string]any{"severity": sev},
		})
	}
	for _, c := range r.Configs {
		for _, s := range c.Servers {
			if s.Status == StatusFailed || s.Status == StatusInvalid {
				add(c, s.Line, RuleUnreachable, "medium", fmt.Sprintf("Server %s could not be scanned: %s.", s.Name, strings.TrimSuffix(s.Error, ".")),
					&sarifLogical{Name: s.Name, FullyQualifiedName: s.Pointer, Kind: "module"}, s.Pointer)
			}
			for _, f := range s.Findings {
				add(c, s.Line, f.Detector, f.Severity, findingText(s.WeirName, "", f),
					&sarifLogical{Name: s.Name, FullyQualifiedName: s.Pointer, Kind: "module"}, s.Pointer, f.Field, f.Evidence)
			}
			for _, t := range s.Tools {
				for _, f := range t.Findings {
					add(c, s.Line, f.Detector, f.Severity, findingText(s.WeirName, t.Name, f),
						&sarifLogical{Name: t.Name, FullyQualifiedName: s.WeirName + "/" + t.Name, Kind: "function"}, s.Pointer, t.Name, f.Field, f.Evidence)
				}
			}
		}
		if !c.Trifecta.Known {
			// Not a failure of the rule, and not a pass: SARIF's "open"
			// (the tool could not tell), which takes level "none".
			add(c, 0, RuleTrifecta, "none", c.Trifecta.Summary, nil)
			results[len(results)-1].Kind = "open"
		}
		if c.Trifecta.Present {
			line := 0
			for _, s := range c.Servers {
				if len(c.Trifecta.Unguarded) > 0 && s.Name == c.Trifecta.Unguarded[0] {
					line = s.Line
				}
			}
			msg := fmt.Sprintf("%s Private data: %s. Untrusted input: %s. Sinks: %s.", c.Trifecta.Summary,
				strings.Join(c.Trifecta.Private, ", "), strings.Join(c.Trifecta.Untrusted, ", "), strings.Join(c.Trifecta.Sink, ", "))
			add(c, line, RuleTrifecta, c.Trifecta.Severity, msg, nil)
		}
	}
	log := sarifLog{Schema: SARIFSchema, Version: "2.1.0", Runs: []sarifRun{{
		Tool: sarifTool{Driver: sarifDriver{Name: "weir", Version: version, InformationURI: "https://github.com/weir-sec/weir"}},
	}}}
	for _, ru := range rules {
		log.Runs[0].Tool.Driver.Rules = append(log.Runs[0].Tool.Driver.Rules, sarifRuleDescr{
			ID: ru.id, Name: ru.name, ShortDescription: sarifText{ru.short}, FullDescription: sarifText{ru.full},
			Help:                 sarifText{ru.full},
			DefaultConfiguration: sarifConfig{Level: sarifLevel(ru.severity)},
			Properties:           map[string]any{"tags": []string{"security", "mcp"}, "security-severity": securitySeverity(ru.severity), "precision": "medium"},
		})
	}
	log.Runs[0].Results = results
	return stableJSON(log)
}

// findingText is a result message: where, what, and the evidence.
func findingText(server, tool string, f Finding) string {
	where := server
	if tool != "" {
		where += "/" + tool
	}
	msg := fmt.Sprintf("%s, %s: %s", where, f.Field, f.Message)
	if f.Evidence != "" {
		msg += fmt.Sprintf(" Evidence: %q.", f.Evidence)
	}
	return msg
}

// artifactURI turns a file path into a SARIF artifact URI: a relative
// reference for a relative path (resolved against the repository root by
// code scanning), a file: URI for an absolute one.
func artifactURI(p string) string {
	slash := filepath.ToSlash(p)
	if filepath.IsAbs(p) || strings.HasPrefix(slash, "/") {
		if !strings.HasPrefix(slash, "/") {
			slash = "/" + slash // C:/x → /C:/x
		}
		return (&url.URL{Scheme: "file", Path: slash}).String()
	}
	u := (&url.URL{Path: strings.TrimPrefix(slash, "./")}).String()
	return u
}
