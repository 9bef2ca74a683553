// Package relay is Weir's session core: it moves JSON-RPC messages between
// an MCP client and one MCP server and applies the engine's decisions to
// them. It knows no transport: each side is a [Transport] (a stdio child,
// the proxy's own stdio, and later an HTTP front or upstream), so every
// way of reaching a server is decided by the same code.
//
// Each message goes through one shape, on the pump of the side it came
// from (client.go, server.go):
//
//		parse → gather the inputs (Gatherer) → engine.Decide → apply → persist the delta → audit
//
//	  - A tools/call is labelled from the catalogue, gathered (the session
//	    synced, rate limits counted, path arguments resolved, pins), decided,
//	    and forwarded or answered by the relay with an isError result that
//	    says why. A block's audit record is written before its answer.
//	  - A tools/call result is read strictly, cleaned, and its observation
//	    appended to the store before the client sees it; the injection
//	    detectors read it just after, and what they find is in the session
//	    before any later call that reads the session is decided.
//	  - A tools/list result is read strictly, pinned and judged; withheld
//	    tools are left out. Server instructions are judged the same way.
//
// [Gatherer] is the one place decisions do I/O; `weir policy check` and
// `weir scan` gather through it too, from their own stores, so the three
// decide alike.
//
// # Ids
//
// The relay owns the id space toward the server (ids.go): every client
// request is forwarded under an id of Weir's own and its answer sent back
// under the client's id, exactly as the client wrote it. So every request
// is answered exactly once — by the server, by Weir, when the request
// timeout passes, or when the server ends — whatever ids the client picks
// and whatever the server answers. "Byte for byte" means: every message
// Weir allows reaches the other side unchanged but for that id, unless a
// decision rewrites it (hygiene, a withheld tool or instructions, in
// enforce mode).
//
// # Failure
//
// A message Weir cannot read unambiguously (a repeated or case-variant
// member) is refused, never guessed at; a request that cannot be answered
// (no id, or a null one) is never forwarded. A panic while handling a
// message is recovered at the pump, and the request it belonged to is
// answered with an error. When the store cannot be read or written, a call
// that needs it is blocked and a result that cannot be recorded is
// withheld (DESIGN rule 1).
package relay
