package detect

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Severity ranks a finding. The zero value, None, means no finding.
type Severity uint8

const (
	None   Severity = iota // no finding (Max of an empty list)
	Low                    // record it
	Medium                 // warn
	High                   // quarantine a definition; raise the verdict on a result
)

func (s Severity) String() string {
	switch s {
	case None:
		return "none"
	case Low:
		return "low"
	case Medium:
		return "medium"
	case High:
		return "high"
	}
	return "severity(" + strconv.Itoa(int(s)) + ")"
}

// Finding is one thing a detector found in one field.
type Finding struct {
	// Detector is the stable id of the detector: instruction-markup,
	// ignore-instructions, prompt-extraction, conceal-from-user,
	// read-before-use, addressed-to-model, sensitive-path, secret-request,
	// exfiltration-request, shadowing, name-collision, tool-call-request,
	// preference-manipulation, deprecation-redirect, argument-tampering,
	// shell-command, side-task, exfil-parameter, tag-smuggling,
	// invisible-control, bidi-control, variation-selector-smuggling,
	// homoglyph, ansi-escape, hidden-html, image-exfiltration, oversized.
	Detector string
	Severity Severity
	// Field says where: "name", "title", "description", "instructions",
	// a JSON path into a schema or the annotations
	// ("inputSchema.properties.path.description",
	// "inputSchema.properties[\"a.b\"].default", "outputSchema.required[0]"),
	// the same path with "#key" for an object key itself
	// ("inputSchema.properties.sidenote#key"), `prompts["name"].description`,
	// `resources["name"].description`, or for ScanText the field it was
	// given ("result.content[0].text").
	Field string
	// Start and End are the byte span of the evidence in the field's text
	// (for a schema field: the decoded JSON string).
	Start, End int
	// Evidence is the span made visible, at most 120 bytes: invisible
	// characters as \u{…}, tag characters decoded ("⟦tags: …⟧"),
	// controls as \x1b, \n….
	Evidence string
	// Message is one sentence for a person: what was found and why it
	// matters.
	Message string
}

// Tool is a tool definition: every field of it that a model sees.
type Tool struct {
	Server                    string // the server that lists it
	Name, Title, Description  string
	InputSchema, OutputSchema json.RawMessage // every key and string value is scanned
	Annotations               json.RawMessage
}

// Catalogue is what one server shows the model.
type Catalogue struct {
	Server       string
	Instructions string // the server's initialize instructions
	Tools        []Tool
	Prompts      []NamedText
	Resources    []NamedText
}

// NamedText is a prompt or resource: a name and a description.
type NamedText struct{ Name, Description string }

// Max returns the highest severity of fs, or None when fs is empty.
func Max(fs []Finding) Severity {
	m := None
	for _, f := range fs {
		if f.Severity > m {
			m = f.Severity
		}
	}
	return m
}

// ScanTool returns the findings of one tool definition, in field order.
// others lists the tools of other servers (server → tool names) for the
// shadowing detector; an entry for t.Server itself is ignored, and a name
// t itself has never counts.
func ScanTool(t Tool, others map[string][]string) []Finding {
	return scanTool(t, others, []string{t.Name})
}

// ScanCatalogue scans a server's whole catalogue. The result maps a tool
// name to its findings, and "" to the server-level findings (instructions,
// prompts, resources); names without findings are absent. Mentions of the
// catalogue's own tools never count as shadowing.
func ScanCatalogue(c Catalogue, others map[string][]string) map[string][]Finding {
	same := make([]string, 0, len(c.Tools)+len(c.Prompts))
	for _, t := range c.Tools {
		same = append(same, t.Name)
	}
	for _, p := range c.Prompts {
		same = append(same, p.Name)
	}
	out := map[string][]Finding{}
	ix := newShadowIndex(others, c.Server, same)
	for _, t := range c.Tools {
		ix.addTitle(t.Title)
	}
	var server []rawFinding
	server = append(server, scanField(ctxDef, "instructions", c.Instructions, fieldOpts{shadow: ix})...)
	server = append(server, oversizedText("instructions", c.Instructions)...)
	for _, group := range []struct {
		kind  string
		items []NamedText
	}{{"prompts", c.Prompts}, {"resources", c.Resources}} {
		for _, p := range group.items {
			base := group.kind + "[" + strconv.Quote(p.Name) + "]"
			server = append(server, scanField(ctxDef, base+".name", p.Name, fieldOpts{})...)
			server = append(server, scanField(ctxDef, base+".description", p.Description, fieldOpts{shadow: ix})...)
			server = append(server, oversizedText(base+".description", p.Description)...)
		}
	}
	if fs := finish(ctxDef, server); len(fs) > 0 {
		out[""] = fs
	}
	for _, t := range c.Tools {
		if c.Server != "" && t.Server == "" {
			t.Server = c.Server
		}
		if fs := scanToolWith(t, others, ix); len(fs) > 0 {
			out[t.Name] = append(out[t.Name], fs...)
		}
	}
	return out
}

