package detect

import (
	"bytes"
	"strings"
)

// Instruction markup: tags and role tokens that make text look like it came
// from the system or the application rather than from the page or the
// tool. The scan runs over the normalised text (lowercase, full-width
// folded, invisible characters dropped), one byte at a time; every check
// looks at a bounded window, so the scan is linear.

type markupHit struct {
	ns, ne int // span in view.norm
	kind   uint8
	name   string
}

const (
	mkTag        uint8 = iota // <important>, <system>, </instructions>…
	mkRoleTag                 // <user>…</user>: only with its closing tag
	mkToken                   // <|im_start|>, [INST], <<SYS>>
	mkLineRole                // "system:" / "assistant:" at a line start
	mkLineChat                // "user:" / "human:" at a line start
	mkHeaderRole              // "### System:"
	mkOddTag                  // <GLOBAL>…</GLOBAL>, <ai_note>…</ai_note>: a made-up tag wrapping text
)

// markupTags are the tag names that mark instructions for a model. Tags a
// real document also uses (HTML, DocBook) are not here.
var markupTags = map[string]bool{
	"important": true, "system": true, "hidden": true, "instructions": true, "instruction": true,
	"secret": true, "sys": true, "system_prompt": true, "system-prompt": true, "systemprompt": true,
	"system_message": true, "system-message": true, "system_instructions": true, "admin": true,
	"administrator": true, "override": true, "information": true, "critical": true, "priority": true,
	"developer": true, "developer_instructions": true, "ai_instructions": true, "ai-instructions": true,
	"assistant_instructions": true, "note_to_ai": true, "note-to-ai": true, "note_to_assistant": true,
	"user_instructions": true, "tool_instructions": true, "mandatory": true, "urgent": true,
	"im_start": true, "im_end": true, "start_of_turn": true, "end_of_turn": true, "sys_prompt": true,
	"hidden_instructions": true, "secret_instructions": true, "instructions_for_ai": true,
	"important_instructions": true, "context_override": true, "prompt": true, "jailbreak": true,
	"model_instructions": true, "agent_instructions": true, "llm_instructions": true, "rules": true,
}

// roleTags count only when the text also closes them: "<user>/<repo>" is a
// placeholder, "<user>…</user>" is a fake turn.
var roleTags = map[string]bool{"user": true, "human": true, "assistant": true, "ai": true, "model": true, "bot": true}

var bracketTokens = map[string]bool{
	"inst": true, "/inst": true, "system": true, "/system": true, "sys": true, "/sys": true,
	"system message": true, "system note": true, "system prompt": true, "admin": true,
	"system override": true, "developer mode": true, "system instruction": true, "system instructions": true,
	"hidden instruction":  true,
	"hidden instructions": true, "important instruction": true, "important instructions": true,
	"urgent instruction": true, "critical instruction": true,
	"note to ai": true, "note to assistant": true, "note to the ai": true, "note to the assistant": true,
	"ai instructions": true, "ai instruction": true, "ai note": true, "ai only": true, "for ai": true, "for the ai": true,
	"assistant only": true, "llm only": true, "agent only": true, "admin note": true, "admin instruction": true,
	"system command": true, "system directive": true,
	"system rule": true, "system rules": true, "admin override": true, "security override": true,
	"developer instruction": true, "developer instructions": true,
}

// bracketLabels are labels a benign text may also use ("[CRITICAL] opens
// a browser"): a warning, and severe only with another sign.
var bracketLabels = map[string]bool{
	"important": true, "urgent": true, "critical": true, "mandatory": true, "priority": true, "override": true,
	"instruction": true, "instructions": true, "hidden": true, "secret": true, "important note": true,
	"important notice": true, "system notice": true, "system update": true, "system alert": true,
	"system requirement": true, "admin notice": true, "admin message": true, "security notice": true,
	"developer note": true, "notice to ai": true,
}

var lineRoles = map[string]uint8{
	"system": mkLineRole, "assistant": mkLineRole, "developer": mkLineRole, "human": mkLineChat, "user": mkLineChat,
	"system override": mkLineRole, "system note": mkLineRole, "system notice": mkLineRole, "system instruction": mkLineRole,
	"system instructions": mkLineRole, "system directive": mkLineRole,
	"admin override": mkLineRole, "admin instruction": mkLineRole, "admin instructions": mkLineRole,
	"developer override": mkLineRole, "security override": mkLineRole,
	"ai instructions": mkLineRole, "assistant instructions": mkLineRole, "model instructions": mkLineRole,
}

