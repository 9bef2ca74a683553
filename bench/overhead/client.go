package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// conn is a raw JSON-RPC client over a child process's stdio: one message
// per line, no SDK in between, so what is timed is the transport and
// whatever sits in it. Calls may be pipelined: any number can be in flight,
// matched to their answers by id.
type conn struct {
	name string
	cmd  *exec.Cmd
	in   io.WriteCloser

	wmu sync.Mutex // serialises writes
	mu  sync.Mutex
	ids int
	// waiting maps an id to the channel its answer goes to.
	waiting map[int]chan reply
	err     error // set when the reader stops
	done    chan struct{}
	stderr  tailBuffer
	// procs are the path's processes: the one started and its children
	// (a proxy's server), whose CPU settle watches.
	procs []int
}

// reply is one answer: the line, and when its last byte was read.
type reply struct {
	line []byte
	at   time.Time
}

var errClosed = errors.New("connection closed")

// dial starts argv with env and does the MCP handshake (initialize,
// notifications/initialized, tools/list).
func dial(name string, env []string, argv ...string) (*conn, error) {
	c, err := launch(name, env, argv...)
	if err != nil {
		return nil, err
	}
	if err := c.handshake(); err != nil {
		c.close()
		return nil, err
	}
	if _, err := c.call("tools/list", `{}`, 30*time.Second); err != nil {
		c.close()
		return nil, err
	}
	c.procs = append([]int{c.pid()}, children(c.pid())...)
	return c, nil
}

// handshake sends initialize and notifications/initialized.
func (c *conn) handshake() error {
	if _, err := c.call("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"weir-bench-overhead","version":"1"}}`, 60*time.Second); err != nil {
		return err
	}
	return c.send([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))
}

// launch starts argv with env and its reader, and nothing else: the
// measurements that time a process's first messages send them themselves.
func launch(name string, env []string, argv ...string) (*conn, error) {
	c := &conn{name: name, waiting: map[int]chan reply{}, done: make(chan struct{})}
	c.cmd = exec.Command(argv[0], argv[1:]...)
	c.cmd.Env = env
	c.cmd.Stderr = &c.stderr
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var err error
	if c.in, err = c.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	go c.read(out)
	return c, nil
}

// Settling: the path counts as quiet once its processes, together, use
// less than settleBusy of CPU in a settlePoll interval.
const (
	settlePoll = 500 * time.Microsecond
	settleBusy = 50 * time.Microsecond
	settleMax  = 2 * time.Second
)

// settle waits until the path's processes have stopped working on the
// last call (or settleMax has passed) and returns how long that took,
// the final quiet poll included.
func (c *conn) settle() time.Duration {
	cpu := func() time.Duration {
		var t time.Duration
		for _, p := range c.procs {
			t += cpuTime(p)
		}
		return t
	}
	start := time.Now()
	prev := cpu()
	for time.Since(start) < settleMax {
		time.Sleep(settlePoll)
		cur := cpu()
		if cur-prev < settleBusy {
			break
		}
		prev = cur
	}
	return time.Since(start)
}

func (c *conn) pid() int { return c.cmd.Process.Pid }

// read delivers answers to their callers, answers the server's own
// requests (server-everything asks for roots/list), and drops
// notifications.
func (c *conn) read(out io.Reader) {
	r := bufio.NewReaderSize(out, 1<<20)
	var err error
	for {
		var line []byte
		line, err = r.ReadBytes('\n')
		at := time.Now()
		if len(line) > 0 && err == nil {
			c.dispatch(line, at)
		}
		if err != nil {
			break
		}
	}
	if err == io.EOF {
		err = errClosed
	}
	c.mu.Lock()
	c.err = err
	c.mu.Unlock()
	close(c.done)
}