func scanTool(t Tool, others map[string][]string, same []string) []Finding {
	return scanToolWith(t, others, newShadowIndex(others, t.Server, same))
}

func scanToolWith(t Tool, others map[string][]string, ix *shadowIndex) []Finding {
	// each schema is decoded once: the input schema's words are the
	// tool's own vocabulary for every field's shadowing scan
	schemas := [...]jsonField{decodeField("inputSchema", t.InputSchema), decodeField("outputSchema", t.OutputSchema),
		decodeField("annotations", t.Annotations)}
	ix = ix.withLocal(schemaWords(schemas[0].v))
	var raw []rawFinding
	raw = append(raw, scanField(ctxDef, "name", t.Name, fieldOpts{})...)
	// a tool named for secrets (secret_put, get_api_key) describes itself
	// in terms of secrets: that is its job, not a request for one
	secretTool := secretName(t.Name)
	raw = append(raw, scanField(ctxDef, "title", t.Title, fieldOpts{shadow: ix, secretName: secretTool})...)
	raw = append(raw, scanField(ctxDef, "description", t.Description, fieldOpts{shadow: ix, secretName: secretTool})...)
	raw = append(raw, scanPayloads("description", t.Description, ix)...)
	raw = append(raw, oversizedText("description", t.Description)...)
	for _, sch := range schemas {
		raw = append(raw, scanJSON(sch, ix, secretTool)...)
		if sch.name != "annotations" {
			raw = append(raw, oversizedSchema(sch.name, sch.raw)...)
		}
	}
	raw = append(raw, impersonation(t, others)...)
	raw = append(raw, modelFinding(t, schemas[0], schemas[1], raw)...)
	for _, srv := range sortedServers(others) {
		if srv == t.Server {
			continue
		}
		for _, n := range others[srv] {
			if n == t.Name && n != "" {
				raw = append(raw, rawFinding{Finding: Finding{Detector: detNameCollide, Severity: Low, Field: "name", End: len(t.Name),
					Evidence: visible(t.Name, false),
					Message:  "Server " + srv + " has a tool with the same name: a client that does not namespace tools may call the wrong one."}})
			}
		}
	}
	return finish(ctxDef, raw)
}

// ScanText scans text a tool returned (or any text the model is about to
// read) and returns the findings, with field as their Field.
func ScanText(field, text string) []Finding {
	return finish(ctxRes, scanField(ctxRes, field, text, fieldOpts{}))
}

// ctxKind says whether text is part of a definition or a result: the same
// sign weighs more in a definition, which should hold no instructions to
// hide, than in a result, which quotes the world.
type ctxKind uint8

const (
	ctxDef ctxKind = iota
	ctxRes
)

type fieldOpts struct {
	shadow     *shadowIndex
	secretName bool // the field describes a parameter named like a secret
	param      bool // the field is part of a parameter's schema (a description, a default…)
}

// rawFinding is a finding before the cross-finding rules run.
type rawFinding struct {
	Finding
	mention bool // demoted because the text talks about the phrase
}

// corroborating are the detectors whose findings reinforce each other: two
// of them in one definition (or one result) are more than either alone.
var corroborating = map[string]bool{
	detMarkup: true, detIgnore: true, detConceal: true, detReadFirst: true, detPath: true,
	detSecret: true, detExfil: true, detShadow: true, detAddress: true, detTag: true, detVS: true, detExtract: true, detToolCall: true,
	detPrefer: true, detDeprecate: true, detTamper: true, detCommand: true, detExfilArg: true, detSideTask: true,
}

// IsInjectionDetector reports whether id names a detector of instructions
// aimed at the model (markup, injection phrasing, requests for paths,
// secrets or data, steering of tool choice and arguments, shell commands,
// hidden tag or variation-selector payloads), as opposed to hiding
// techniques and hygiene. Precision and recall are measured on
// these.
func IsInjectionDetector(id string) bool { return injectionDetectors[id] }

var injectionDetectors = map[string]bool{
	detMarkup: true, detIgnore: true, detConceal: true, detReadFirst: true, detPath: true,
	detSecret: true, detExfil: true, detAddress: true, detTag: true, detVS: true, detExtract: true, detToolCall: true,
	detPrefer: true, detDeprecate: true, detTamper: true, detCommand: true, detExfilArg: true, detSideTask: true,
	detModel: true,
}

const maxPerDetector = 8

