// Package relay moves JSON-RPC messages between an MCP client and one MCP
// server and applies Weir's decisions to them.
//
// Two pumps run per relay, one per direction. Every message the relay
// allows is forwarded byte for byte: the relay parses a copy to look at it
// and never re-encodes what it forwards, and unknown methods and fields pass
// untouched. Only three kinds of message are acted on:
//
//   - a tools/call from the client is labelled, decided by the engine against
//     the session mirror, and either forwarded or answered by the relay itself
//     with an isError result that says why (enforce mode);
//   - the server's response to a tools/call is observed: its labels and keyed
//     fingerprints go to the state store before the client sees it, so a
//     leak through another proxy of the same client is caught;
//   - a tools/list response updates the tool catalogue the labels come from
//     (labels only ever widen when a definition changes).
//
// The relay keeps request-id bookkeeping so that every client request gets
// exactly one answer, even when the server crashes, answers out of order,
// or sends something that cannot be relayed. Every decision goes to the audit
// log, off the hot path.
package relay