var headerRoles = map[string]bool{
	"system": true, "instruction": true, "instructions": true, "response": true, "assistant": true,
	"human": true, "user": true, "input": true, "system prompt": true,
}

func isIdentByte(c byte) bool {
	return ('a' <= c && c <= 'z') || ('0' <= c && c <= '9') || c == '_' || c == '-'
}

var markupStart = newByteSet("\n#<[{")

// scanMarkup finds instruction markup in v.norm. example[i] reports hit i
// inside an <example> block or a code fence.
func scanMarkup(v *view) (hits []markupHit, example []bool) {
	n := v.norm
	mc := v.cursor(markMarkup)
	var closeNames map[string]bool
	hasClose := func(name []byte) bool {
		if closeNames == nil {
			closeNames = closingNames(n)
		}
		return closeNames[string(name)]
	}
	upper := func(j, k int) bool {
		a, b := v.span(j, k)
		return allCaps(v.src[a:b])
	}
	lineStart := true
	for i := 0; i < len(n) && len(hits) < 64; i++ {
		if !lineStart {
			// nothing starts before the next line or '#', '<', '['
			// the bytes themselves when the list was given up (dense text)
			if mc.dense {
				i = markupStart.nextIn(n, i)
			} else {
				i = mc.fromList(n, i)
			}
			if i >= len(n) {
				break
			}
		}
		c := n[i]
		if lineStart && c != '\n' {
			if h, ok := lineRoleAt(n, i); ok {
				hits = append(hits, h)
			}
		}
		lineStart = c == '\n'
		switch c {
		case '#':
			// "### System:" in the middle of a line
			if i > 0 && n[i-1] == ' ' && i+1 < len(n) && n[i+1] == '#' {
				if h, ok := lineRoleAt(n, i); ok && h.kind == mkHeaderRole {
					hits = append(hits, h)
					i = h.ne - 1
				}
			}
		case '<':
			if h, ok := angleAt(n, i, hasClose, upper); ok {
				hits = append(hits, h)
				i = h.ne - 1
			}
		case '[':
			if h, ok := bracketAt(n, i); ok {
				hits = append(hits, h)
				i = h.ne - 1
			}
		case '{':
			if h, ok := curlyAt(n, i); ok {
				hits = append(hits, h)
				i = h.ne - 1
			}
		}
	}
	if len(hits) > 0 {
		example = markExamples(n, hits)
	}
	return hits, example
}

// closingNames collects the names of every closing tag ("</name") in n,
// in one pass.
func closingNames(n []byte) map[string]bool {
	m := map[string]bool{}
	for i := 0; i+2 < len(n); i++ {
		k := bytes.Index(n[i:], []byte("</"))
		if k < 0 {
			break
		}
		i += k + 2
		j := i
		for j < len(n) && j-i < 40 && isIdentByte(n[j]) {
			j++
		}
		if j > i && len(m) < 4096 {
			m[string(n[i:j])] = true
		}
		i = j - 1
	}
	return m
}

// allCaps reports a tag name written in capitals (GLOBAL, SYSTEM_NOTE): at
// least three letters, none lowercase.
func allCaps(s string) bool {
	letters := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z':
			letters++
		case 'a' <= c && c <= 'z':
			return false
		}
	}
	return letters >= 3
}

// markExamples flags the hits inside an <example>…</example> block (or
// <examples>, <sample>…) or a ``` code fence: a "### User:" header there
// illustrates a conversation, it does not fake one.
func markExamples(n []byte, hits []markupHit) []bool {
	type region struct{ a, b int }
	var rs []region
	for _, open := range []string{"<example", "<sample", "<demo"} {
		closeTag := "</" + open[1:]
		for i := 0; i < len(n) && len(rs) < 64; {
			k := bytes.Index(n[i:], []byte(open))
			if k < 0 {
				break
			}
			a := i + k
			e := bytes.Index(n[a:], []byte(closeTag))
			if e < 0 {
				break
			}
			rs = append(rs, region{a, a + e})
			i = a + e + len(closeTag)
		}
	}
	for i := 0; i < len(n) && len(rs) < 128; {
		k := bytes.Index(n[i:], []byte("```"))
		if k < 0 {
			break
		}
		a := i + k + 3
		e := bytes.Index(n[a:], []byte("```"))
		if e < 0 {
			break
		}
		rs = append(rs, region{a, a + e})
		i = a + e + 3
	}
	ex := make([]bool, len(hits))
	for h := range hits {
		for _, r := range rs {
			if hits[h].ns >= r.a && hits[h].ns < r.b {
				ex[h] = true
				break
			}
		}
	}
	return ex
}