// scanField runs every text detector over one field.
func scanField(ctx ctxKind, field, text string, opt fieldOpts) []rawFinding {
	if text == "" {
		return nil
	}
	var out []rawFinding
	// room for the findings of a text that has some, once it has one: most
	// fields (a schema's strings) have none, a short one few
	grow := func() {
		if out == nil {
			out = make([]rawFinding, 0, min(16, 2+len(text)/256))
		}
	}
	// at most maxPerDetector findings per detector and severity: hostile
	// text can hold a million escapes, and finish keeps only the most
	// severe maxPerDetector of each detector anyway. A field has findings
	// of a few detectors at most, so they are counted in a short list.
	type detCount struct {
		det string
		c   [4]uint8
	}
	var countBuf [8]detCount
	counts := countBuf[:0]
	last := -1
	add := func(det string, sev Severity, start, end int, msg string) {
		if last < 0 || counts[last].det != det {
			last = -1
			for k := range counts {
				if counts[k].det == det {
					last = k
					break
				}
			}
			if last < 0 {
				counts = append(counts, detCount{det: det})
				last = len(counts) - 1
			}
		}
		c := &counts[last].c
		if c[sev&3] >= maxPerDetector {
			return
		}
		c[sev&3]++
		grow()
		out = append(out, rawFinding{Finding: Finding{Detector: det, Severity: sev, Field: field, Start: start, End: end, Message: msg}})
	}
	v := newView(text)
	for _, h := range matchPhrases(v) {
		r := &phraseRules[h.rule]
		if opt.secretName && r.detector == detSecret {
			continue
		}
		if r.check != 0 {
			ok, a := postCheck(v, r, h.a, h.b, opt.shadow, opt.param)
			if !ok {
				continue
			}
			h.a = a
		}
		sev := sevFor(ctx, r.def, r.res)
		if h.mention {
			sev = demote(ctx, sev)
		}
		s, e := v.tokSpan(h.a, h.b)
		if h.rule >= intentStart && (r.destAfter || r.check&(chkDestNear|chkDestIn) != 0) {
			// the rules of intent.go show the address they are about
			e = destEnd(text, e)
		}
		grow()
		out = append(out, rawFinding{Finding: Finding{Detector: r.detector, Severity: sev, Field: field, Start: s, End: e, Message: r.msg}, mention: h.mention})
	}
	mhits, inExample := scanMarkup(v)
	for hi, h := range mhits {
		sev, msg := markupSeverity(h, ctx)
		if h.kind == mkOddTag && bracketLabels[h.name] && !labelDirects(v, h.ne) {
			// "[CRITICAL] SSO mode opens a browser": a label on a
			// statement; "[important] read the notes first" gives orders
			sev = Low
		}
		ta := v.tokenAt(h.ns)
		mention := false
		if inExample[hi] && h.kind != mkTag && h.kind != mkOddTag {
			// a chat turn inside <examples> or a code fence illustrates a
			// conversation; a system turn there is still odd
			mention = true
			sev = demote(ctx, sev)
			if exampleRoles[h.name] {
				sev = min(sev, Low)
			}
		} else if ta < len(v.toks) && (h.kind == mkTag || h.kind == mkToken || h.kind == mkRoleTag || h.kind == mkOddTag) {
			tb := max(ta, v.tokenAt(h.ne)-1)
			if tb >= len(v.toks) {
				tb = len(v.toks) - 1
			}
			if isMention(v, ta, tb) {
				mention = true
				sev = demote(ctx, sev)
			}
		}
		s, e := v.span(h.ns, h.ne)
		grow()
		out = append(out, rawFinding{Finding: Finding{Detector: detMarkup, Severity: sev, Field: field, Start: s, End: e, Message: msg}, mention: mention})
	}
	for _, h := range scanPaths(v) {
		req := requested(v, h.ns, h.ne)
		var sev Severity
		var msg string
		switch {
		case req:
			sev = sevFor(ctx, High, Medium)
			msg = "Asks for " + h.lit.what + ": instructions to read or send credential files are how poisoned tools steal secrets."
		case pathExample(v, h.ns, h.ne):
			sev = Low
			msg = "Mentions " + h.lit.what + " as an example or as a path it refuses."
		default:
			sev = sevFor(ctx, Medium, Low)
			msg = "Mentions " + h.lit.what + "."
		}
		s, e := v.span(h.ns, h.ne)
		add(detPath, sev, s, e, msg)
	}
	for _, h := range scanCommands(v) {
		sev, msg := commandSeverity(v, h, ctx)
		s, e := v.span(h.ns, h.ne)
		add(detCommand, sev, s, e, msg)
	}
	if v.specials {
		scanUnicode(text, ctx, add)
	}
	if v.controls {
		scanANSI(text, ctx, add)
	}
	scanShadow(text, v, opt.shadow, add)
	if strings.IndexByte(text, '<') >= 0 {
		spans, imgs := scanHiddenHTML(text, ctx == ctxDef)
		for _, h := range spans {
			add(detHiddenHTML, hiddenSeverity(ctx, h.text), h.start, h.end, "Text hidden from view by "+h.why+": the model reads it, a person looking at the page does not.")
		}
		for _, u := range imgs {
			if k := strings.Index(text, u); k >= 0 {
				add(detImageExfil, sevFor(ctx, High, Medium), k, k+len(u), "An image whose URL carries data: the client fetches it without a tool call, so it can carry data out.")
			}
		}
	}
	v.release()
	_, ispans := scanImages(text)
	for _, sp := range ispans {
		add(detImageExfil, sevFor(ctx, High, Medium), sp[0], sp[1], "A markdown image whose URL carries data: the client fetches it without a tool call, so it can carry data out.")
	}
	out = mergeOverlaps(out)
	setEvidences(out, text)
	return out
}

