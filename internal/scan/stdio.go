package scan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/weir-sec/weir/internal/clients"
	"github.com/weir-sec/weir/internal/transport"
)

// fetchStdio launches a stdio server in its own process group, lists it,
// and shuts it down; whatever happens, the process group is gone when it
// returns.
func fetchStdio(ctx context.Context, s clients.Server, r *ServerReport, opts Options, rec *recorder) (*catalogue, error) {
	env, notes := serverEnv(s, opts)
	r.Notes = append(r.Notes, notes...)
	stderr := &tail{max: 4096}
	// The process group ends with this function: at once on the deadline
	// (the context kills it), else after a short grace once stdin is
	// closed.
	child, err := transport.StartCommand(ctx, transport.Command{
		Argv: r.Command, Env: env, Dir: serverDir(s, opts), Stderr: stderr,
		// Bounds the wait when a grandchild keeps stderr open after the
		// server itself exited.
		WaitDelay: 500 * time.Millisecond,
	})
	if err != nil {
		return nil, fmt.Errorf("could not be started: %v", startError(err))
	}
	stdout := &headReader{r: child.Stdout, max: 512}
	defer stdout.Close()
	defer child.Stdin.Close()

	cat, phase, err := list(ctx, &mcp.IOTransport{Reader: stdout, Writer: child.Stdin}, rec)

	// Shut down the way a client does: close stdin, give the server a
	// moment to exit, then end the whole process group.
	child.Stdin.Close()
	grace := 2 * time.Second
	if err != nil {
		grace = 300 * time.Millisecond
	}
	if dl, ok := ctx.Deadline(); ok {
		grace = max(min(grace, time.Until(dl)), 0)
	}
	t := time.NewTimer(grace)
	select {
	case <-child.Done():
	case <-t.C:
	}
	t.Stop()
	x := &stdioEnd{ctx: ctx, timeout: opts.Timeout, head: stdout.head(), exitedAlone: isClosed(child.Done()) && !child.Stopped()}
	child.Kill()
	<-child.Done()
	x.status = child.ExitStatus()
	x.failedStatus = child.Wait() != 0

	if err != nil || len(cat.failed) > 0 {
		if s := stderr.String(); s != "" {
			r.Stderr = s
		}
	}
	if err != nil {
		return nil, errors.New(x.explain(phase, err))
	}
	r.Notes = append(r.Notes, failureNotes(cat, x.explain)...)
	return cat, nil
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// startError makes a start error read well.
func startError(err error) string {
	var ee *exec.Error
	if errors.As(err, &ee) {
		if errors.Is(ee.Err, exec.ErrNotFound) {
			return fmt.Sprintf("%q was not found on PATH", ee.Name)
		}
		return fmt.Sprintf("%q: %v", ee.Name, ee.Err)
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Sprintf("%s %s: %v", pe.Op, pe.Path, pe.Err)
	}
	return err.Error()
}

// stdioEnd is how a scanned stdio server's session ended, to explain a
// listing that failed.
type stdioEnd struct {
	ctx     context.Context
	timeout time.Duration
	head    []byte // the start of its stdout
	// exitedAlone is set when the server exited before it was stopped.
	exitedAlone  bool
	status       string // how it exited: "exited with status 2"...
	failedStatus bool   // with a status other than 0
}

// explain turns a failed listing into one sentence saying what the server
// did wrong.
func (x *stdioEnd) explain(phase string, err error) string {
	if errors.Is(err, errNotAsked) {
		return err.Error()
	}
	if line, bad := garbage(x.head); bad {
		msg := fmt.Sprintf("wrote something other than JSON-RPC to stdout during %s: %q; an MCP server may write only JSON-RPC messages to stdout (logs belong on stderr)", phase, line)
		if x.exitedAlone && x.failedStatus {
			msg += ", and " + x.status
		}
		return msg
	}
	if msg, ok := answered(phase, err); ok {
		return msg // the server is fine; its answer is the reason
	}
	if x.exitedAlone {
		return fmt.Sprintf("%s before answering %s", x.status, phase)
	}
	if errors.Is(x.ctx.Err(), context.DeadlineExceeded) {
		return fmt.Sprintf("did not answer %s within %s; stopped", phase, x.timeout)
	}
	if x.ctx.Err() != nil {
		return fmt.Sprintf("the scan was interrupted during %s", phase)
	}
	return fmt.Sprintf("%s failed: %v", phase, err)
}

// answered explains a listing the server answered with a JSON-RPC error.
func answered(phase string, err error) (string, bool) {
	var we *jsonrpc.Error
	if !errors.As(err, &we) {
		return "", false
	}
	return fmt.Sprintf("%s failed: the server answered with error %d: %s", phase, we.Code, we.Message), true
}

// failureNotes are the notes for the listings that failed after the tools
// were listed.
func failureNotes(cat *catalogue, explain func(phase string, err error) string) []string {
	var notes []string
	for _, f := range cat.failed {
		what := map[string]string{
			"prompts/list":             "its prompts were",
			"resources/list":           "its resources were",
			"resources/templates/list": "its resource templates were",
		}[f.phase]
		notes = append(notes, fmt.Sprintf("%s not checked: %s", what, explain(f.phase, f.err)))
	}
	return notes
}

// garbage reports whether a server's first output is not JSON, and the
// first line that is not. A line cut off by the end of head is judged by
// its first character only.
func garbage(head []byte) (string, bool) {
	rest := string(head)
	for rest != "" {
		line, more, complete := strings.Cut(rest, "\n")
		rest = more
		t := strings.TrimSpace(line)
		if t == "" {
			continue
		}
		if (t[0] != '{' && t[0] != '[') || (complete && !json.Valid([]byte(t))) {
			if len(t) > 80 {
				t = t[:80] + "…"
			}
			return strings.ToValidUTF8(t, "�"), true
		}
	}
	return "", false
}

// serverEnv is the environment a stdio server starts with: opts.Environ
// (or this process's), then the entry's envFile, then its env.
func serverEnv(s clients.Server, opts Options) (env []string, notes []string) {
	base := opts.Environ
	if base == nil {
		base = os.Environ()
	}
	over := map[string]string{}
	if s.EnvFile != "" {
		p := s.EnvFile
		if !filepath.IsAbs(p) {
			p = filepath.Join(opts.Dir, p)
		}
		vars, err := readEnvFile(p)
		if err != nil {
			notes = append(notes, fmt.Sprintf("envFile %s was not read (%v); the server started without it", s.EnvFile, errText(err)))
		}
		for k, v := range vars {
			over[k] = v
		}
	}
	for k, v := range s.Env {
		over[k] = v
	}
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := over[k]; !ok {
			env = append(env, kv)
		}
	}
	keys := make([]string, 0, len(over))
	for k := range over {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		env = append(env, k+"="+over[k])
	}
	return env, notes
}

