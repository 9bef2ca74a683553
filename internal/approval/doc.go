// Package approval is how an ESCALATE verdict reaches a person.
//
// The engine decides that a tools/call needs a person's approval; the relay
// asks through the best channel the client has, and this package holds what
// every channel shares:
//
//   - the binding: [Digest] of the exact call (server, tool, canonical
//     arguments) under the install key, and [Destination], the recipient,
//     host, channel, account or path the arguments name, for "approve for
//     this session";
//   - the facts a person decides from ([Facts], [Message]) and the
//     one-field form an elicitation shows ([Schema], [ReadAnswer]);
//   - the sealed request state of the 2026-07-28 input_required round trip
//     ([Sealer], [State]): AEAD under a key derived from the install key,
//     bound to the call's digest, the session, an expiry and a nonce that
//     the store lets be used once;
//   - the book of approvals the out-of-band channel (`weir approvals`,
//     `weir approve`, `weir deny`) reads and writes ([Book]), with approval
//     memory per session and the denials that keep a refused call from
//     being asked again.
//
// Rule 7 of the design holds here: an approval covers one call's digest,
// expires, is used once unless scoped to the session, and a session scope
// is never given to a call whose arguments carry values chosen from
// untrusted content. A timeout, an error or an unreadable answer is a
// refusal, never an approval.
//
// Nothing here stores a value in the clear: the store holds digests, and
// the facts `weir approvals` shows are sealed with the install key and
// deleted with the request.
package approval