// exampleRoles are the conversation roles an example may show.
var exampleRoles = map[string]bool{"user": true, "human": true, "assistant": true, "response": true, "input": true, "ai": true, "model": true, "bot": true}

// mergeOverlaps merges findings of one detector whose spans overlap (two
// phrase rules matching one sentence), keeping the widest span and the
// highest severity.
func mergeOverlaps(fs []rawFinding) []rawFinding {
	if len(fs) < 2 {
		return fs
	}
	slices.SortStableFunc(fs, func(a, b rawFinding) int {
		if c := strings.Compare(a.Detector, b.Detector); c != 0 {
			return c
		}
		return cmp.Compare(a.Start, b.Start)
	})
	out := fs[:1]
	for _, f := range fs[1:] {
		last := &out[len(out)-1]
		if f.Detector != last.Detector || f.Start >= last.End || f.End <= f.Start || last.End <= last.Start {
			out = append(out, f)
			continue
		}
		last.End = max(last.End, f.End)
		if f.Severity > last.Severity {
			last.Severity, last.Message = f.Severity, f.Message
		}
		last.mention = last.mention && f.mention
	}
	return out
}

// demote lowers a finding about a phrase that the text only talks about.
func demote(ctx ctxKind, sev Severity) Severity {
	if ctx == ctxRes {
		return min(sev, Low)
	}
	if sev == High {
		return Medium
	}
	return Low
}

// finish applies corroboration, caps the findings per field and detector,
// orders them and fills in the evidence.
func finish(ctx ctxKind, raw []rawFinding) []Finding {
	if len(raw) == 0 {
		return nil
	}
	// Corroboration: two different injection detectors in one definition
	// (or one result) reinforce each other. In a definition their Medium
	// findings become High; in a result their Low findings become Medium.
	// the detectors that corroborate, in a short list: two are enough
	var dets []string
	for _, f := range raw {
		if corroborating[f.Detector] && !f.mention && (f.Severity >= Medium || ctx == ctxRes) && !(ctx == ctxDef && f.Detector == detAddress) {
			if !slices.Contains(dets, f.Detector) {
				dets = append(dets, f.Detector)
			}
		}
	}
	if len(dets) >= 2 {
		for i := range raw {
			f := &raw[i]
			if f.mention || !slices.Contains(dets, f.Detector) {
				continue
			}
			if ctx == ctxDef && f.Severity == Medium {
				f.Severity = High
				f.Message += " Other signs of poisoning in the same definition make this severe."
			}
			if ctx == ctxRes && f.Severity == Low {
				f.Severity = Medium
				f.Message += " Other signs of injected instructions in the same text make this worth a warning."
			}
		}
	}
	// keep the most severe findings per (field, detector); the fields in
	// the order they first appear (ScanText's findings have one)
	var fieldOrder map[string]int
	for _, f := range raw {
		if f.Field != raw[0].Field {
			fieldOrder = map[string]int{}
			for _, f := range raw {
				if _, ok := fieldOrder[f.Field]; !ok {
					fieldOrder[f.Field] = len(fieldOrder)
				}
			}
			break
		}
	}
	byField := func(a, b string) int {
		if a == b || fieldOrder == nil {
			return 0
		}
		return cmp.Compare(fieldOrder[a], fieldOrder[b])
	}
	slices.SortStableFunc(raw, func(a, b rawFinding) int {
		if c := byField(a.Field, b.Field); c != 0 {
			return c
		}
		if c := strings.Compare(a.Detector, b.Detector); c != 0 {
			return c
		}
		if a.Severity != b.Severity {
			return cmp.Compare(b.Severity, a.Severity)
		}
		return cmp.Compare(a.Start, b.Start)
	})
	// sorted, each (field, detector) is one run
	fs := make([]Finding, 0, len(raw))
	n := 0
	for i, f := range raw {
		if i == 0 || f.Field != raw[i-1].Field || f.Detector != raw[i-1].Detector {
			n = 0
		}
		if n >= maxPerDetector {
			continue
		}
		n++
		fs = append(fs, f.Finding)
	}
	slices.SortStableFunc(fs, func(a, b Finding) int {
		if c := byField(a.Field, b.Field); c != 0 {
			return c
		}
		if a.Start != b.Start {
			return cmp.Compare(a.Start, b.Start)
		}
		if a.End != b.End {
			return cmp.Compare(a.End, b.End)
		}
		return strings.Compare(a.Detector, b.Detector)
	})
	return fs
}

