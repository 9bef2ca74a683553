// Package policy is Weir's compiled policy: which labels tools carry, what
// to do with a sink call given what the session has seen, and which calls
// rules refuse whatever the session holds. It is pure — no file, disk or
// network I/O, no clock — because the engine, which must be a pure
// function of its inputs, reads it for every decision. Reading policy
// files, the embedded presets, layering and validation with positions, and
// resolving path arguments on disk live in the sub-package
// internal/policy/policyfile, which the engine does not import.
//
// A policy says:
//
//   - mode: enforce (blocked calls never reach the server) or monitor
//     (decide and log, block nothing);
//   - preset: the embedded policy the file is layered on;
//   - default_action: what happens to a tool no `tools:` entry matches,
//     allow (label it from annotations and heuristics) or deny (refuse it:
//     allowlist mode);
//   - flow: the action (allow, warn, block, escalate) for exfiltration
//     (private data found in a sink's arguments), trifecta (a sink call while
//     private data and untrusted input are both held), integrity (a sink
//     call after any untrusted input) and tainted_args (a sink call whose
//     arguments carry values attributed to untrusted results); min_matches,
//     the fingerprint hits that make a leak; and allow_flows, declassified
//     "FROM -> TO" flows;
//   - config: named values that rules' predicates compare against;
//   - tools: labels (private, untrusted, sink) for the tools a pattern
//     matches, and optionally a declassify schema for their results;
//   - rules: argument constraints, CEL predicates and rate limits for the
//     tools a pattern matches.
//
// A complete file:
//
//	version: 1
//	mode: enforce                 # enforce | monitor
//	preset: default               # default | strict | dataflow | integrity | monitor
//	default_action: allow         # allow | deny
//	flow:
//	  exfiltration: block         # allow | warn | block | escalate
//	  trifecta: warn
//	  integrity: allow
//	  tainted_args: allow
//	  min_matches: 2
//	  allow_flows: ["filesystem:* -> github:create_pull_request"]
//	config:
//	  allowed_domains: [corp.example]
//	tools:
//	  - {match: "web:fetch", labels: [untrusted, sink]}
//	rules:
//	  - id: ssh-guard
//	    match: "*read_file*"
//	    args:
//	      path: {within: ["~/projects"], deny: ['(^|/)\.ssh(/|$)', '\.env$']}
//	  - match: "slack:post_message"
//	    rate_limit: 10/minute
//	    args:
//	      channel: {one_of: ["#eng-bots"]}
//	  - match: "mail:send"
//	    when: 'recipient_domains.exists(d, !(d in config.allowed_domains))'
//	    action: escalate
//	    because: "mail outside the company needs a human"
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
// # Declassify
//
// A `tools:` entry may carry `declassify: {schema: NAME | {inline JSON
// Schema}, as: [labels]}` ([Declassify]): a result of its tools that
// validates enters the session without the labels in as (untrusted unless
// written), so a price or a date does not make every later sink call an
// integrity risk. The loader (policyfile) accepts only schemas that admit
// no free text — every string bounded by enum/const, a format, or a
// pattern with a maxLength of at most 64; objects closed or bounded in
// size and names; arrays bounded by maxItems — and names the path inside
// the schema that breaks the rule. [Policy.DeclassifyFor] finds the first
// matching entry with one; the engine decides what validates.
//
// # Rules
//
// A rule ([Rule]) has a `match:` pattern and at least one of `args:`,
// `when:` and `rate_limit:`; optionally an `id:` (default "rules[N]", N
// counting from 0 in its file), an `action:` (allow, warn, block or
// escalate; block by default) and a `because:` (the reason the user and the
// model read).
//
// For a call to a matching tool ([Policy.Fire]), a rule fires when its
// `when` predicate is true or one of its argument constraints is broken,
// and firing applies its action; action allow records the firing and
// changes nothing. A predicate that cannot be evaluated (a missing key, a
// type error, the cost limit) fires the rule with a block, naming the rule:
// rules fail closed. Separately, a call over the rule's rate_limit fires it
// with a block, whatever its action. Rules only add findings: adding a rule
// never makes a call more allowed (a property test checks this), and the
// engine takes the most severe action of everything that fired.
//
// # Argument constraints
//
// `args:` maps a top-level argument name to its constraints ([ArgRule]). An
// argument the call does not send is not checked (write a `when` such as
// `has(args.to)` to require one). When the argument is an array, each
// element is checked. A value of the wrong type for a constraint (null, an
// object, a number where a path is expected) breaks it.
//
//   - within: [dirs]: the path, resolved (policyfile.ResolvePath: file: URLs,
//     percent-decoding, ~, the working directory, "..", symlinks), must be
//     one of the directories or under one, by whole components
//     (/home/u/projects2 is not within /home/u/projects). The directories
//     must be absolute or start with ~/; ~ is expanded at load from $HOME;
//     their own symlinks are not resolved, so an allowed directory that is a
//     symlink must be written as its real path. The arguments
//     [Policy.PathArgs] names are resolved on disk before the decision
//     (policyfile.ResolveArgs), which stays pure.
//   - deny: [regexps], allow: [regexps]: RE2 (linear-time: no lookaround,
//     no backreferences), unanchored unless written with ^ and $, matched
//     against the value and, for a within argument, its resolved path too:
//     deny breaks on a match of either, allow needs both to match.
//   - one_of: [values]: strings, numbers or booleans, equal as JSON values
//     (1 equals 1.0; "1" does not equal 1).
//   - hosts: {allow: [...], deny: [...]}: the value must be an absolute
//     http or https URL; its host, canonical ([CanonicalHost]: lower case,
//     IDNA A-label, no trailing dot, IPv4 in every browser spelling read as
//     the address), must match no deny pattern and, when there is an allow
//     list, one allow pattern. "corp.example" is that host; "*.corp.example"
//     its subdomains only.
//   - max_length: N: at most N characters (runes).
//   - min: X, max: Y: a number within [X, Y].
//
// Violations ("$.path is outside ~/projects") never quote the value: they
// reach the audit log.
//
// # Predicates
//
// `when:` is a CEL expression (cel.dev/cel-go), compiled once at load in a
// typed environment; a syntax or type error, an expression that cannot give
// true or false, or a `config.KEY` the config does not hold is a load error
// naming the rule. The variables, which the engine fills ([Vars]):
//
//	server             string             the server name
//	tool               string             the tool name
//	args               map(string, dyn)   the call's arguments (numbers are doubles)
//	labels             list(string)       the tool's labels: "private", "untrusted", "sink"
//	session            map(string, list(string))
//	                                      session.legs: trifecta legs held ("private", "untrusted")
//	                                      session.sources: results seen, as "server/tool"
//	provenance         map(string, list(string))
//	                                      argument path ("$.to") -> labels of the sources it came from
//	recipient_domains  list(string)       domains of the e-mail addresses in the arguments
//	url_hosts          list(string)       hosts of the URLs in the arguments (SiteHost: no leading www.)
//	config             map(string, dyn)   the policy's config
//
// config is a constant of the policy, bound when the policy is built; no
// call can supply or change it. In it, whole numbers are ints and other
// numbers doubles; comparisons across the two work (args.amount >
// config.limit), as do CEL's optional syntax (args.?cc.orValue([])) and the
// strings, sets and lists extensions. Every evaluation is bounded by
// [MaxPredicateCost] in CEL's cost units; exceeding it is an error, which
// blocks.
//
// # Rate limits
//
// `rate_limit: N/UNIT`, N from 1 to 1000000 and UNIT second, minute or hour
// (or sec, min, hr), is at most N calls per unit for the tools the rule
// matches, counted per session and rule id by the state store
// ([Policy.RateLimits]), shared by the proxies of one session. The store
// tells the engine which limits a call exceeds ([Vars].RateExceeded).
package policy
