package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Replayer replays transcripts through a real `weir run`.
type Replayer struct {
	// Weir is the weir binary.
	Weir string
	// Server is the command line of the replay server, to which the
	// script's path is appended.
	Server []string
	// ServerEnv is added to the replay server's environment (through
	// weir, which passes its environment on).
	ServerEnv []string
	// Timeout bounds one replay.
	Timeout time.Duration
}

// Decision is Weir's verdict on one call, read from the audit log.
type Decision struct {
	Verdict Verdict
	Rule    string
	// Reason and Sources are the audit record's: product copy built from
	// tool names, labels and argument paths, never values.
	Reason  string
	Sources []string
}

// Replay runs one transcript through `weir run --monitor` with the policy
// file, in dir (which must exist and be empty; it becomes WEIR_HOME), and
// returns the verdict on each call, in order. script is the path of the
// transcript's replay script.
//
// The client initializes (protocol 2025-11-25), lists the tools, and
// issues the recorded calls with their recorded arguments, each after the
// previous answer, checking that every answer is the recorded result.
func (r *Replayer) Replay(ctx context.Context, t *Transcript, script, policyFile, dir string) ([]Decision, error) {
	home, err := r.run(ctx, t, script, policyFile, dir, true, func(c *client, _ string) error { return c.session(t) })
	if err != nil {
		return nil, err
	}
	d, err := readVerdicts(filepath.Join(home, "audit.log"), t)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.ID, err)
	}
	return d, nil
}

// ReplayHuman runs one transcript through `weir run` in enforce mode (no
// --monitor) with an attentive human answering Weir's approval requests on
// channel ch, in dir like Replay. The walk ends at the first call Weir
// stops; see HumanWalk.
func (r *Replayer) ReplayHuman(ctx context.Context, t *Transcript, script, policyFile, dir string, ch Channel) (*HumanWalk, error) {
	var w *HumanWalk
	home, err := r.run(ctx, t, script, policyFile, dir, false, func(c *client, home string) error {
		var err error
		w, err = c.humanSession(t, ch, r.cli(ctx, home))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%s (%s): %w", t.ID, ch, err)
	}
	if err := readApprovals(filepath.Join(home, "audit.log"), t, w); err != nil {
		return nil, fmt.Errorf("%s (%s): %w", t.ID, ch, err)
	}
	return w, nil
}

// benchSession is WEIR_SESSION of every replay (each has its own home).
const benchSession = "agentdojo"

// homeEnv is the environment of weir run, and of weir approve|deny, for
// the replay whose WEIR_HOME is home.
func homeEnv(home string) []string {
	return append(weirlessEnv(), "WEIR_HOME="+home, "WEIR_SESSION="+benchSession, "WEIR_LOG=warn")
}

// cli runs `weir approve|deny ID` with the proxy's WEIR_HOME and
// WEIR_SESSION, as the person at the terminal would.
func (r *Replayer) cli(ctx context.Context, home string) cliFunc {
	return func(verb, id string) error {
		cmd := exec.CommandContext(ctx, r.Weir, verb, id)
		cmd.Env = homeEnv(home)
		cmd.WaitDelay = 5 * time.Second
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("weir %s %s: %w: %s", verb, id, err, excerpt(string(out), 300))
		}
		return nil
	}
}

// run starts `weir run [--monitor]` over the replay server in a fresh
// WEIR_HOME under dir, runs session on its stdio, and waits for it to
// exit. It returns the home, whose audit log the caller reads.
func (r *Replayer) run(ctx context.Context, t *Transcript, script, policyFile, dir string, monitor bool, session func(c *client, home string) error) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	home := filepath.Join(dir, "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		return "", err
	}
	// A fixed install key: fingerprints are keyed, and winnowing keeps the
	// minima of keyed hashes, so with a random key per home the number of
	// fingerprints two texts share (min_matches) could differ from run to
	// run at the margin. The same key everywhere makes the results
	// reproducible.
	if err := os.WriteFile(filepath.Join(home, "key"), benchKey[:], 0o600); err != nil {
		return "", err
	}
	args := []string{"run"}
	if monitor {
		args = append(args, "--monitor")
	}
	args = append(args, "--name", t.Suite, "--policy", policyFile, "--")
	args = append(args, r.Server...)
	args = append(args, script)
	cmd := exec.CommandContext(ctx, r.Weir, args...)
	cmd.Env = append(homeEnv(home), r.ServerEnv...)
	// A replay that times out or fails stops weir with SIGQUIT first: the
	// Go runtime then prints every goroutine's stack to stderr, which the
	// error quotes, so a hang says where it hung. WaitDelay kills it if
	// it does not exit.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGQUIT) }
	cmd.WaitDelay = 5 * time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return "", err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", err
	}
	var stderr limitedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return "", err
	}
	started := time.Now()
	c := &client{in: stdin, out: bufio.NewReaderSize(stdout, 64<<10)}
	werr := session(c, home)
	stdin.Close()
	if werr != nil {
		// Give the proxy a moment to exit by itself, so the error can say
		// how it ended, but do not wait for one that may never answer.
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err = <-done:
		case <-time.After(3 * time.Second):
			cancel()
			err = <-done
		}
		how := "exited"
		if ctx.Err() != nil {
			how = "was stopped"
		}
		return "", fmt.Errorf("%s: %w (weir run %s after %s: %v)%s", t.ID, werr, how, time.Since(started).Round(time.Millisecond), err, stderr.tail())
	}
	err = cmd.Wait()
	if err != nil {
		return "", fmt.Errorf("%s: weir run: %w%s", t.ID, err, stderr.tail())
	}
	return home, nil
}