// setEvidences fills the Evidence of fs from the field text (a span out
// of range becomes empty). Evidence that is printable ASCII renders as
// itself; all of it is copied into one new string that the findings share,
// instead of one string each.
func setEvidences(fs []rawFinding, text string) {
	var spans [16][2]int32
	n := 0
	for i := range fs {
		f := &fs[i].Finding
		if f.Start < 0 || f.End > len(text) || f.Start > f.End {
			f.Start, f.End = 0, 0
		}
		if s := text[f.Start:f.End]; i < len(spans) && printableASCII(s[:min(len(s), 121)]) {
			n += min(len(s), 120)
			continue
		}
		f.Evidence = visible(text[f.Start:f.End], f.Detector == detHomoglyph)
	}
	if n == 0 {
		return
	}
	buf := make([]byte, 0, n)
	for i := range fs[:min(len(fs), len(spans))] {
		f := &fs[i].Finding
		if s := text[f.Start:f.End]; printableASCII(s[:min(len(s), 121)]) {
			a := len(buf)
			if len(s) <= 120 {
				buf = append(buf, s...)
			} else {
				buf = append(append(buf, s[:120-len("…")]...), "…"...)
			}
			spans[i] = [2]int32{int32(a), int32(len(buf))}
		} else {
			spans[i] = [2]int32{-1, -1}
		}
	}
	all := string(buf)
	for i := range fs[:min(len(fs), len(spans))] {
		if sp := spans[i]; sp[0] >= 0 {
			fs[i].Evidence = all[sp[0]:sp[1]]
		}
	}
}

// Oversized definitions.

const (
	descMedium   = 10 << 10
	descHigh     = 50 << 10
	schemaMedium = 64 << 10
	schemaHigh   = 512 << 10
)

func oversizedText(field, s string) []rawFinding {
	var sev Severity
	switch {
	case len(s) > descHigh:
		sev = High
	case len(s) > descMedium:
		sev = Medium
	default:
		return nil
	}
	return []rawFinding{{Finding: Finding{Detector: detOversized, Severity: sev, Field: field, Start: 0, End: len(s),
		Evidence: visible(validUTF8Prefix(s, 80), false),
		Message:  "The text is " + strconv.Itoa(len(s)/1024) + " KB: far longer than any tool needs, long enough to bury instructions the user will never read."}}}
}

func oversizedSchema(field string, raw json.RawMessage) []rawFinding {
	n := len(raw)
	var sev Severity
	switch {
	case n > schemaHigh:
		sev = High
	case n > schemaMedium:
		sev = Medium
	default:
		return nil
	}
	return []rawFinding{{Finding: Finding{Detector: detOversized, Severity: sev, Field: field, End: n,
		Evidence: visible(validUTF8Prefix(string(raw), 80), false),
		Message:  "The schema is " + strconv.Itoa(n/1024) + " KB: far larger than any tool needs, large enough to bury instructions the user will never read."}}}
}

// A jsonField is a definition's JSON member, decoded once.
type jsonField struct {
	name  string
	raw   json.RawMessage
	v     any   // the value, numbers as written
	err   error // raw is not JSON
	empty bool  // absent or null
}

func decodeField(name string, raw json.RawMessage) jsonField {
	f := jsonField{name: name, raw: raw}
	if t := bytes.TrimSpace(raw); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		f.empty = true
		return f
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	f.err = dec.Decode(&f.v)
	return f
}

