package detect

import "strings"

// Exfiltration parameters: a parameter whose name asks the model for data
// no tool needs — the contents of a secret file ("content_from_reading_
// ssh_id_rsa"), the model's own name ("llm_model_name"), its system prompt,
// the conversation so far, the list of its other tools. The model fills in
// whatever the schema asks for, so the name alone is the instruction.
//
// The name is split into words (snake_case, kebab-case, camelCase) and
// looked up in small word sets: the cost is linear in the name.

// paramWords splits an identifier into lowercase words: "llm_model_name",
// "llmModelName" and "LLM-Model-Name" all give llm, model, name.
func paramWords(name string) []string {
	var words []string
	start := -1
	flush := func(i int) {
		if start >= 0 && i > start && len(words) < 16 {
			words = append(words, strings.ToLower(name[start:i]))
		}
		start = -1
	}
	for i := 0; i < len(name) && i < 256; i++ {
		c := name[i]
		isUp := 'A' <= c && c <= 'Z'
		isLow := 'a' <= c && c <= 'z'
		isDig := '0' <= c && c <= '9'
		if !isUp && !isLow && !isDig {
			flush(i)
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		p := name[i-1]
		// a capital after a lowercase letter starts a word (llmModel); a
		// capital followed by a lowercase letter after capitals does too
		// (LLMModel → LLM, Model)
		if isUp && ('a' <= p && p <= 'z' || i+1 < len(name) && 'a' <= name[i+1] && name[i+1] <= 'z' && 'A' <= p && p <= 'Z') {
			flush(i)
			start = i
		}
	}
	flush(min(len(name), 256))
	return words
}

var (
	// secret files and keys whose contents a parameter must never carry
	paramSecretWords = setOf(`ssh rsa dsa ecdsa ed25519 idrsa bashrc zshrc passwd dotenv netrc npmrc pypirc
		keychain keyring mnemonic privatekey gnupg gpg pgp kubeconfig`)
	paramContentWords = setOf(`content contents reading dump cat`)
	paramAIWords      = setOf(`llm llms ai assistant chatbot gpt agent`)
	paramIDWords      = setOf(`name identity version vendor provider model family`)
	paramSelfWords    = setOf(`your caller calling current invoking self own yourself`)
	paramPastWords    = setOf(`previous prior past earlier last recent all full entire whole complete`)
	paramTalkWords    = setOf(`messages message conversation conversations prompts turns chat dialog dialogue context instructions`)
	paramLogWords     = setOf(`history log logs transcript transcripts dump memory`)
)

// exfilParam reports why a parameter name asks for data the tool has no
// need of, or "" when it does not. desc is the parameter's description;
// names asking for the model's identity or context count only when the
// description is empty or speaks to the model ("your …"), so that a tool
// that takes an LLM model to run, or a chat history to send, is not one.
//
// identity reports a request for the model's identity alone (its name or
// vendor, not its prompt, context or tools).
func exfilParam(name, desc string) (why string, identity bool) {
	ws := paramWords(name)
	if len(ws) < 2 {
		return "", false
	}
	has := func(set map[string]bool) bool {
		for _, w := range ws {
			if set[w] {
				return true
			}
		}
		return false
	}
	hasW := func(w string) bool {
		for _, x := range ws {
			if x == w {
				return true
			}
		}
		return false
	}
	if (has(paramSecretWords) || hasW("private") && hasW("key")) && has(paramContentWords) && !hasW("public") && !hasW("pub") {
		return "names the contents of a secret file or key", false
	}
	if !selfAddressed(desc) {
		return "", false
	}
	switch {
	case has(paramAIWords) && has(paramIDWords) || hasW("model") && has(paramSelfWords):
		return "asks for the name or identity of the model calling the tool", true
	case hasW("system") && (hasW("prompt") || hasW("instructions") || hasW("message") || hasW("instruction")):
		return "asks for the model's system prompt", false
	case has(paramTalkWords) && has(paramLogWords) || has(paramPastWords) && has(paramTalkWords):
		return "asks for the conversation or the model's context", false
	case (hasW("tools") || hasW("tool")) && (hasW("list") || hasW("available") || hasW("names") || hasW("definitions") || hasW("installed") || hasW("other") || hasW("all")):
		return "asks for the list of the model's tools", false
	}
	return "", false
}

// selfAddressed reports a description that is empty or speaks to the
// model about itself ("your model name", "the model that calls this tool").
func selfAddressed(desc string) bool {
	d := strings.ToLower(strings.TrimSpace(desc))
	if d == "" {
		return true
	}
	if len(d) > 400 {
		d = d[:400]
	}
	for _, p := range []string{"your ", "yourself", "you are", "you're", "calls this", "calling this", "invokes this", "invoking this", "uses this tool", "using this tool", "that calls", "which calls", "who calls", "is calling", "you have", "you can use", "you were", "so far"} {
		if strings.Contains(d, p) {
			return true
		}
	}
	return false
}
