package engine

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/weir-sec/weir/internal/detect"
	"github.com/weir-sec/weir/internal/flow"
	"github.com/weir-sec/weir/internal/jsonrpc"
	"github.com/weir-sec/weir/internal/pin"
)

// List is a tools/list result: the server's tool definitions as the client
// would see them, and what the caller gathered about them.
type List struct {
	// Server is the server's name, Identity its pin identity
	// ([pin.Identity]), Command its command line ([pin.CommandLine]).
	Server, Identity, Command string
	// Raw is the JSON-RPC result; Tools are its definitions and Elems the
	// raw JSON of each, in order ([ReadToolList]).
	Raw   json.RawMessage
	Tools []detect.Tool
	Elems []json.RawMessage
	// Instructions are the server's instructions, which every pin covers.
	Instructions string
	// Encoded, when the caller has them (a cache), are the pin encodings of
	// Tools with Instructions, in order ([pin.Encode]); nil means compute.
	Encoded []pin.Encoded
	// Findings are the tool-poisoning detectors' findings per tool name
	// (detect.ScanCatalogue over the whole catalogue).
	Findings map[string][]detect.Finding
	// Pins are the pins of this server identity, by tool name. When they
	// could not be read, PinsErr says why and every tool is withheld.
	Pins    map[string]pin.Pin
	PinsErr string
	// At is when the list was read, in Unix milliseconds.
	At int64
}

// ToolVerdict is the engine's verdict on one listed tool. Reason is one
// sentence for the person and the model; the findings are listed apart.
type ToolVerdict struct {
	Name string
	// State is the pin state: unchanged, new (pinned now), changed or
	// quarantined (both withheld), or unchecked (withheld: no pins).
	State pin.State
	// Hash is the pinned hash of the definition and the instructions.
	Hash     string
	Findings []detect.Finding
	// Verdict is block for a withheld tool, warn for one with a
	// medium-severity finding, else allow; Rule and Reason say why.
	Verdict flow.Verdict
	Rule    Rule
	Reason  string

	server string
}

// Withheld reports whether the tool is kept from the client.
func (t ToolVerdict) Withheld() bool { return t.State.Withheld() }

// decideList pins and judges each listed tool: a definition seen for the
// first time is pinned (trusted on first use) unless a detector flags it
// as tool poisoning, which quarantines it; a definition that differs from
// the approved pin (a rug pull) is withheld until a person approves it.
// Withheld tools are left out of the list the client gets.
func decideList(_ Inputs, l List) Decision {
	var d Decision
	count := map[string]int{}
	for _, t := range l.Tools {
		count[t.Name]++
	}
	keep := make([]json.RawMessage, 0, len(l.Tools))
	changed := commandChange(l)
	withheld := 0
	for i, t := range l.Tools {
		tv, write := judgeTool(l, i, t, count[t.Name] > 1, changed)
		if tv.Withheld() {
			withheld++
		}
		d.Tools = append(d.Tools, tv)
		if write != nil {
			d.Delta.Pins = append(d.Delta.Pins, *write)
		}
		if tv.Verdict != flow.Allow {
			d.add(Finding{tv.Rule, tv.Verdict, tv.Reason})
		}
		if !tv.Withheld() && i < len(l.Elems) {
			keep = append(keep, l.Elems[i])
		}
	}
	if changed != "" {
		// A notice, once: the pins written now carry the new command.
		why := changed + "; the definitions that did not change are kept"
		if withheld > 0 {
			why += fmt.Sprintf(", and %d that changed with it are withheld until approved (weir pins diff %s)", withheld, l.Server)
		}
		d.add(Finding{RuleCommandChanged, flow.Warn, why})
	}
	if len(keep) < len(l.Tools) {
		var arr []byte
		arr = append(arr, '[')
		for i, e := range keep {
			if i > 0 {
				arr = append(arr, ',')
			}
			arr = append(arr, e...)
		}
		arr = append(arr, ']')
		d.Rewrite, _ = jsonrpc.ReplaceMember(l.Raw, "tools", arr)
	}
	d.finish()
	return d
}

// commandChange says how the server's command changed since its pins were
// written ("" when it did not, or nothing was pinned under a command).
func commandChange(l List) string {
	if l.Command == "" {
		return ""
	}
	for _, p := range l.Pins {
		if p.Command != "" && p.Command != l.Command {
			return fmt.Sprintf("the command of server %s changed from `%s` to `%s`", l.Server, p.Command, l.Command)
		}
	}
	return ""
}

