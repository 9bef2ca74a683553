// Package jsonrpc frames and inspects the JSON-RPC 2.0 messages that MCP
// carries over stdio: one message per line, no embedded newlines.
//
// Weir relays messages byte for byte, so this package never re-encodes what
// it forwards. [Reader] cuts the stream into lines under a size limit (and,
// for a line over the limit, still recovers its id so the request can be
// answered), [Parse] classifies a line with the go-sdk's jsonrpc types, and
// [Writer] writes whole lines atomically when two pumps share one output.
// Nothing here recurses over JSON, and [Valid] and [Parse] refuse values
// nested more than [MaxDepth] levels before any recursive parser sees them.
// The error responses Weir itself originates are built here too, with the
// JSON-RPC error codes as named constants.
package jsonrpc