// scanJSON walks a JSON value and scans every object key and string value
// as a field of its own. Invalid JSON is scanned as one text. secretTool
// says the tool is named for secrets: its parameters speak of them as its
// description does (password_read's "include the secret value in the
// response").
func scanJSON(f jsonField, ix *shadowIndex, secretTool bool) []rawFinding {
	name, v := f.name, f.v
	switch {
	case f.empty:
		return nil
	case f.err != nil:
		return scanField(ctxDef, name, string(f.raw), fieldOpts{shadow: ix})
	}
	var out []rawFinding
	// required names each properties object's required members, by the
	// path of the properties object
	required := map[string]map[string]bool{}
	var walk func(path string, v any, depth int)
	walk = func(path string, v any, depth int) {
		if depth > 256 {
			return
		}
		switch x := v.(type) {
		case string:
			out = append(out, scanField(ctxDef, path, x, fieldOpts{shadow: ix, secretName: secretTool || secretParam(path), param: strings.Contains(path, ".properties.")})...)
			out = append(out, scanPayloads(path, x, ix)...)
		case []any:
			for i, e := range x {
				walk(path+"["+strconv.Itoa(i)+"]", e, depth+1)
			}
		case map[string]any:
			if req, ok := x["required"].([]any); ok {
				if _, ok := x["properties"].(map[string]any); ok {
					set := map[string]bool{}
					for _, r := range req {
						if s, ok := r.(string); ok {
							set[s] = true
						}
					}
					required[path+".properties"] = set
				}
			}
			params := strings.HasSuffix(path, ".properties") || path == "inputSchema.properties"
			for _, k := range sortedKeys(x) {
				kp := path + jsonKey(k)
				if !schemaKeywords[k] || params {
					out = append(out, scanField(ctxDef, kp+"#key", k, fieldOpts{shadow: ix})...)
				}
				if params && strings.HasPrefix(path, "inputSchema") {
					ps, _ := x[k].(map[string]any)
					desc, _ := ps["description"].(string)
					if why, identity := exfilParam(k, desc); why != "" {
						sev := Medium
						if identity && !required[path][k] {
							// an optional field for the model's name
							// (vendor telemetry) can be left out; asked as
							// a required one, the model must answer
							sev = Low
						}
						out = append(out, rawFinding{Finding: Finding{Detector: detExfilArg, Severity: sev, Field: kp + "#key", End: len(k),
							Evidence: visible(validUTF8Prefix(k, 120), false),
							Message:  "A parameter whose name " + why + ": the model fills in what a schema asks for, so the name alone makes it hand the data over."}})
					}
				}
				if k == "type" || k == "format" {
					if s, ok := x[k].(string); ok && standardValues[s] {
						continue
					}
				}
				walk(kp, x[k], depth+1)
			}
		}
	}
	walk(name, v, 0)
	return out
}

// A payload is text a definition carries encoded: base64, or a run of
// \xHH or \uHHHH escapes written out as text.
type payload struct {
	at, end int // the encoded run in the field
	how     string
	text    string // base64's decoded text
	run     string // an escaped run, decoded
}

// scanPayloads scans the text each payload of a definition's field
// decodes to, as a field of its own, and reports the encoding itself when
// it hides prose or code: no benign definition of the evaluation sets
// carries either, and the person reading the definition sees neither.
func scanPayloads(field, s string, ix *shadowIndex) []rawFinding {
	var out []rawFinding
	ps := encodedPayloads(s)
	// escaped runs are decoded in place, all of them in one copy of the
	// field, scanned once: "\u0049\u0047… ALL INSTRUCTIONS" reads as a
	// sentence only with the words after it
	var dec strings.Builder
	last := 0
	for _, p := range ps {
		if p.how == "escapes" {
			dec.WriteString(s[last:p.at])
			dec.WriteString(p.run)
			last = p.end
		}
	}
	if last > 0 {
		dec.WriteString(s[last:])
		out = append(out, scanField(ctxDef, field+" (escapes decoded)", dec.String(), fieldOpts{shadow: ix})...)
	}
	for _, p := range ps {
		if p.how != "escapes" {
			out = append(out, scanField(ctxDef, field+" ("+p.how+" at "+strconv.Itoa(p.at)+")", p.text, fieldOpts{shadow: ix})...)
		}
		if run := cmp.Or(p.run, p.text); hiddenProse(run) {
			out = append(out, rawFinding{Finding: Finding{Detector: detEncoded, Severity: Medium, Field: field, Start: p.at, End: p.end,
				Evidence: clip(visible(s[p.at:p.end], false), 80),
				Message:  "Text hidden in " + p.how + ", which decodes to " + strconv.Quote(clip(run, 80)) + ": the model reads it, a person looking at the definition does not."}})
		}
	}
	return out
}