// errText is an OS error without the path it repeats.
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// readEnvFile reads KEY=VALUE lines (a .env file): blank lines and #
// comments are skipped, "export " is allowed, and one pair of matching
// quotes around a value is removed.
func readEnvFile(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		out[strings.TrimSpace(k)] = v
	}
	return out, nil
}

// serverDir is the working directory a stdio server starts in: its cwd
// (a relative one from opts.Dir), else the project directory of a Claude
// Code project entry, else the current directory.
func serverDir(s clients.Server, opts Options) string {
	switch {
	case s.Cwd != "" && filepath.IsAbs(s.Cwd):
		return s.Cwd
	case s.Cwd != "" && s.Project != "":
		return filepath.Join(s.Project, s.Cwd)
	case s.Cwd != "":
		return filepath.Join(opts.Dir, s.Cwd)
	case s.Project != "":
		return s.Project
	}
	return ""
}

// headReader passes a server's stdout through and keeps its first bytes,
// to quote them when they are not JSON-RPC.
type headReader struct {
	r   io.ReadCloser
	max int
	mu  sync.Mutex
	buf []byte
}

func (h *headReader) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	if n > 0 {
		h.mu.Lock()
		if room := h.max - len(h.buf); room > 0 {
			h.buf = append(h.buf, p[:min(n, room)]...)
		}
		h.mu.Unlock()
	}
	return n, err
}

func (h *headReader) Close() error { return h.r.Close() }

func (h *headReader) head() []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.buf)
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = t.buf[len(t.buf)-t.max:]
	}
	return len(p), nil
}

// String returns the last few lines, trimmed.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(strings.ToValidUTF8(string(t.buf), "�")), "\n")
	if len(lines) > 8 {
		lines = lines[len(lines)-8:]
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}
