// Package policyfile reads Weir's policy files and embedded presets and
// compiles them into a [policy.Policy]: YAML decoding with every problem
// reported at its file, line, column and key; layering a file on its
// preset; the JSON Schema for editors; and resolving the path arguments
// that `within` constraints check, on disk. It is the I/O side of the
// policy: the engine reads only the compiled [policy.Policy] and never
// imports this package. The format itself (what each key means to a
// decision) is documented in package policy.
//
// [Schema] returns a JSON Schema of this format for editors; the loader is
// the authority (the schema cannot check globs, regular expressions or CEL).
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
// # Presets and precedence
//
// Presets ([Preset], [PresetNames], [PresetText]) are embedded policy files
// in the same format, parsed by the same code; each sets every key and
// explains it:
//
//   - default: exfiltration block, trifecta warn, integrity allow,
//     tainted_args allow;
//   - strict: any sink call once private data and untrusted input are both
//     held is blocked, no attribution needed (trifecta block); exfiltration
//     and tainted_args block, integrity warn;
//   - dataflow: sink calls whose arguments attribute to private sources
//     (exfiltration) or untrusted ones (tainted_args) are blocked; the rest
//     of the trifecta escalates; integrity allow;
//   - integrity: every sink call after untrusted input escalates
//     (integrity, trifecta and tainted_args escalate), exfiltration block;
//   - monitor: default in monitor mode.
//
// All of them: enforce (but monitor), default_action allow, min_matches 2,
// no tools, rules, config or allow_flows. A preset cannot name another
// preset, and a preset's rules must have ids.
//
// A policy file is layered on the preset its `preset:` key names, default
// when it names none ([Parse]):
//
//   - a scalar key the file sets replaces the preset's value; flow keys are
//     taken one by one, so `flow: {trifecta: block}` changes only trifecta;
//   - this includes mode: a file that says `preset: monitor` and
//     `mode: enforce` is enforced (the file is explicit, the preset is a
//     starting point);
//   - a key the file leaves out keeps the preset's value, and an empty file
//     is the default preset;
//   - `tools:`, `rules:` and `flow.allow_flows:` entries are appended after
//     the preset's, never replacing them;
//   - `config:` is merged key by key, the file's value replacing the
//     preset's for a key both set (a whole value: lists are not merged);
//     every predicate, the preset's included, reads the merged config, so a
//     file tunes a preset's rules by setting the keys they read;
//   - a rule id may not repeat one of the preset's;
//   - `version: 1` is required in every non-empty file.
//
// # Errors
//
// Validation reports every problem in a file at once, as an [ErrorList] of
// [*Error] sorted by line. Each names the file, line, column and key path
// and says how to fix it:
//
//	policy.yaml:4:13: flow.trifecta: unknown action "blok"; want allow, warn, block or escalate; did you mean "block"?
//	policy.yaml:9:37: rules[0].when: config has no key "allowed_domain"; did you mean "allowed_domains"?
//
// Unknown keys, duplicate keys, wrong types, bad values, bad patterns,
// regular expressions and predicates, and YAML syntax errors are all
// errors; nothing in a policy is ignored.
package policyfile
