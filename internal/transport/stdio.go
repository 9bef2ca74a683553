package transport

import (
	"context"
	"io"

	"github.com/weir-sec/weir/internal/jsonrpc"
)

// Stdio carries newline-delimited JSON-RPC messages over a pair of
// streams: the proxy's own stdin and stdout toward the client, or a child
// server's stdout and stdin. It implements the relay's Transport.
type Stdio struct {
	in  io.ReadCloser
	out io.WriteCloser
	r   *jsonrpc.Reader
	w   *jsonrpc.Writer
}

// NewStdio reads messages from in, refusing any over maxMessage bytes (0
// means jsonrpc.DefaultMaxMessage), and writes them to out.
func NewStdio(in io.ReadCloser, out io.WriteCloser, maxMessage int) *Stdio {
	return &Stdio{in: in, out: out, r: jsonrpc.NewReader(in, maxMessage), w: jsonrpc.NewWriter(out)}
}

// Read returns the next message (see jsonrpc.Reader.Next). A read in
// progress is ended by Close, not by ctx: a pipe read cannot be cancelled.
func (s *Stdio) Read(ctx context.Context) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return s.r.Next()
}

// Write writes one message and its newline in a single write.
func (s *Stdio) Write(ctx context.Context, msg []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.w.WriteLine(msg)
}

// CloseWrite closes the output stream: for a child server, its stdin,
// which asks it to exit.
func (s *Stdio) CloseWrite() error { return s.out.Close() }

// Close closes the input stream, ending a Read in progress.
func (s *Stdio) Close() error { return s.in.Close() }
