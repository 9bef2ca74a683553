// Package engine is the one place that decides what Weir does. [Decide] is
// a pure function of ([Inputs], [Event]): the compiled policy, the key
// fingerprints are made with, the session as the store last showed it, and
// the event with everything the caller gathered for it. It does no I/O,
// reads no clock (events carry their own time) and holds no state, so the
// same inputs always give the same [Decision]: the verdict, the typed
// [Rule] and its reason, the rewrite to relay (if any) and the [Delta] to
// persist. That is what makes audit replay and property tests possible,
// and why a test keeps its dependencies free of I/O (purity_test.go).
//
// The caller — the relay for weir run, and weir policy check and weir scan
// through the same relay.Gatherer — does the rest: gather the inputs, call
// Decide, apply the decision, persist the delta, audit.
//
// # Events
//
//   - [Call], a tools/call: decided against the session (call.go). A sink
//     whose arguments carry private data, in any decoded view, is
//     exfiltration; an argument chosen from untrusted content is tainted;
//     a sink while both legs are held is the trifecta; a sink after
//     untrusted input is an integrity risk. Policy rules (argument
//     constraints, CEL predicates, rate limits) apply to any tool; a tool
//     withheld by its pin, a call without an id and default_action deny
//     are refused.
//   - [Result], a tools/call result as it arrives (result.go): read
//     strictly, cleaned (hidden text surfaced in a note, invisible
//     characters stripped, secrets redacted), fingerprinted into an
//     observation of its tool's labels — less the labels a declassify
//     entry drops when everything the model reads validates against its
//     schema (declassify.go).
//   - [Scanned], the same result once the injection detectors have read
//     it: a result that tries to steer the model is observed again as
//     untrusted, and its verdict raised.
//   - [List], a tools/list result (list.go): each definition pinned
//     (trusted on first use), judged by the tool-poisoning detectors, and
//     withheld when it changed since approval (a rug pull), is flagged, or
//     its pin cannot be checked.
//   - [Instructions], a server's instructions (initialize, server/discover):
//     replaced with a notice when flagged.
//
// [Label] and [LabelDefs] turn definitions into the labels a Call carries:
// the policy's tools: entries, then the MCP annotations (which only add),
// then a name and schema heuristic (labels.go).
//
// # Rules
//
// Every verdict names one rule (rule.go); the most severe finding wins.
//
//	flow.exfiltration  Call     private data in a sink's arguments, or arguments
//	                            the decoder could not examine within its bound
//	flow.tainted_args  Call     a sink argument chosen from untrusted content
//	flow.trifecta      Call     a sink while private and untrusted legs are held
//	flow.integrity     Call     a sink after untrusted input (escalated only with steering evidence, words.go)
//	default_action     Call     an unlisted tool under default_action: deny
//	arguments          Call     arguments that cannot be read (fail closed)
//	rule ID            Call     a policy rule fired (PolicyRule)
//	pin.withheld       Call     a call to a tool withheld from the client
//	protocol           Call     a tools/call without an id: never forwarded
//	                   Result   a result with a repeated or case-variant member
//	                   List     two tools under one name
//	flow.read_back     Result   text written to the server while a session was tainted comes back
//	hygiene.hidden     Result   text hidden from people, or an image URL carrying data
//	redact_secrets     Result   secrets replaced (redact_secrets: true)
//	detect.ID          Scanned  an injection detector's finding (DetectorRule)
//	                   List     a definition flagged as tool poisoning
//	                   Instructions  flagged instructions
//	pin.changed        List     a definition changed since it was approved
//	pin.unchecked      List     pins that could not be read or written
//	pin.command        List     the server's command line changed since its pins (notice)
//	internal           (caller) Weir itself failed while deciding; fails closed
//
// [BlockMessage] is what the model reads for each (golden-tested in
// testdata/messages.golden).
package engine