func (c *conn) dispatch(line []byte, at time.Time) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(line, &m) != nil {
		return
	}
	if m.Method != "" {
		if len(m.ID) > 0 {
			result := `"error":{"code":-32601,"message":"not supported by the benchmark client"}`
			switch m.Method {
			case "roots/list":
				result = `"result":{"roots":[]}`
			case "ping":
				result = `"result":{}`
			}
			go c.send([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,` + result + "}\n"))
		}
		return
	}
	id, err := strconv.Atoi(string(m.ID))
	if err != nil {
		return
	}
	c.mu.Lock()
	ch := c.waiting[id]
	delete(c.waiting, id)
	c.mu.Unlock()
	if ch != nil {
		ch <- reply{line: line, at: at}
	}
}

func (c *conn) send(msg []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.in.Write(msg)
	return err
}

// start sends a request and returns the channel its answer will arrive on
// and the time just before the request was written.
func (c *conn) start(method, params string) (chan reply, time.Time, error) {
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return nil, time.Time{}, err
	}
	c.ids++
	id := c.ids
	ch := make(chan reply, 1)
	c.waiting[id] = ch
	c.mu.Unlock()
	msg := make([]byte, 0, len(params)+len(method)+64)
	msg = append(msg, `{"jsonrpc":"2.0","id":`...)
	msg = strconv.AppendInt(msg, int64(id), 10)
	msg = append(msg, `,"method":"`...)
	msg = append(msg, method...)
	msg = append(msg, `","params":`...)
	msg = append(msg, params...)
	msg = append(msg, "}\n"...)
	t0 := time.Now()
	if err := c.send(msg); err != nil {
		return nil, t0, c.failure(err)
	}
	return ch, t0, nil
}

// wait waits for the answer to a started request and checks that it is a
// result, not an error or a blocked call.
func (c *conn) wait(ch chan reply, timeout time.Duration) (reply, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case r := <-ch:
		if err := check(r.line); err != nil {
			return r, fmt.Errorf("%s: %w", c.name, err)
		}
		return r, nil
	case <-c.done:
		return reply{}, c.failure(c.err)
	case <-t.C:
		return reply{}, fmt.Errorf("%s: no answer in %s", c.name, timeout)
	}
}

// waitAny waits for the answer to a started request, whatever it says.
func (c *conn) waitAny(ch chan reply, timeout time.Duration) (reply, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case r := <-ch:
		return r, nil
	case <-c.done:
		return reply{}, c.failure(c.err)
	case <-t.C:
		return reply{}, fmt.Errorf("%s: no answer in %s", c.name, timeout)
	}
}

// call sends one request and waits for its answer; the duration is from
// just before the request is written to when the answer's last byte is
// read.
func (c *conn) call(method, params string, timeout time.Duration) (time.Duration, error) {
	ch, t0, err := c.start(method, params)
	if err != nil {
		return 0, err
	}
	r, err := c.wait(ch, timeout)
	if err != nil {
		return 0, err
	}
	return r.at.Sub(t0), nil
}

var isError = []byte(`"isError":true`)

func check(line []byte) error {
	var m struct {
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(line, &m); err != nil {
		return fmt.Errorf("bad answer: %v", err)
	}
	if m.Error != nil {
		return fmt.Errorf("error %d: %s", m.Error.Code, m.Error.Message)
	}
	if bytes.Contains(line, isError) {
		return fmt.Errorf("tool error: %.300s", line)
	}
	return nil
}

// resultText is the text of a tools/call answer's first content item.
func resultText(line []byte) (string, error) {
	var m struct {
		Result struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal(line, &m); err != nil {
		return "", err
	}
	if len(m.Result.Content) == 0 {
		return "", errors.New("no content")
	}
	return m.Result.Content[0].Text, nil
}

func (c *conn) failure(err error) error {
	return fmt.Errorf("%s: %v; stderr: %s", c.name, err, c.stderr.String())
}

// close ends the session: stdin closed, then the process group killed if
// it has not exited within a few seconds.
func (c *conn) close() {
	c.in.Close()
	exited := make(chan struct{})
	go func() {
		c.cmd.Wait()
		close(exited)
	}()
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	}
	// The group's stragglers (a server whose proxy was killed).
	syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
}

// tailBuffer keeps the last 8 KiB written to it (a process's stderr).
type tailBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > 8<<10 {
		t.b = append(t.b[:0], t.b[len(t.b)-8<<10:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

var _ io.Writer = (*tailBuffer)(nil)
