// Package engine is the one place that decides what Weir does. It is a pure
// function of (policy, session view, event): it does no I/O, reads no clock
// and holds no state, so the same inputs always give the same verdict, which
// is what makes audit replay and property tests possible.
//
// Three entry points follow the life of a tool:
//
//   - [Label] turns a tool definition (from tools/list) into labels, from the
//     policy's tools: entries first, then the tool's MCP annotations (which
//     may only add labels), then a conservative name and schema heuristic.
//   - [Decide] judges a tools/call against the session mirror: a sink whose
//     arguments carry fingerprints of private results (in any decoded view:
//     URL, base64, base32, hex, nested) is exfiltration; a sink called while
//     the session holds the private and untrusted legs is the lethal
//     trifecta; a sink after untrusted input is an integrity risk. Each maps
//     to the action the policy sets for it, and the most severe one wins.
//   - [Observe] turns a tool result into a [flow.Observation]: the labels it
//     adds to the session and keyed fingerprints of its text. The relay
//     stores the observation; the text itself is never kept.
package engine