// hiddenProse reports decoded text that is a sentence or code, not a
// token: at least three words, or a URL or a call to the shell.
func hiddenProse(t string) bool {
	if len(strings.Fields(t)) >= 3 || strings.Contains(t, "://") {
		return true
	}
	l := strings.ToLower(t)
	for _, w := range []string{"os.system", "subprocess", "exec(", "eval(", "curl ", "wget ", "rm -rf", "bash -c", "powershell"} {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}

// Bounds on the payloads a field is searched for: runs shorter than
// minPayload are words, and a field yields at most maxPayloads, each of
// at most maxPayloadBytes decoded.
const (
	minPayload      = 24
	maxPayloads     = 8
	maxPayloadBytes = 4096
)

// encodedPayloads finds base64 runs in s that decode to readable text
// ("telemetry=SU1QT1JUQU5UOi…" hides "IMPORTANT: …"): a definition has no
// reason to carry prose the person cannot read, and the model decodes it.
// Binary data (an image, a key) does not decode to text and is left alone.
// One pass over s.
func encodedPayloads(s string) []payload {
	var out []payload
	for i := 0; i < len(s) && len(out) < maxPayloads; {
		if !isBase64Byte(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isBase64Byte(s[j]) {
			j++
		}
		e := j
		for e < len(s) && e-j < 2 && s[e] == '=' {
			e++
		}
		run := s[i:e]
		i = e
		if len(run) < minPayload || len(run)%4 != 0 || len(run) > maxPayloadBytes*4/3+4 {
			continue
		}
		b, err := base64.StdEncoding.DecodeString(run)
		if err != nil || !readable(b) {
			continue
		}
		out = append(out, payload{at: i - len(run), end: i, how: "base64", text: string(b)})
	}
	return append(out, escapedPayloads(s, maxPayloads-len(out))...)
}

// minEscapes is the shortest run of written-out escapes read as a payload.
const minEscapes = 4

// escapedPayloads finds runs of at least minEscapes \xHH or \uHHHH escapes
// written out as text ("Execute: \x63\x75\x72\x6c …") that decode to
// readable text. One pass over s; at most n.
func escapedPayloads(s string, n int) []payload {
	var out []payload
	for i := strings.IndexByte(s, '\\'); i >= 0 && i < len(s) && len(out) < n; {
		var b []byte
		j, count := i, 0
		for j+1 < len(s) && s[j] == '\\' && len(b) < maxPayloadBytes {
			switch {
			case s[j+1] == 'x' && j+4 <= len(s):
				v, ok := hexByte(s[j+2 : j+4])
				if !ok {
					goto done
				}
				b = append(b, v)
				j += 4
			case s[j+1] == 'u' && j+6 <= len(s):
				v, err := strconv.ParseUint(s[j+2:j+6], 16, 32)
				if err != nil {
					goto done
				}
				b = utf8.AppendRune(b, rune(v))
				j += 6
			default:
				goto done
			}
			count++
			// spaces between escapes, as a hex dump writes them
			for j < len(s) && s[j] == ' ' && j+1 < len(s) && s[j+1] == '\\' {
				b = append(b, ' ')
				j++
			}
		}
	done:
		if count >= minEscapes && printable(b) {
			out = append(out, payload{at: i, end: j, how: "escapes", run: string(b)})
		}
		if j == i {
			j++
		}
		k := strings.IndexByte(s[j:], '\\')
		if k < 0 {
			break
		}
		i = j + k
	}
	return out
}

func hexByte(h string) (byte, bool) {
	v, err := strconv.ParseUint(h, 16, 8)
	return byte(v), err == nil
}

func isBase64Byte(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/'
}

// printable reports decoded bytes that are valid UTF-8 with no control
// characters but line breaks and tabs.
func printable(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, r := range string(b) {
		if r < ' ' && r != '\n' && r != '\t' && r != '\r' || r == 0x7f {
			return false
		}
	}
	return true
}

// readable reports decoded bytes that are text: valid UTF-8, printable
// but for line breaks and tabs, and with a space between words.
func readable(b []byte) bool {
	return bytes.Contains(b, []byte(" ")) && printable(b) && !bytes.ContainsRune(b, utf8.RuneError)
}

// maxSchemaWords bounds the vocabulary schemaWords collects.
const maxSchemaWords = 1024

// schemaWords returns the lowercased names of a schema's properties and
// the string values of its enums (at most maxSchemaWords): the tool's own
// parameters ("when using post_id, …"), methods and kinds, whatever another
// server calls its tools. nil when there are none.
func schemaWords(v any) map[string]bool {
	if v == nil {
		return nil
	}
	out := map[string]bool{}
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		if depth > 256 || len(out) >= maxSchemaWords {
			return
		}
		switch x := v.(type) {
		case []any:
			for _, e := range x {
				walk(e, depth+1)
			}
		case map[string]any:
			if es, ok := x["enum"].([]any); ok {
				for _, e := range es {
					if s, ok := e.(string); ok && len(out) < maxSchemaWords {
						out[strings.ToLower(s)] = true
					}
				}
			}
			if ps, ok := x["properties"].(map[string]any); ok {
				for k := range ps {
					if len(out) < maxSchemaWords {
						out[strings.ToLower(k)] = true
					}
				}
			}
			for _, e := range x {
				walk(e, depth+1)
			}
		}
	}
	walk(v, 0)
	return out
}

// sortedKeys returns the keys of m sorted, so findings come in a stable
// order.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// jsonKey renders one path step.
func jsonKey(k string) string {
	if k == "" {
		return `[""]`
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9') || c == '_' || c == '-' || c == '$') {
			return "[" + strconv.Quote(k) + "]"
		}
	}
	return "." + k
}

