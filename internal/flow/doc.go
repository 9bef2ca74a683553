// Package flow holds the vocabulary of Weir's information-flow control: the
// labels a tool carries (private, untrusted, sink), the legs of the lethal
// trifecta a session holds, the observations a tool result leaves behind
// (keyed fingerprints and digests, never text), and the in-memory mirror of
// one session's state that the engine decides against.
//
// Data flows through it like this: a tool result is turned into an
// [Observation] by the engine, appended to the state store, and applied to
// every proxy's [Session] mirror of that client session. A later sink call
// is decided against the mirror: which legs are held, and which sources its
// arguments' fingerprints attribute to.
//
// The package does no I/O. It is shared by the engine (pure), the store
// (persistence) and the relay (wiring).
package flow