// angleAt parses markup starting with '<' at i.
func angleAt(n []byte, i int, hasClose func([]byte) bool, upper func(j, k int) bool) (markupHit, bool) {
	j := i + 1
	// <|token|>
	if j < len(n) && n[j] == '|' {
		k := j + 1
		for k < len(n) && k-j < 40 && (isIdentByte(n[k]) || n[k] == '.' || n[k] == ' ') {
			k++
		}
		if k > j+1 && k+1 < len(n) && n[k] == '|' && n[k+1] == '>' {
			return markupHit{i, k + 2, mkToken, string(n[j+1 : k])}, true
		}
		return markupHit{}, false
	}
	// <<sys>> and <</sys>>, <<important>>
	if j < len(n) && n[j] == '<' {
		for _, t := range []string{"<<sys>>", "<</sys>>"} {
			if hasPrefixAt(n, i, t) {
				return markupHit{i, i + len(t), mkToken, t}, true
			}
		}
		k := j + 1
		for k < len(n) && k-j < 40 && isIdentByte(n[k]) {
			k++
		}
		if k > j+1 && k+1 < len(n) && n[k] == '>' && n[k+1] == '>' && markupTags[string(n[j+1:k])] {
			return markupHit{i, k + 2, mkToken, string(n[i : k+2])}, true
		}
		return markupHit{}, false
	}
	closing := false
	if j < len(n) && n[j] == '/' {
		closing = true
		j++
	}
	for j < len(n) && n[j] == ' ' && j-i < 4 {
		j++
	}
	k := j
	for k < len(n) && k-j < 40 && isIdentByte(n[k]) {
		k++
	}
	if k == j {
		return markupHit{}, false
	}
	// the name is looked up without a copy; only a hit keeps it
	name := n[j:k]
	// the tag must end within a bounded window
	e := k
	for e < len(n) && e-k < 200 && n[e] != '>' && n[e] != '<' && n[e] != '\n' {
		e++
	}
	if e >= len(n) || n[e] != '>' {
		return markupHit{}, false
	}
	kind := tagNames[string(name)]
	if kind&tnMarkup != 0 && !(!closing && afterFlag(n, i) && !hasClose(name)) {
		return markupHit{i, e + 1, mkTag, string(name)}, true
	}
	if kind&tnRole != 0 && (closing || hasClose(name)) {
		return markupHit{i, e + 1, mkRoleTag, string(name)}, true
	}
	if kind&tnHTML != 0 || closing || !hasClose(name) {
		return markupHit{}, false
	}
	// a made-up tag wrapping text: named with a word of authority
	// (<critical_instructions>, <GLOBAL_OVERRIDE>, <ai-note>) or in
	// capitals (<GLOBAL>)
	if strong, weak := tagWordsIn(name); strong {
		return markupHit{i, e + 1, mkTag, string(name)}, true
	} else if weak || upper(j, k) {
		return markupHit{i, e + 1, mkOddTag, string(name)}, true
	}
	return markupHit{}, false
}

// afterFlag reports a command-line flag just before i ("--secret
// <secret>", "-k=<key>"): the tag is the flag's value placeholder, a
// usage line's, not markup.
func afterFlag(n []byte, i int) bool {
	j := i
	for j > 0 && (n[j-1] == ' ' || n[j-1] == '=') && i-j < 2 {
		j--
	}
	if j == i {
		return false
	}
	k := j
	for k > 0 && (isIdentByte(n[k-1]) || n[k-1] == '-') && j-k < 40 {
		k--
	}
	return k < j && n[k] == '-' && (k == 0 || n[k-1] == ' ' || n[k-1] == '(' || n[k-1] == '`' || n[k-1] == ',')
}

// tagWordsIn reports whether a tag name holds, as one of its _/- separated
// words, a word that marks instructions (strong: important, system,
// override…) or one that addresses or elevates (weak: global, ai, note…).
func tagWordsIn(name []byte) (strong, weak bool) {
	for len(name) > 0 {
		k := 0
		for k < len(name) && name[k] != '_' && name[k] != '-' {
			k++
		}
		if w := name[:k]; len(w) > 0 {
			switch {
			case strongTagWords[string(w)]:
				strong = true
			case weakTagWords[string(w)]:
				weak = true
			}
		}
		name = name[min(k+1, len(name)):]
	}
	return strong, weak
}