// judgeTool returns the verdict on the i-th tool and the pin to write, if
// any. changed, when not empty, says how the server's command changed.
func judgeTool(l List, i int, t detect.Tool, repeated bool, changed string) (ToolVerdict, *pin.Pin) {
	name := l.Server + "/" + t.Name
	fs := l.Findings[t.Name]
	var enc []byte
	var hash string
	if i < len(l.Encoded) {
		enc, hash = l.Encoded[i].Enc, l.Encoded[i].Hash
	} else {
		enc, hash = pin.Encode(t, l.Instructions)
	}
	tv := ToolVerdict{Name: t.Name, Hash: hash, Findings: fs, server: l.Server}
	withhold := func(s pin.State, rule Rule, why string) {
		tv.State, tv.Verdict, tv.Rule, tv.Reason = s, flow.Block, rule, why
	}
	switch {
	case l.PinsErr != "":
		withhold(pin.Unchecked, RulePinUnchecked, fmt.Sprintf("Weir could not check the pin of %s (%s)", name, l.PinsErr))
		return tv, nil
	case repeated:
		withhold(pin.Unchecked, RuleProtocol, fmt.Sprintf("the server lists more than one tool named %s, so Weir cannot tell which one a call would run", name))
		return tv, nil
	}
	p, seen := l.Pins[t.Name]
	old := p
	if !seen {
		p = pin.Pin{Identity: l.Identity, Tool: t.Name, Server: l.Server, FirstSeen: l.At}
	}
	p.Updated = l.At
	newCommand := p.Command != l.Command
	p.Command = l.Command
	high := detectorIDs(fs, detect.High)
	switch {
	case p.Hash == hash:
		tv.State = pin.Unchanged
		if p.PendingHash == "" {
			tv.warnOn(fs)
			if newCommand {
				return tv, &p
			}
			return tv, nil
		}
		// The server went back to the approved definition: drop what was
		// waiting.
		p.PendingHash, p.PendingDef, p.PendingWhy = "", nil, ""
		tv.warnOn(fs)
	case p.Hash != "":
		why := fmt.Sprintf("the definition of %s changed since it was approved", name)
		if changed != "" {
			why += " (" + changed + ")"
		}
		if len(high) > 0 {
			why += fmt.Sprintf(", and the new one is flagged (%s)", strings.Join(high, ", "))
		}
		withhold(pin.Changed, RulePinChanged, why)
		p.PendingHash, p.PendingDef, p.PendingWhy = hash, enc, "changed"
	case len(high) > 0:
		withhold(pin.Quarantined, DetectorRule(high[0]),
			fmt.Sprintf("the definition of %s is flagged as tool poisoning (%s)", name, strings.Join(high, ", ")))
		p.PendingHash, p.PendingDef, p.PendingWhy = hash, enc, "quarantined: "+strings.Join(high, ", ")
	default:
		tv.State = pin.Pinned
		p.Hash, p.Definition = hash, enc
		p.PendingHash, p.PendingDef, p.PendingWhy = "", nil, ""
		tv.warnOn(fs)
	}
	if seen && tv.Withheld() && p.PendingHash == old.PendingHash && !newCommand {
		return tv, nil // already waiting for approval: nothing to write
	}
	return tv, &p
}

// warnOn makes a tool that is not withheld a warning when a detector found
// something of medium severity in it.
func (tv *ToolVerdict) warnOn(fs []detect.Finding) {
	if sev := detect.Max(fs); sev >= detect.Medium {
		ids := detectorIDs(fs, detect.Medium)
		tv.Verdict, tv.Rule = flow.Warn, DetectorRule(ids[0])
		tv.Reason = fmt.Sprintf("the definition of %s/%s has findings of medium severity (%s)", tv.server, tv.Name, strings.Join(ids, ", "))
	}
}

// FindingEvidence is FindingList with each finding's evidence, for the
// records and listings about a definition: definitions are the server's
// metadata, not the user's data, and a person deciding on one needs to see
// what was found.
func FindingEvidence(fs []detect.Finding) string {
	var parts []string
	for _, f := range fs {
		p := fmt.Sprintf("%s (%s) in %s", f.Detector, f.Severity, f.Field)
		if f.Evidence != "" {
			p += fmt.Sprintf(": %q", f.Evidence)
		}
		if !slices.Contains(parts, p) {
			parts = append(parts, p)
		}
	}
	return "findings: " + strings.Join(parts, "; ")
}

