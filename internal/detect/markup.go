package detect

import "bytes"

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
}

var lineRoles = map[string]uint8{
	"system": mkLineRole, "assistant": mkLineRole, "developer": mkLineRole, "human": mkLineChat, "user": mkLineChat,
}

var headerRoles = map[string]bool{
	"system": true, "instruction": true, "instructions": true, "response": true, "assistant": true,
	"human": true, "user": true, "input": true, "system prompt": true,
}

func isIdentByte(c byte) bool {
	return ('a' <= c && c <= 'z') || ('0' <= c && c <= '9') || c == '_' || c == '-'
}

var markupStart = newByteSet("\n#<[")

// scanMarkup finds instruction markup in v.norm.
func scanMarkup(v *view) []markupHit {
	n := v.norm
	var hits []markupHit
	closeCache := map[string]bool{}
	hasClose := func(name string) bool {
		c, ok := closeCache[name]
		if !ok {
			c = bytes.Contains(n, []byte("</"+name))
			closeCache[name] = c
		}
		return c
	}
	lineStart := true
	for i := 0; i < len(n) && len(hits) < 64; i++ {
		if !lineStart {
			// nothing starts before the next line or '#', '<', '['
			if i = markupStart.nextIn(n, i); i >= len(n) {
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
			if h, ok := angleAt(n, i, hasClose); ok {
				hits = append(hits, h)
				i = h.ne - 1
			}
		case '[':
			if h, ok := bracketAt(n, i); ok {
				hits = append(hits, h)
				i = h.ne - 1
			}
		}
	}
	return hits
}

// angleAt parses markup starting with '<' at i.
func angleAt(n []byte, i int, hasClose func(string) bool) (markupHit, bool) {
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
	// <<sys>> and <</sys>>
	if j < len(n) && n[j] == '<' {
		for _, t := range []string{"<<sys>>", "<</sys>>"} {
			if hasPrefixAt(n, i, t) {
				return markupHit{i, i + len(t), mkToken, t}, true
			}
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
	name := string(n[j:k])
	// the tag must end within a bounded window
	e := k
	for e < len(n) && e-k < 200 && n[e] != '>' && n[e] != '<' && n[e] != '\n' {
		e++
	}
	if e >= len(n) || n[e] != '>' {
		return markupHit{}, false
	}
	if markupTags[name] {
		return markupHit{i, e + 1, mkTag, name}, true
	}
	if roleTags[name] && (closing || hasClose(name)) {
		return markupHit{i, e + 1, mkRoleTag, name}, true
	}
	return markupHit{}, false
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
	if k >= len(n) || n[k] != ']' || k == i+1 {
		return markupHit{}, false
	}
	name := string(n[i+1 : k])
	if bracketTokens[name] {
		return markupHit{i, k + 1, mkToken, name}, true
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
	name := string(n[j:k])
	e := k
	for e < len(n) && e-k < 3 && (n[e] == '*' || n[e] == ' ' || n[e] == '_') {
		e++
	}
	if e >= len(n) || n[e] != ':' {
		return markupHit{}, false
	}
	if hashes > 0 && headerRoles[name] {
		return markupHit{i, e + 1, mkHeaderRole, name}, true
	}
	if kind, ok := lineRoles[name]; ok {
		return markupHit{j, e + 1, kind, name}, true
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
	default: // mkLineChat
		return Low, "A line starting \"" + h.name + ":\": usually a chat log, sometimes a fake turn."
	}
}
