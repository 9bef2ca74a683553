package relay

import "context"

// Transport carries the JSON-RPC messages of one side of a relay: the
// client's, or the server's. The relay knows no other thing about it, so a
// stdio child, the proxy's own stdio, an HTTP front and an HTTP upstream
// all plug in the same way (internal/transport has them).
type Transport interface {
	// Read returns the next message; the slice is valid until the next
	// Read. At the end of the peer's input it returns io.EOF. A message over
	// the size limit is consumed and reported as a *jsonrpc.OversizeError,
	// with whatever of its id could be read; the stream stays usable.
	Read(ctx context.Context) ([]byte, error)
	// Write sends one message. Concurrent Writes never interleave.
	Write(ctx context.Context, msg []byte) error
	// CloseWrite tells the peer that no more messages follow: a stdio
	// server's input is closed, which is how it is asked to exit.
	CloseWrite() error
	// Close stops reading: a Read in progress returns.
	Close() error
}