// FindingList names findings for the audit log and reasons:
// "findings: shadowing (high) in description, ...", each once. Evidence
// stays out: it can quote the text.
func FindingList(fs []detect.Finding) string {
	var parts []string
	for _, f := range fs {
		if p := fmt.Sprintf("%s (%s) in %s", f.Detector, f.Severity, f.Field); !slices.Contains(parts, p) {
			parts = append(parts, p)
		}
	}
	return "findings: " + strings.Join(parts, ", ")
}

// Instructions are a server's instructions, from its initialize or
// server/discover result.
type Instructions struct {
	Server string
	// Raw is the JSON-RPC result the instructions came in; Text the
	// instructions ([ReadInstructions]).
	Raw  json.RawMessage
	Text string
	// Findings are the detectors' findings in them.
	Findings []detect.Finding
}

// decideInstructions withholds instructions flagged as tool poisoning:
// they are replaced with a notice. Medium findings warn.
func decideInstructions(_ Inputs, ins Instructions) Decision {
	var d Decision
	switch sev := detect.Max(ins.Findings); {
	case sev >= detect.High:
		ids := detectorIDs(ins.Findings, detect.High)
		d.add(Finding{DetectorRule(ids[0]), flow.Block, fmt.Sprintf("the instructions of %s are flagged as tool poisoning; %s", ins.Server, FindingList(ins.Findings))})
		notice, _ := json.Marshal(fmt.Sprintf("[Weir withheld this server's instructions: they are flagged as tool poisoning (%s). See weir audit tail.]", strings.Join(ids, ", ")))
		d.Rewrite, _ = jsonrpc.ReplaceMember(ins.Raw, "instructions", notice)
	case sev >= detect.Medium:
		d.add(Finding{DetectorRule(detectorIDs(ins.Findings, detect.Medium)[0]), flow.Warn, FindingList(ins.Findings)})
	}
	d.finish()
	return d
}

// The members of the results Weir reads definitions from.
var (
	listMembers = []string{"tools", "nextCursor", "_meta"}
	toolMembers = []string{"name", "title", "description", "inputSchema", "outputSchema", "annotations", "icons", "_meta"}
	initMembers = []string{"instructions", "protocolVersion", "capabilities", "serverInfo", "_meta"}
)

// ReadToolList reads the tool definitions of a tools/list result with
// exact member names: a repeated or case-variant member is an error, so
// that the tools Weir judges are the tools every client reads. It returns
// the definitions and the raw JSON of each, in order. server fills each
// definition's Server.
func ReadToolList(server string, raw json.RawMessage) ([]detect.Tool, []json.RawMessage, error) {
	if i := jsonrpc.SkipSpace(raw, 0); i >= len(raw) || raw[i] != '{' {
		return nil, nil, fmt.Errorf("the tool list is not a JSON object")
	}
	var tools []detect.Tool
	var elems []json.RawMessage
	err := jsonrpc.Fields(raw, listMembers, func(name string, v []byte) error {
		if name != "tools" {
			return nil
		}
		if v[0] != '[' {
			return fmt.Errorf("tools is not a list")
		}
		return jsonrpc.EachElement(v, func(i int, e []byte) error {
			t, err := readTool(e)
			if err != nil {
				return fmt.Errorf("tools[%d]: %w", i, err)
			}
			t.Server = server
			tools = append(tools, t)
			elems = append(elems, e)
			return nil
		})
	})
	return tools, elems, err
}

func readTool(e []byte) (detect.Tool, error) {
	var t detect.Tool
	if e[0] != '{' {
		return t, fmt.Errorf("a tool definition is not a JSON object")
	}
	str := func(name string, v []byte, dst *string) error {
		if v[0] != '"' {
			return fmt.Errorf("%s is not a string", name)
		}
		var err error
		*dst, err = jsonrpc.Unquote(v)
		return err
	}
	err := jsonrpc.Fields(e, toolMembers, func(name string, v []byte) error {
		switch name {
		case "name":
			return str(name, v, &t.Name)
		case "title":
			return str(name, v, &t.Title)
		case "description":
			return str(name, v, &t.Description)
		case "inputSchema":
			t.InputSchema = v
		case "outputSchema":
			t.OutputSchema = v
		case "annotations":
			t.Annotations = v
		}
		return nil
	})
	if err == nil && t.Name == "" {
		err = fmt.Errorf("a tool definition has no name")
	}
	return t, err
}