// benchKey is the install key of every replay's WEIR_HOME.
var benchKey = sha256.Sum256([]byte("weir bench/agentdojo fixed install key"))

// weirlessEnv is this process's environment without WEIR_ variables, so
// that nothing from the caller's Weir set-up leaks into a replay.
func weirlessEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "WEIR_") {
			out = append(out, kv)
		}
	}
	return out
}

// client speaks newline-delimited JSON-RPC to the proxy's stdio.
type client struct {
	in  io.Writer
	out *bufio.Reader
	id  int
	// meta, when set, is params._meta of every request: protocol
	// 2026-07-28, which has no handshake.
	meta map[string]any
	// onRequest answers a request Weir sends while a response is awaited;
	// nil answers every method but ping with "method not found".
	onRequest func(method string, params json.RawMessage) (any, *rpcError)
}

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message) }

const protocolVersion = "2025-11-25"

// initialize is the 2025-11-25 handshake with the given capabilities.
func (c *client) initialize(capabilities map[string]any) error {
	var init struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if err := c.call("initialize", map[string]any{
		"protocolVersion": protocolVersion,
		"capabilities":    capabilities,
		"clientInfo":      map[string]any{"name": "weir-bench-agentdojo", "version": "1"},
	}, &init); err != nil {
		return err
	}
	if init.ProtocolVersion != protocolVersion {
		return fmt.Errorf("initialize: the server chose protocol %q, want %q", init.ProtocolVersion, protocolVersion)
	}
	return c.notify("notifications/initialized")
}

// listTools reads every page of tools/list (Weir pins and labels the
// tools from it).
func (c *client) listTools() error {
	cursor := ""
	for pages := 0; ; pages++ {
		var list struct {
			Tools      []json.RawMessage `json:"tools"`
			NextCursor string            `json:"nextCursor"`
		}
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		if err := c.call("tools/list", params, &list); err != nil {
			return err
		}
		if cursor = list.NextCursor; cursor == "" || pages > 100 {
			return nil
		}
	}
}

// session is the monitor-mode replay: every recorded call, each answered
// with its recorded result.
func (c *client) session(t *Transcript) error {
	if err := c.initialize(map[string]any{}); err != nil {
		return err
	}
	if err := c.listTools(); err != nil {
		return err
	}
	for i := range t.Calls {
		rc := &t.Calls[i]
		args, err := rc.ArgumentsJSON()
		if err != nil {
			return fmt.Errorf("call %d (%s): arguments: %w", i+1, rc.Tool, err)
		}
		var res toolResult
		if err := c.call("tools/call", map[string]any{"name": rc.Tool, "arguments": args}, &res); err != nil {
			return fmt.Errorf("call %d (%s): %w", i+1, rc.Tool, err)
		}
		// Monitor mode lets every call through, so the agent's history is
		// replayed exactly: check it.
		if classify(&res, rc) != answerRecorded {
			return fmt.Errorf("call %d (%s): the answer is not the recorded result (isError %v, %d content items)", i+1, rc.Tool, res.IsError, len(res.Content))
		}
	}
	return nil
}

// call sends a request and decodes the result of its response into out; a
// JSON-RPC error is an error.
func (c *client) call(method string, params map[string]any, out any) error {
	res, rerr, err := c.roundTrip(method, params)
	if err != nil {
		return err
	}
	if rerr != nil {
		return fmt.Errorf("%s: %w", method, rerr)
	}
	if out != nil {
		if err := json.Unmarshal(res, out); err != nil {
			return fmt.Errorf("%s: result: %w", method, err)
		}
	}
	return nil
}

// roundTrip sends a request and returns the result or the JSON-RPC error
// of its response, answering Weir's own requests (elicitation/create,
// ping) and skipping notifications meanwhile.
func (c *client) roundTrip(method string, params map[string]any) (json.RawMessage, *rpcError, error) {
	c.id++
	id := c.id
	if c.meta != nil {
		if params == nil {
			params = map[string]any{}
		}
		params["_meta"] = c.meta
	}
	msg, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		return nil, nil, err
	}
	if _, err := c.in.Write(append(msg, '\n')); err != nil {
		return nil, nil, fmt.Errorf("%s: writing to weir: %w", method, err)
	}
	for {
		line, err := c.out.ReadBytes('\n')
		if err != nil {
			return nil, nil, fmt.Errorf("%s: reading from weir: %w", method, err)
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			Result json.RawMessage `json:"result"`
			Error  *rpcError       `json:"error"`
		}
		if err := json.Unmarshal(line, &m); err != nil {
			return nil, nil, fmt.Errorf("%s: weir sent a line that is not JSON: %w", method, err)
		}
		if m.Method != "" {
			if len(m.ID) > 0 && string(m.ID) != "null" {
				if err := c.answer(m.ID, m.Method, m.Params); err != nil {
					return nil, nil, err
				}
			}
			continue // a notification
		}
		if string(m.ID) != fmt.Sprint(id) {
			return nil, nil, fmt.Errorf("%s: response to id %s, want %d", method, m.ID, id)
		}
		if m.Error != nil {
			return nil, m.Error, nil
		}
		return m.Result, nil, nil
	}
}

