// Package recording is what Weir keeps of each session so that its
// decisions can be made again: `weir replay` re-derives them, with the
// policy they were made under (a mismatch is a bug or a tampered record) or
// against a candidate policy (what it would newly block or allow), and
// `weir learn` writes a least-privilege policy from them.
//
// # How it fits
//
// The relay records, next to each audit record, a [store.Rec] in the state
// store's records table: a tools/list's definitions and labels, a result's
// labels, and a call's inputs as the engine saw them — its labels, the
// session watermark its mirror was at, the rate limits it exceeded, the
// argument digest the flow checks read (engine.ArgDigest: keyed
// fingerprints and digests of every decoded view), value-free facts for
// the rules replay can check without values (keyed hashes of the
// directories a path argument resolves into and of the hosts a URL
// names), and the decision with every finding. The session's observations
// are already in the store; the policy texts are stored by hash.
//
// # No values
//
// Nothing recorded is an argument value or result text (DESIGN rule 2).
// Two facts derived from values are kept, for learn, and only for calls
// that were allowed: the directory a path argument resolved into, and the
// registrable domain (eTLD+1) of a URL or e-mail address. A blocked call
// keeps neither, so a leak hidden in a host name is not written down.
//
// # What replay can and cannot re-derive
//
// The flow checks (exfiltration, tainted_args, trifecta, integrity),
// default_action, pins and protocol refusals are decided again from the
// recording, exactly. A policy rule reads argument values, so with the
// recorded policy its findings are inputs of the record; against a
// candidate, a rule unchanged from the recorded policy keeps its recorded
// finding, and a new or changed one is checked from the value-free facts
// when it can be (within, hosts, max_length, rate_limit) and reported as
// not re-evaluated when it cannot (deny/allow patterns, one_of, min/max,
// when predicates). Results are replayed with the labels they were
// recorded with.
package recording
