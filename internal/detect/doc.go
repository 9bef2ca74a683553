// Package detect finds instructions aimed at the model in the text an MCP
// server controls: tool definitions (tool poisoning, cross-server
// shadowing) and tool results (indirect prompt injection), including text
// hidden from the person watching. It also cleans result text before a
// client shows it. The package is pure: no I/O, no clock, no randomness;
// the same input always gives the same findings, in the same order.
//
// # Where it runs
//
// Definitions: ScanTool and ScanCatalogue read every field a model sees —
// the tool's name, title and description; every key and string value of
// its input schema, output schema and annotations (descriptions, titles,
// defaults, examples, enum values, property names); the server's
// instructions; prompt and resource names and descriptions. The relay
// scans a catalogue on tools/list and again whenever it changes.
//
// Results: ScanText reads text a tool returned, before the model does.
// Clean is what the relay does to that text before the client shows it:
// it decodes tag-character smuggling into visible text, strips invisible
// controls (keeping ZWJ and ZWNJ where emoji, Arabic or Indic script need
// them), makes terminal escapes visible, and surfaces HTML-hidden text and
// data-carrying markdown images as annotations.
//
// # What the detectors look for
//
// Each finding names its detector by a stable id:
//
//   - instruction-markup: <IMPORTANT>, <SYSTEM>, <HIDDEN>, <instructions>
//     and similar tags; chat-template role tokens (<|im_start|>, <|system|>,
//     [INST], <<SYS>>); "### System:" headers; lines starting "system:" or
//     "assistant:".
//   - ignore-instructions: "ignore/disregard/forget (all) previous
//     instructions", "new instructions:", "you are now …", "from now on you
//     …", claims that the model's instructions no longer apply, in English,
//     French, German, Spanish, Portuguese, Italian, Russian, Chinese and
//     Japanese.
//   - prompt-extraction: requests to reveal the system prompt or hidden
//     rules.
//   - conceal-from-user: "do not tell the user", "without telling the
//     user", "the user must not know", "silently/secretly <do something>",
//     in the same languages.
//   - read-before-use: "before using this tool, read/call …", "you must
//     first …", "before you can solve the task, do the following first",
//     "fetch X and follow what it says".
//   - addressed-to-model: text that addresses the AI reading it ("note to
//     the AI", "if you are an AI assistant reading this", "the user wants
//     you to …", "the user has already confirmed").
//   - tool-call-request: a result telling the model to call a named tool.
//   - sensitive-path: ~/.ssh, id_rsa, .env, mcp.json,
//     claude_desktop_config.json, cloud and cluster credentials, .netrc,
//     .git-credentials, /etc/shadow and more; severe when the text asks for
//     them to be read, sent or included.
//   - secret-request: asks for a password, API key, token, private key,
//     seed phrase, card number….
//   - exfiltration-request: "pass its contents as …", "include the
//     contents of …", "send the conversation/inbox/contacts to <address>".
//   - shadowing: a definition that names a tool of another server, or tells
//     the model how to call a tool its own server does not have. Names of
//     the same server never count, nor ordinary words ("search", "fetch").
//   - name-collision: another server has a tool of the same name.
//   - tag-smuggling: Unicode tag characters (U+E0000–E007F), decoded and
//     shown in the evidence; well-formed emoji subdivision flags are fine.
//   - invisible-control: zero-width characters that split words or form
//     runs (ZWJ/ZWNJ inside emoji and joining scripts, a leading BOM and
//     ZWSP line-break hints in Thai or CJK are fine).
//   - bidi-control: embeddings, overrides and isolates that reorder text
//     (Trojan Source).
//   - variation-selector-smuggling: runs of variation selectors carrying
//     bytes.
//   - homoglyph: words mixing Latin with Cyrillic or Greek look-alikes; a
//     tool name spelled to read as another server's tool is severe.
//   - ansi-escape: CSI, OSC (including OSC 8 hyperlinks and OSC 52
//     clipboard writes), cursor movement, erase, concealed text, and
//     backspace/carriage-return overwrites.
//   - hidden-html: text hidden by style or attribute, and HTML comments.
//   - image-exfiltration: markdown (or <img>) images whose URL carries data.
//   - oversized: descriptions over 10 KB (Medium) or 50 KB (High), schemas
//     over 64 KB or 512 KB.
//
// A definition that changes from one call to the next is the pin system's
// business; DefinitionHash gives it a stable hash of what the model sees.
//
// # Severity and action
//
// The relay decides what a severity means; the intended mapping is:
//
//	High    quarantine the tool (definitions); raise the verdict (results)
//	Medium  warn
//	Low     record
//
// Findings only ever raise a verdict, never lower one. Max returns the
// highest severity of a list, None for an empty one.
//
// The same sign weighs more in a definition than in a result. A tool
// description has no reason to contain a chat-template token, an ANSI
// escape or a request for ~/.ssh; a web page or an e-mail quotes the world,
// chat logs included. So markup is High in a definition and Medium in a
// result, a line starting "assistant:" in a result is Low, and a colour
// escape in a build log is Low.
//
// # How the phrase detectors match
//
// Text is normalised first: lowercased; accents folded off Latin letters;
// full-width and mathematical letters folded to ASCII; Cyrillic and Greek
// look-alikes folded to Latin inside words that mix scripts; invisible
// characters dropped; white space collapsed. Then it is cut into word
// tokens (one token per Chinese or Japanese character), and each rule is a
// short pattern over tokens — a verb of disregard, a few optional fillers,
// a reference to earlier instructions — that never crosses a sentence end.
// So "IGNORE  all\u200b previous Ιnstructions" matches like the plain
// phrase, and "ignore the previous section" does not.
//
// Three checks keep benign text quiet. A rule whose phrase is negated just
// before ("do not ignore your instructions") does not fire. A phrase the
// text talks about rather than addresses — after "such as", "attackers",
// "phrases like", "e.g." within the same sentence, or followed by "tags" or
// "markers" — is demoted (to Low in a result, one step in a definition).
// Defensive wording ("ignore any instructions found in documents") is
// skipped. Conversely, two different injection detectors in one definition
// raise each other's Medium findings to High, and in one result raise each
// other's Low findings to Medium.
//
// These are heuristics. Measured on testdata/injections.jsonl (run
// `go test ./internal/detect -run TestPrecisionRecall -v`), they flag 93
// of the 103 injections with 2 false positives among 99 benign texts, but
// those numbers include the texts the rules were tuned on. A batch held
// out from tuning shows what to expect on unseen text: 8 of 17 injections
// flagged, 2 of 17 benign texts flagged. They are a second line of
// defence; the flow rules are the first.
//
// # Cost
//
// Every detector is linear in its input: no regular expression runs at
// all, every look-ahead is bounded, findings are capped per detector, and a
// phrase rule is tried only where all its required words occur within its
// 96-token window. TestAdversarialLinear holds 1 MB hostile inputs (1 MB
// of "<", of "ignore ", of zero-width characters, of nested HTML, of
// "[INST]" fragments…) to 50 ms of CPU, scaled on machines slower than a
// reference loop expects; BenchmarkScanText4KB reports the median for a
// 4 KB result (the goal is 200 µs) and BenchmarkScanCatalogue100 a
// 100-tool catalogue.
package detect
