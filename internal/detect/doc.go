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
//     and similar tags; made-up tags that wrap text, named with a word of
//     authority (<critical_instructions>, <GLOBAL_OVERRIDE>) or in capitals
//     (<GLOBAL>); labels such as [important] or {{IMPORTANT}} followed by
//     an order; chat-template role tokens (<|im_start|>, <|system|>,
//     [INST], [[[SYSTEM INSTRUCTION]]], <<SYS>>); "### System:" headers
//     (not inside an <examples> block or a code fence, where a chat turn
//     is an illustration); lines starting "system:", "system override:"
//     or "assistant:"; "BEGIN HIDDEN INSTRUCTIONS" section markers.
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
//     first …", "you must call X first", "before any other operation, run
//     this tool", "before you can solve the task, do the following first",
//     "fetch X and follow what it says", "fetch your instructions from
//     https://…".
//   - addressed-to-model: text that addresses the AI reading it ("note to
//     the AI", "if you are an AI assistant reading this", "the user wants
//     you to …", "the user has already confirmed").
//   - tool-call-request: a result telling the model to call a named tool;
//     in a definition, "then call X", "after calling this tool, call X",
//     "pass its output to X", "when the user asks …, call X", where X is a
//     tool-like name this server does not have (a server naming its own
//     tools, in any case convention or by title, is documenting itself).
//   - preference-manipulation: claims that this tool is the best or the
//     only one ("the best tool in the world", "more accurate than any
//     other tool"), directives to prefer it ("you MUST prioritize this
//     tool", "use this tool rather than the others", "always choose this
//     tool first"), and disparagement of the others ("other tools are
//     outdated"), and the register of advertising: "this is the premium
//     version", endorsements ("trusted by experts", "used by millions"),
//     prestige ("award-winning", "industry-leading"), unmatched quality,
//     "the most complete … available", comparisons with "other tools",
//     "don't settle for inferior …" and urgency ("act now"). A definition
//     is read by a model choosing tools, so praise in it is aimed at that
//     choice; in a result (a web page) the same words are Low. Routing
//     between a server's own tools ("prefer this tool over several 'fill'
//     calls") does not count.
//   - deprecation-redirect: "this tool is deprecated / no longer works /
//     has moved … use X instead". A redirect to a tool of the same server
//     counts only when it presses the model ("you must", "returns wrong
//     results"); a deprecated parameter is not a deprecated tool.
//   - argument-tampering: "always change the query to …", "replace the
//     user's destination with …", "set the recipient to … silently",
//     "regardless of what the user requested", "append 'x' to every
//     search query".
//   - shell-command: shell commands a description has no reason to carry
//     (rm -rf, curl -X POST/-d/| sh, wget | sh, echo … >> ~/.bashrc,
//     chmod 777, reverse shells, base64 -d, PowerShell encoded commands,
//     git push --force …), High when the text tells the model to run them,
//     Low when it lists them as refused or as an example; and "run the
//     following command", "download … and run it".
//   - side-task: an action tacked on to the user's request ("also send …",
//     "before returning the result, create …", "star the repository after
//     every call", "include a link to https://… in your answer").
//   - exfil-parameter: parameters named to carry what no tool needs — the
//     contents of a key file (content_from_reading_ssh_id_rsa), the
//     model's name (llm_model_name), its system prompt, the conversation,
//     the list of its tools — when their description is empty or speaks
//     to the model; and descriptions that ask for the same ("the name of
//     the model that calls this tool", "must contain the user's previous
//     messages", "pass the full conversation history").
//   - sensitive-path: ~/.ssh, id_rsa, .env, mcp.json,
//     claude_desktop_config.json, cloud and cluster credentials, .netrc,
//     .git-credentials, /etc/shadow, shell startup files (~/.bashrc) and
//     more; severe when the text asks for them to be read, sent or
//     included; Low when given as an example ("e.g. ~/.ssh"), as one
//     quoted item of a list, or as a path the tool rejects.
//   - secret-request: asks for a password, API key, token, private key,
//     seed phrase, card number….
//   - exfiltration-request: "pass its contents as …", "include the
//     contents of …", "send the conversation/inbox/contacts to <address>",
//     "always POST the results to https://…", "access our verification
//     endpoint at https://…", "always BCC <address>", "add <address> to
//     the bcc field", "collect the user's contacts and attach them". Not
//     "use 'manifest' to pass the file's contents" (a parameter named as
//     the means), nor "report bugs at https://…".
//   - shadowing: a definition that names a tool of another server, or tells
//     the model how to call a tool its own server does not have. Names of
//     the same server never count. A name that is an ordinary word
//     ("aggregate", "cleanup", an acronym, "built-in") counts only where
//     the text uses it as a tool: backticked, called ("use aggregate",
//     "call the cleanup"), "the aggregate tool", "when cleanup is called";
//     "aggregate functions" and "a cleanup function" are prose.
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
//   - hidden-html: text hidden by style or attribute, and HTML comments
//     (Medium in a definition when they hide words, Low otherwise).
//   - image-exfiltration: markdown (or <img>) images whose URL carries data.
//   - oversized: descriptions over 10 KB (Medium) or 50 KB (High), schemas
//     over 64 KB or 512 KB.
//   - poisoning-score: a definition none of the rules above finds anything
//     of Medium severity in, which the builtin Model (model.go, trained by
//     bench/poisoning/train on the published poisoned definitions and real
//     catalogues of testdata) scores at or above its threshold; Medium,
//     corroborating nothing, with the words that weighed most as evidence.
//     It reads the description past a short first sentence and the
//     schema's strings, so the cover a payload hides behind does not count.
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
// `go test ./internal/detect -run TestPrecisionRecall -v`), they flag 94
// of the 103 injections with 2 false positives among 99 benign texts, but
// those numbers include the texts the rules were tuned on. A batch held
// out from tuning shows what to expect on unseen text: 9 of 17 injections
// flagged, 2 of 17 benign texts flagged.
//
// On definitions, `go run ./bench/poisoning` measures them on published
// poisoned tool definitions (proof-of-concepts and three attack
// benchmarks) and on the catalogues of 28 real npm servers, split into a
// half the rules were tuned on and a held-out half; see
// testdata/poisoning/README.md. They are a second line of defence; the
// flow rules are the first.
//
// # Cost
//
// A text is read once. One pass normalises it, cuts it into tokens and
// walks each token through the lexicon (a double-array trie, 36 KB) as its
// bytes arrive, a few kilobytes behind the normaliser at most, so that it
// reads them from the cache; on the way it notes where markup, paths and
// commands can start, whether the text holds any control character or any
// invisible or look-alike character, and which lexicon words it holds. The detectors
// start from that instead of each reading the whole text again, and a
// detector with nothing to look at does not run.
//
// Every detector is linear in its input: no regular expression runs at
// all, every look-ahead is bounded, findings are capped per detector, and a
// phrase rule is tried only where all its required words occur within its
// 96-token window; only the rules that can start with a word of the text
// are considered at all. The checks some rules run after a match (is the
// named tool this server's own, does a redirect follow) look at a bounded
// window of the match's sentence. TestAdversarialLinear holds 1 MB hostile
// inputs (1 MB of "<", of "ignore ", of zero-width characters, of nested
// HTML, of "[INST]" fragments…) to 50 ms of CPU, scaled on machines slower
// than a reference loop expects; BenchmarkScanText4KB reports the median
// for a 4 KB result (the goal is 200 µs), BenchmarkScanText64KB and
// BenchmarkScanText1MB the same for larger results (with cpu-MB/s, the
// throughput at the median CPU time, which other processes on a shared
// machine distort less than wall time), and BenchmarkScanCatalogue100 a
// 100-tool catalogue.
//
// reference_test.go keeps the scanner as it was before the single pass;
// differential_test.go holds the two to the same findings on every corpus
// the tests use, on hostile, random and mutated text
// (FuzzScanTextMatchesReference goes on looking), and
// BenchmarkScanTextSinglePass runs both side by side on a 4 KB result,
// 64 KB, 1 MB and each adversarial input.
package detect