// systemWordIn reports whether a tag name has "system" as one of its
// words (<system-reminder>, <system_note>).
func systemWordIn(name string) bool {
	for w := range strings.FieldsFuncSeq(name, func(r rune) bool { return r == '_' || r == '-' }) {
		if w == "system" {
			return true
		}
	}
	return false
}

var strongTagWords = setOf(`important instruction instructions hidden secret admin administrator override overrides
	directive directives jailbreak sudo sysprompt`)

var weakTagWords = setOf(`global ai llm assistant agent model bot note notes notice memo rule rules policy system
	internal confidential private context command commands task tasks orders requirement requirements protocol
	priority critical urgent mandatory root prompt`)

// htmlElements are the names of HTML elements: markup a description may
// carry for display.
var htmlElements = setOf(`html head body div span p a b i u em strong br hr img table tr td th thead tbody tfoot
	ul ol li pre code h1 h2 h3 h4 h5 h6 script style form input button select option label textarea iframe meta
	link title section article header footer nav main aside figure figcaption blockquote small sub sup font center
	dl dt dd abbr cite q s strike tt kbd samp var details summary svg path g canvas video audio source track embed
	object param noscript template slot picture map area caption col colgroup mark time data output progress meter
	fieldset legend datalist optgroup wbr ins del bdi bdo rp rt ruby dialog menu address base`)

// tagNames says, in one lookup per tag, which of markupTags, roleTags and
// htmlElements hold a name.
var tagNames = func() map[string]uint8 {
	m := map[string]uint8{}
	for _, set := range []struct {
		names map[string]bool
		bit   uint8
	}{{markupTags, tnMarkup}, {roleTags, tnRole}, {htmlElements, tnHTML}} {
		for n := range set.names {
			m[n] |= set.bit
		}
	}
	return m
}()

const (
	tnMarkup uint8 = 1 << iota
	tnRole
	tnHTML
)