// answer replies to a request from Weir.
func (c *client) answer(id json.RawMessage, method string, params json.RawMessage) error {
	var (
		result any
		rerr   *rpcError
	)
	switch {
	case method == "ping":
		result = map[string]any{}
	case c.onRequest != nil:
		result, rerr = c.onRequest(method, params)
	default:
		rerr = &rpcError{Code: -32601, Message: "method not found"}
	}
	reply := map[string]any{"jsonrpc": "2.0", "id": id}
	if rerr != nil {
		reply["error"] = rerr
	} else {
		reply["result"] = result
	}
	b, err := json.Marshal(reply)
	if err != nil {
		return err
	}
	_, err = c.in.Write(append(b, '\n'))
	return err
}

func (c *client) notify(method string) error {
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method})
	_, err := c.in.Write(append(msg, '\n'))
	return err
}

// readVerdicts reads the "call" records of an audit log: one per call of
// t, in order, each for the recorded tool.
func readVerdicts(path string, t *Transcript) ([]Decision, error) {
	data, err := os.ReadFile(path)
	if err != nil && !(errors.Is(err, os.ErrNotExist) && len(t.Calls) == 0) {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	var out []Decision
	for i, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var rec struct {
			Event   string   `json:"event"`
			Tool    string   `json:"tool"`
			Verdict string   `json:"verdict"`
			Rule    string   `json:"rule"`
			Reason  string   `json:"reason"`
			Sources []string `json:"sources"`
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			return nil, fmt.Errorf("audit log line %d: %w", i+1, err)
		}
		if rec.Event != "call" {
			continue
		}
		n := len(out)
		if n >= len(t.Calls) {
			return nil, fmt.Errorf("audit log: more call records than the %d calls made", len(t.Calls))
		}
		if rec.Tool != t.Calls[n].Tool {
			return nil, fmt.Errorf("audit log: call record %d is for %s, call %d was %s", n+1, rec.Tool, n+1, t.Calls[n].Tool)
		}
		v, err := ParseVerdict(rec.Verdict)
		if err != nil {
			return nil, fmt.Errorf("audit log line %d: %w", i+1, err)
		}
		out = append(out, Decision{Verdict: v, Rule: rec.Rule, Reason: rec.Reason, Sources: rec.Sources})
	}
	if len(out) != len(t.Calls) {
		return nil, fmt.Errorf("audit log: %d call records for %d calls", len(out), len(t.Calls))
	}
	return out, nil
}

// readApprovals completes a human walk from the audit log: its
// "approval" records (channel and answer, as "channel/answer") and the
// verdict of the call that ended the walk (the last "call" record, if it
// is for that call's tool).
func readApprovals(path string, t *Transcript, w *HumanWalk) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil // nothing was decided: no call reached Weir's judgement
	}
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	last := ""
	lastTool := ""
	for i, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var rec map[string]json.RawMessage
		if err := json.Unmarshal(line, &rec); err != nil {
			return fmt.Errorf("audit log line %d: %w", i+1, err)
		}
		switch str(rec["event"]) {
		case "call":
			last, lastTool = str(rec["verdict"]), str(rec["tool"])
		case "approval":
			channel, answer := str(rec["channel"]), str(rec["answer"])
			// The fields may sit in a nested object.
			for _, k := range []string{"approval", "detail", "details"} {
				var sub map[string]json.RawMessage
				if json.Unmarshal(rec[k], &sub) == nil {
					if channel == "" {
						channel = str(sub["channel"])
					}
					if answer == "" {
						answer = str(sub["answer"])
					}
				}
			}
			w.Approvals = append(w.Approvals, orUnknown(channel)+"/"+orUnknown(answer))
		}
	}
	if w.StopAt >= 0 && lastTool == t.Calls[w.StopAt].Tool {
		w.StopVerdict = last
	}
	return nil
}

// str is a JSON string's value, "" for anything else.
func str(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

func orUnknown(s string) string {
	if s == "" {
		return "?"
	}
	return s
}

// limitedBuffer keeps the last 64 KB written to it (enough for the
// goroutine dump of a hung weir).
type limitedBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if len(b.buf) > 64<<10 {
		b.buf = b.buf[len(b.buf)-64<<10:]
	}
	return len(p), nil
}

// tail is the stderr of the run, for error messages.
func (b *limitedBuffer) tail() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := strings.TrimSpace(string(b.buf))
	if s == "" {
		return ""
	}
	return "\nstderr of weir run:\n" + s
}
