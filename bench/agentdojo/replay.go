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
	ctx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	home := filepath.Join(dir, "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		return nil, err
	}
	// A fixed install key: fingerprints are keyed, and winnowing keeps the
	// minima of keyed hashes, so with a random key per home the number of
	// fingerprints two texts share (min_matches) could differ from run to
	// run at the margin. The same key everywhere makes the results
	// reproducible.
	if err := os.WriteFile(filepath.Join(home, "key"), benchKey[:], 0o600); err != nil {
		return nil, err
	}
	args := []string{"run", "--monitor", "--name", t.Suite, "--policy", policyFile, "--"}
	args = append(args, r.Server...)
	args = append(args, script)
	cmd := exec.CommandContext(ctx, r.Weir, args...)
	cmd.Env = append(weirlessEnv(), "WEIR_HOME="+home, "WEIR_SESSION=agentdojo", "WEIR_LOG=warn")
	cmd.Env = append(cmd.Env, r.ServerEnv...)
	cmd.WaitDelay = 5 * time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr limitedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &client{in: stdin, out: bufio.NewReaderSize(stdout, 64<<10)}
	werr := c.session(t)
	stdin.Close()
	if werr != nil {
		// Do not wait for a proxy that may never answer.
		cancel()
	}
	err = cmd.Wait()
	if werr != nil {
		return nil, fmt.Errorf("%s: %w%s", t.ID, werr, stderr.tail())
	}
	if err != nil {
		return nil, fmt.Errorf("%s: weir run: %w%s", t.ID, err, stderr.tail())
	}
	d, err := readVerdicts(filepath.Join(home, "audit.log"), t)
	if err != nil {
		return nil, fmt.Errorf("%s: %w%s", t.ID, err, stderr.tail())
	}
	return d, nil
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
}

const protocolVersion = "2025-11-25"

func (c *client) session(t *Transcript) error {
	var init struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if err := c.call("initialize", map[string]any{
		"protocolVersion": protocolVersion,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "weir-bench-agentdojo", "version": "1"},
	}, &init); err != nil {
		return err
	}
	if init.ProtocolVersion != protocolVersion {
		return fmt.Errorf("initialize: the server chose protocol %q, want %q", init.ProtocolVersion, protocolVersion)
	}
	if err := c.notify("notifications/initialized"); err != nil {
		return err
	}
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
			break
		}
	}
	for i := range t.Calls {
		rc := &t.Calls[i]
		args, err := rc.ArgumentsJSON()
		if err != nil {
			return fmt.Errorf("call %d (%s): arguments: %w", i+1, rc.Tool, err)
		}
		var res struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
			IsError bool `json:"isError"`
		}
		if err := c.call("tools/call", map[string]any{"name": rc.Tool, "arguments": args}, &res); err != nil {
			return fmt.Errorf("call %d (%s): %w", i+1, rc.Tool, err)
		}
		// Monitor mode lets every call through, so the agent's history is
		// replayed exactly: check it.
		if len(res.Content) != 1 || res.Content[0].Text != rc.ResultText() || res.IsError != rc.IsError {
			return fmt.Errorf("call %d (%s): the answer is not the recorded result (isError %v, %d content items)", i+1, rc.Tool, res.IsError, len(res.Content))
		}
	}
	return nil
}

// call sends a request and decodes the result of its response into out.
func (c *client) call(method string, params any, out any) error {
	c.id++
	id := c.id
	msg, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		return err
	}
	if _, err := c.in.Write(append(msg, '\n')); err != nil {
		return fmt.Errorf("%s: writing to weir: %w", method, err)
	}
	for {
		line, err := c.out.ReadBytes('\n')
		if err != nil {
			return fmt.Errorf("%s: reading from weir: %w", method, err)
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(line, &m); err != nil {
			return fmt.Errorf("%s: weir sent a line that is not JSON: %w", method, err)
		}
		if m.Method != "" {
			if len(m.ID) > 0 && string(m.ID) != "null" {
				// A request from the server: we offer no capabilities.
				reply, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID,
					"error": map[string]any{"code": -32601, "message": "method not found"}})
				if _, err := c.in.Write(append(reply, '\n')); err != nil {
					return err
				}
			}
			continue // a notification
		}
		if string(m.ID) != fmt.Sprint(id) {
			return fmt.Errorf("%s: response to id %s, want %d", method, m.ID, id)
		}
		if m.Error != nil {
			return fmt.Errorf("%s: JSON-RPC error %d: %s", method, m.Error.Code, m.Error.Message)
		}
		if out != nil {
			if err := json.Unmarshal(m.Result, out); err != nil {
				return fmt.Errorf("%s: result: %w", method, err)
			}
		}
		return nil
	}
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

// limitedBuffer keeps the last 8 KB written to it.
type limitedBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if len(b.buf) > 8<<10 {
		b.buf = b.buf[len(b.buf)-8<<10:]
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
