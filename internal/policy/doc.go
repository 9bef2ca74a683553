// Package policy loads, validates and compiles Weir's YAML policy: which
// labels tools carry, and what to do with a sink call given what the session
// has seen.
//
// A policy says four things:
//
//   - mode: enforce (blocked calls never reach the server) or monitor
//     (decide and log, block nothing);
//   - default_action: what happens to a tool no `tools:` entry matches,
//     allow (label it from annotations and heuristics) or deny (refuse it:
//     allowlist mode);
//   - flow: the action (allow, warn, block, escalate) for exfiltration
//     (private data found in a sink's arguments), trifecta (a sink call while
//     private data and untrusted input are both held) and integrity (a sink
//     call after any untrusted input); min_matches, the fingerprint hits that
//     make a leak; and allow_flows, declassified "FROM -> TO" flows;
//   - tools: labels (private, untrusted, sink) for the tools a pattern
//     matches.
//
// A complete file:
//
//	version: 1
//	mode: enforce                 # enforce | monitor
//	default_action: allow         # allow | deny
//	flow:
//	  exfiltration: block         # allow | warn | block | escalate
//	  trifecta: warn
//	  integrity: allow
//	  min_matches: 2
//	  allow_flows: ["notes:* -> slack:post_message"]
//	tools:
//	  - {match: "notes:*", labels: [private]}
//	  - {match: "web:fetch", labels: [untrusted, sink]}
//
// # Where the policy comes from
//
// [Resolve] picks exactly one source, first found wins:
//
//  1. the file given with --policy FILE;
//  2. $WEIR_HOME/policy.yaml, when it exists;
//  3. the embedded "default" preset.
//
// A file that exists but cannot be read or does not validate is an error;
// Weir never falls back to the default silently. (The --monitor flag is
// applied by the caller on top of whatever is resolved.)
//
// # Precedence inside a policy
//
// A policy file is layered on the default preset ([Parse]):
//
//   - a key the file sets replaces the preset's value; flow keys are taken
//     one by one, so `flow: {trifecta: block}` changes only trifecta;
//   - a key the file leaves out keeps the preset's value, and an empty file
//     is the default preset;
//   - `tools:` and `flow.allow_flows:` entries are appended after the
//     preset's, never replacing them;
//   - `version: 1` is required in every non-empty file.
//
// Presets ([Preset], [PresetNames], [PresetText]) are embedded policy files
// in the same format, parsed by the same code; each sets every key and
// explains it. "default": enforce, default_action allow, exfiltration block,
// trifecta warn, integrity allow, min_matches 2, no tools. "monitor": the
// same in monitor mode.
//
// # Matching tools
//
// A tool is labelled with the union of the labels of every `tools:` entry
// that matches it ([Policy.ToolLabels]). Patterns are [Glob]s: "server:tool"
// matches the server and tool names separately, "tool" matches the tool on
// any server; * is any run of characters, ? one character, \ escapes. An
// allow_flows rule "FROM -> TO" is two such patterns; [Policy.FlowAllowed]
// takes the source and the sink as "server/tool".
//
// # Errors
//
// Validation reports every problem in a file at once, as an [ErrorList] of
// [*Error] sorted by line. Each names the file, line, column and key path
// and says how to fix it:
//
//	policy.yaml:4:13: flow.trifecta: unknown action "blok"; want allow, warn, block or escalate; did you mean "block"?
//
// Unknown keys, duplicate keys, wrong types, bad values, bad patterns and
// YAML syntax errors are all errors; nothing in a policy is ignored.
package policy