// ReadInstructions reads the instructions of an initialize or
// server/discover result, with exact member names.
func ReadInstructions(raw json.RawMessage) (string, error) {
	var text string
	if i := jsonrpc.SkipSpace(raw, 0); i >= len(raw) || raw[i] != '{' {
		return "", fmt.Errorf("the result is not a JSON object")
	}
	err := jsonrpc.Fields(raw, initMembers, func(name string, v []byte) error {
		if name == "instructions" && v[0] == '"' {
			var err error
			text, err = jsonrpc.Unquote(v)
			return err
		}
		return nil
	})
	return text, err
}

// DefOf is the part of a definition labelling reads: the input schema's
// top-level property names and the annotation hints. Hints are read
// whatever their case (a Go client reads "ReadOnlyHint" as readOnlyHint);
// when spellings disagree, the reading with more labels wins (labels only
// widen): openWorldHint and destructiveHint are true if any spelling says
// so, readOnlyHint only if every spelling does.
func DefOf(t detect.Tool) ToolDef {
	d := ToolDef{Name: t.Name, Description: t.Description}
	if len(t.InputSchema) > 0 && t.InputSchema[0] == '{' {
		var required []string
		props := map[string]Param{}
		_ = jsonrpc.EachMember(t.InputSchema, func(name string, v []byte) error {
			switch {
			case strings.EqualFold(name, "required") && len(v) > 0 && v[0] == '[':
				_ = json.Unmarshal(v, &required)
			case strings.EqualFold(name, "properties") && len(v) > 0 && v[0] == '{':
				return jsonrpc.EachMember(v, func(p string, pv []byte) error {
					if !slices.Contains(d.Params, p) {
						d.Params = append(d.Params, p)
						props[p] = paramOf(p, pv)
					}
					return nil
				})
			}
			return nil
		})
		slices.Sort(d.Params)
		if len(d.Params) > 0 {
			d.Schema = make([]Param, len(d.Params))
			for i, p := range d.Params {
				d.Schema[i] = props[p]
				d.Schema[i].Required = slices.Contains(required, p)
			}
		}
	}
	if len(t.Annotations) > 0 && t.Annotations[0] == '{' {
		_ = jsonrpc.EachMember(t.Annotations, func(name string, v []byte) error {
			var dst **bool
			wins := true // the value that wins a disagreement
			switch strings.ToLower(name) {
			case "readonlyhint":
				dst, wins = &d.Annotations.ReadOnly, false
			case "destructivehint":
				dst = &d.Annotations.Destructive
			case "openworldhint":
				dst = &d.Annotations.OpenWorld
			default:
				return nil
			}
			if b := string(v); b == "true" || b == "false" {
				val := b == "true"
				if *dst == nil || val == wins {
					*dst = &val
				}
			}
			return nil
		})
	}
	return d
}

// maxEnum bounds the enum values a Param keeps.
const maxEnum = 32

// paramOf reads a property schema's type, format, description and string
// enum values (the first type of a union, the items' type for none).
func paramOf(name string, v []byte) Param {
	p := Param{Name: name}
	var s struct {
		Type        json.RawMessage `json:"type"`
		Format      string          `json:"format"`
		Description string          `json:"description"`
		Enum        []any           `json:"enum"`
		AnyOf       []struct {
			Type   json.RawMessage `json:"type"`
			Format string          `json:"format"`
		} `json:"anyOf"`
	}
	if len(v) == 0 || v[0] != '{' || json.Unmarshal(v, &s) != nil {
		return p
	}
	typ := func(raw json.RawMessage) string {
		var one string
		if json.Unmarshal(raw, &one) == nil {
			return one
		}
		var many []string
		if json.Unmarshal(raw, &many) == nil {
			for _, t := range many {
				if t != "null" {
					return t
				}
			}
		}
		return ""
	}
	p.Type, p.Format, p.Description = typ(s.Type), s.Format, s.Description
	var enum []string
	for _, e := range s.Enum {
		if v, ok := e.(string); ok && len(enum) < maxEnum {
			enum = append(enum, strings.ToLower(v))
		}
	}
	p.Enum = strings.Join(enum, "|")
	for _, a := range s.AnyOf {
		if p.Type == "" {
			if t := typ(a.Type); t != "null" {
				p.Type = t
			}
		}
		if p.Format == "" {
			p.Format = a.Format
		}
	}
	return p
}