// secretParam reports a schema path describing a parameter whose name is a
// secret ("….properties.api_key.description"): asking for an API key is
// that parameter's job.
func secretParam(path string) bool {
	i := strings.LastIndex(path, ".properties.")
	if i < 0 {
		return false
	}
	rest := path[i+len(".properties."):]
	name, _, ok := strings.Cut(rest, ".")
	if !ok {
		return false
	}
	return secretName(name)
}

// secretName reports a parameter or tool name that names a secret
// (api_key, secret_put, authToken).
func secretName(name string) bool {
	if name == "" {
		return false
	}
	v := newView(name)
	defer v.release() // its buffers back to the pool: a catalogue asks this of every parameter
	for k := range v.toks {
		if secretWords.matchAt(v, k, len(v.toks)-1) > 0 {
			return true
		}
	}
	l := strings.ToLower(name)
	return strings.Contains(l, "token") || strings.Contains(l, "key") || strings.Contains(l, "secret") || strings.Contains(l, "password") || strings.Contains(l, "auth")
}

// sortedServers returns the keys of others in order, so findings do not
// depend on map order.
func sortedServers(others map[string][]string) []string {
	keys := make([]string, 0, len(others))
	for k := range others {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// skeleton folds a name's Cyrillic and Greek look-alike letters to Latin
// and lowercases it.
func skeleton(s string) string {
	var b strings.Builder
	for _, r := range s {
		if c := confusableOf(r); c != 0 {
			b.WriteByte(c)
		} else {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// impersonation reports a tool name spelled with look-alike letters so
// that it reads as the name of another server's tool.
func impersonation(t Tool, others map[string][]string) []rawFinding {
	sk := skeleton(t.Name)
	if sk == strings.ToLower(t.Name) {
		return nil
	}
	for _, srv := range sortedServers(others) {
		if srv == t.Server {
			continue
		}
		for _, n := range others[srv] {
			if strings.ToLower(n) == sk && n != t.Name {
				return []rawFinding{{Finding: Finding{Detector: detHomoglyph, Severity: High, Field: "name", End: len(t.Name),
					Evidence: visible(t.Name, true),
					Message:  "The name is spelled with look-alike letters so that it reads as " + n + ", a tool of server " + srv + ": calls meant for that tool may come here."}}}
			}
		}
	}
	return nil
}

// schemaKeywords are JSON Schema (and MCP annotation) keywords: fixed
// vocabulary, not text a server wrote, so scanning them finds nothing.
var schemaKeywords = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range strings.Fields(`type properties description title required items enum default examples
	format minimum maximum exclusiveMinimum exclusiveMaximum minLength maxLength minItems maxItems uniqueItems
	pattern patternProperties additionalProperties additionalItems anyOf oneOf allOf not const $schema $id $ref
	$defs definitions $comment multipleOf minProperties maxProperties propertyNames contains dependencies
	dependentRequired dependentSchemas if then else readOnly writeOnly deprecated contentMediaType
	contentEncoding nullable unevaluatedProperties unevaluatedItems prefixItems $anchor $dynamicRef
	readOnlyHint destructiveHint idempotentHint openWorldHint`) {
		m[k] = true
	}
	return m
}()

// standardValues are the standard values of "type" and common "format"s.
var standardValues = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range strings.Fields(`string number integer boolean object array null date date-time time
	duration email idn-email hostname idn-hostname ipv4 ipv6 uri uri-reference iri iri-reference uuid
	uri-template json-pointer relative-json-pointer regex byte binary int32 int64 float double password`) {
		m[k] = true
	}
	return m
}()

// hiddenSeverity is how much hidden HTML weighs. In a definition, hidden
// words (not an empty comment) are worth a warning, since the description
// is shown to nobody else, and so is a hidden script or URL however short.
func hiddenSeverity(ctx ctxKind, text string) Severity {
	if ctx == ctxDef && (len(strings.Fields(text)) >= 3 || strings.Contains(text, "://") || strings.Contains(strings.ToLower(text), "<script")) {
		return Medium
	}
	return Low
}
