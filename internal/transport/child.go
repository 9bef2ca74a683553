package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultWaitDelay is how long a Child waits, once its process has exited,
// for the standard error it copies to close when Command.WaitDelay is 0.
const DefaultWaitDelay = 500 * time.Millisecond

// Command says how to start an MCP server as a child process.
type Command struct {
	// Argv is the command and its arguments. A command without a path
	// separator is looked up in this process's PATH; a relative path is
	// taken from Dir.
	Argv []string
	// Env is the server's whole environment; nil means this process's.
	Env []string
	// Dir is the server's working directory; "" means this process's.
	Dir string
	// Stderr receives the server's standard error; nil discards it. An
	// *os.File is handed to the server as it is; any other writer is fed
	// by a copy that ends when every process holding the pipe has exited,
	// or WaitDelay after the server itself exited, whichever comes first.
	Stderr io.Writer
	// WaitDelay bounds how long the Child waits, after the server has
	// exited, for a process it started (a grandchild) that still holds
	// its standard error open: Done is then closed anyway. 0 means
	// DefaultWaitDelay.
	WaitDelay time.Duration
}

// Child is an MCP server running as a child process, in a process group of
// its own where the system has them: a launcher (npx, uvx, sh) and the
// server it starts are stopped together.
type Child struct {
	// Stdin is the server's standard input. Closing it asks the server to
	// exit (the MCP stdio shutdown signal).
	Stdin io.WriteCloser
	// Stdout is the server's standard output. It ends when every process
	// holding its write end has exited, not when Done is closed, so the
	// last messages of a crashing server are still read. The caller
	// closes it.
	Stdout io.ReadCloser

	cmd      *exec.Cmd
	done     chan struct{}
	waitErr  error
	stopped  atomic.Bool
	stopOnce sync.Once
}

// ErrNoCommand is returned for an empty command: it says how to give one.
var ErrNoCommand = errors.New("no server command given: put it after --, e.g. weir run -- npx -y @modelcontextprotocol/server-memory")

// Start runs argv with the given environment (nil means the current one),
// its standard error going to stderr. It is StartCommand without a
// context, directory or wait delay.
func Start(argv []string, env []string, stderr io.Writer) (*Child, error) {
	return StartCommand(context.Background(), Command{Argv: argv, Env: env, Stderr: stderr})
}

// StartCommand starts c. When ctx is done before the server has exited,
// the server and its process group are killed, as by Kill.
func StartCommand(ctx context.Context, c Command) (*Child, error) {
	if len(c.Argv) == 0 {
		return nil, ErrNoCommand
	}
	cmd := exec.Command(c.Argv[0], c.Argv[1:]...)
	if cmd.Err != nil {
		// exec.Command looks the command up in PATH; the error is an
		// *exec.Error naming it.
		return nil, fmt.Errorf("cannot start the MCP server: %w", cmd.Err)
	}
	cmd.Env, cmd.Dir, cmd.Stderr = c.Env, c.Dir, c.Stderr
	cmd.WaitDelay = c.WaitDelay
	if cmd.WaitDelay <= 0 {
		cmd.WaitDelay = DefaultWaitDelay
	}
	setProcessGroup(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("cannot start the MCP server: %w", err)
	}
	// An os.Pipe rather than cmd.StdoutPipe: Wait closes the latter as soon
	// as the process exits, which can lose the last messages still in the
	// pipe. Ours ends when every process holding the write end has exited.
	stdout, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("cannot start the MCP server: %w", err)
	}
	cmd.Stdout = w
	err = cmd.Start()
	w.Close()
	if err != nil {
		stdout.Close()
		return nil, fmt.Errorf("cannot start the MCP server %q: %w", c.Argv[0], err)
	}
	ch := &Child{Stdin: stdin, Stdout: stdout, cmd: cmd, done: make(chan struct{})}
	stopWatch := context.AfterFunc(ctx, ch.Kill)
	go func() {
		ch.waitErr = cmd.Wait()
		close(ch.done)
		stopWatch()
	}()
	return ch, nil
}

// Done is closed when the process has exited (and its standard error has
// been copied, or WaitDelay has passed).
func (c *Child) Done() <-chan struct{} { return c.done }

// Wait waits for the process to exit and returns its exit code (-1 when it
// was killed by a signal).
func (c *Child) Wait() int {
	<-c.done
	return c.cmd.ProcessState.ExitCode()
}

// Err is the error from waiting on the process, after Done is closed: nil
// for exit status 0, an *exec.ExitError for another status or a signal,
// exec.ErrWaitDelay when it exited 0 but its standard error was still held
// open WaitDelay later.
func (c *Child) Err() error {
	<-c.done
	return c.waitErr
}

// ExitStatus says how the process ended, for people: "exited with status
// 0", "exited with status 2", "was killed (signal: killed)". It waits for
// the process to exit.
func (c *Child) ExitStatus() string {
	<-c.done
	ps := c.cmd.ProcessState
	switch {
	case ps == nil:
		return "exited: " + c.waitErr.Error()
	case ps.ExitCode() >= 0:
		return fmt.Sprintf("exited with status %d", ps.ExitCode())
	}
	return "was killed (" + ps.String() + ")"
}

// Stopped reports whether Weir ended the process — by Kill, by a signal
// from Shutdown, or by the end of the context given to StartCommand —
// while it was still running, rather than it exiting on its own (closing
// its input does not count: that asks it to exit). Read it after Done.
func (c *Child) Stopped() bool { return c.stopped.Load() }

// Pid is the process id.
func (c *Child) Pid() int { return c.cmd.Process.Pid }

// Kill ends the process and, where there are process groups, every process
// in its group, at once (SIGKILL). It does not wait: Done is closed once
// the process has exited. Killing the group again after the server has
// exited ends what it left behind.
func (c *Child) Kill() { c.signal(kill) }

// signal sends one of terminate or kill, noting that Weir stopped the
// process if it was still running.
func (c *Child) signal(f func(*exec.Cmd)) {
	select {
	case <-c.done:
	default:
		c.stopped.Store(true)
	}
	f(c.cmd)
}

// Shutdown closes the server's input and waits up to grace for it to exit,
// then sends SIGTERM and waits up to grace again, then kills it. Whatever
// it left running in its process group is killed once it has exited. It
// returns when the process has exited or ctx is done.
func (c *Child) Shutdown(ctx context.Context, grace time.Duration) {
	c.stopOnce.Do(func() {
		defer kill(c.cmd) // leftovers of a server that exited on its own
		_ = c.Stdin.Close()
		steps := []func(){func() { c.signal(terminate) }, func() { c.signal(kill) }}
		for _, step := range steps {
			t := time.NewTimer(grace)
			select {
			case <-c.done:
				t.Stop()
				return
			case <-ctx.Done():
				t.Stop()
				c.signal(kill)
				return
			case <-t.C:
				step()
			}
		}
		<-c.done
	})
}