func setOf(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

func hasPrefixAt(n []byte, i int, t string) bool {
	if i+len(t) > len(n) {
		return false
	}
	for k := 0; k < len(t); k++ {
		if n[i+k] != t[k] {
			return false
		}
	}
	return true
}

// bracketAt parses [INST], [/INST], [SYSTEM]… at i.
func bracketAt(n []byte, i int) (markupHit, bool) {
	k := i + 1
	for k < len(n) && k-i < 24 && (isIdentByte(n[k]) || n[k] == ' ' || n[k] == '/') {
		k++
	}
	if k >= len(n) || (n[k] != ']' && n[k] != ':') || k == i+1 {
		return markupHit{}, false
	}
	name := bytes.TrimSpace(n[i+1 : k])
	if bracketTokens[string(name)] {
		return markupHit{i, k + 1, mkToken, string(name)}, true
	}
	if bracketLabels[string(name)] {
		return markupHit{i, k + 1, mkOddTag, string(name)}, true
	}
	return markupHit{}, false
}

// labelDirects reports whether the sentence after a bracket label at
// normalised offset ne gives the model an order: a modal or directive word
// ("must", "always", "before", "first"…) or an action verb.
func labelDirects(v *view, ne int) bool {
	k := v.tokenAt(ne)
	if k >= len(v.toks) {
		return false
	}
	e := min(int(v.toks[k].sentEnd), k+24)
	return modalSet.anyIn(v, k, e) || sideActs.anyIn(v, k, min(k+1, e)) || runVerbs.anyIn(v, k, min(k+1, e))
}

// curlyAt parses {{IMPORTANT}}, {{SYSTEM INSTRUCTION}} and {{hidden_note}}
// at i: a template placeholder named for instructions.
func curlyAt(n []byte, i int) (markupHit, bool) {
	if i+2 >= len(n) || n[i+1] != '{' {
		return markupHit{}, false
	}
	j := i + 2
	for j < len(n) && n[j] == ' ' && j-i < 4 {
		j++
	}
	k := j
	for k < len(n) && k-j < 32 && (isIdentByte(n[k]) || n[k] == ' ') {
		k++
	}
	e := k
	for e > j && n[e-1] == ' ' {
		e--
	}
	if e == j || k+1 >= len(n) || n[k] != '}' || n[k+1] != '}' {
		return markupHit{}, false
	}
	name := string(n[j:e])
	strong, _ := tagWordsIn([]byte(strings.ReplaceAll(name, " ", "_")))
	switch name {
	case "system", "sys", "prompt", "root", "admin", "administrator", "secret":
		return markupHit{}, false // template variables as often as not
	}
	if bracketTokens[name] || strong {
		return markupHit{i, k + 2, mkToken, name}, true
	}
	if bracketLabels[name] {
		return markupHit{i, k + 2, mkOddTag, name}, true
	}
	return markupHit{}, false
}

// lineRoleAt parses "system:" (optionally after markdown decoration) or
// "### System:" at a line start.
func lineRoleAt(n []byte, i int) (markupHit, bool) {
	j := i
	hashes := 0
	for j < len(n) && j-i < 8 && (n[j] == '#' || n[j] == '*' || n[j] == '>' || n[j] == ' ' || n[j] == '-' || n[j] == '=' || n[j] == '_') {
		if n[j] == '#' {
			hashes++
		}
		j++
	}
	k := j
	for k < len(n) && k-j < 16 && (('a' <= n[k] && n[k] <= 'z') || (n[k] == ' ' && k+1 < len(n) && 'a' <= n[k+1] && n[k+1] <= 'z')) {
		k++
	}
	if k == j {
		return markupHit{}, false
	}
	e := k
	for e < len(n) && e-k < 3 && (n[e] == '*' || n[e] == ' ' || n[e] == '_') {
		e++
	}
	// "SYSTEM OVERRIDE (provider policy):": a short aside before the colon
	if e < len(n) && n[e] == '(' {
		if c := bytes.IndexByte(n[e:min(len(n), e+64)], ')'); c > 0 {
			e += c + 1
			for e < len(n) && e-k < 70 && n[e] == ' ' {
				e++
			}
		}
	}
	if e >= len(n) || n[e] != ':' {
		return markupHit{}, false
	}
	// the lookups convert n[j:k] without a copy; only a hit keeps its name
	if hashes > 0 && headerRoles[string(n[j:k])] {
		return markupHit{i, e + 1, mkHeaderRole, string(n[j:k])}, true
	}
	if kind, ok := lineRoles[string(n[j:k])]; ok {
		return markupHit{j, e + 1, kind, string(n[j:k])}, true
	}
	return markupHit{}, false
}

// markupSeverity is the severity and message of a markup hit.
func markupSeverity(h markupHit, ctx ctxKind) (Severity, string) {
	switch h.kind {
	case mkTag:
		if ctx == ctxDef {
			return High, "Instruction markup <" + h.name + "> in a definition: hidden instructions are dressed as system text so the model obeys them."
		}
		return Medium, "Instruction markup <" + h.name + "> in a result: text dressed as system or priority instructions for the model."
	case mkRoleTag:
		if ctx == ctxDef {
			return High, "A fake <" + h.name + "> conversation turn in a definition: text posing as a message from another party."
		}
		return Medium, "A fake <" + h.name + "> conversation turn in a result: text posing as a message from another party."
	case mkToken:
		if ctx == ctxDef {
			return High, "A chat-template role token (" + h.name + ") in a definition: it imitates the model's own conversation format."
		}
		return Medium, "A chat-template role token (" + h.name + ") in a result: it imitates the model's own conversation format."
	case mkHeaderRole:
		if ctx == ctxDef {
			return High, "A \"### " + h.name + ":\" prompt-template header in a definition: it imitates a system or instruction turn."
		}
		return Medium, "A \"### " + h.name + ":\" prompt-template header in a result: it imitates a system or instruction turn."
	case mkLineRole:
		if ctx == ctxDef {
			return High, "A line starting \"" + h.name + ":\" in a definition: it imitates a conversation turn."
		}
		if h.name == "assistant" {
			return Low, "A line starting \"assistant:\" in a result: usually a chat log, sometimes a fake turn."
		}
		return Medium, "A line starting \"" + h.name + ":\" in a result: it imitates a system turn."
	case mkOddTag:
		if ctx == ctxDef {
			return Medium, "A made-up tag <" + h.name + "> wrapping text in a definition: tags like this dress instructions up as system text."
		}
		if systemWordIn(h.name) {
			return Medium, "A made-up tag <" + h.name + "> wrapping text in a result: text dressed as a message from the system."
		}
		return Low, "A made-up tag <" + h.name + "> wrapping text."
	default: // mkLineChat
		return Low, "A line starting \"" + h.name + ":\": usually a chat log, sometimes a fake turn."
	}
}
