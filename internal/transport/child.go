package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"
)

// Child is an MCP server running as a child process.
type Child struct {
	// Stdin is the server's standard input. Closing it asks the server to
	// exit (the MCP stdio shutdown signal).
	Stdin io.WriteCloser
	// Stdout is the server's standard output.
	Stdout io.ReadCloser

	cmd      *exec.Cmd
	done     chan struct{}
	waitErr  error
	stopOnce sync.Once
}

// Start runs argv with the given environment (nil means the current one).
// The server's standard error goes to stderr.
func Start(argv []string, env []string, stderr io.Writer) (*Child, error) {
	if len(argv) == 0 {
		return nil, errors.New("no server command given: put it after --, e.g. weir run -- npx -y @modelcontextprotocol/server-memory")
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return nil, fmt.Errorf("cannot start the MCP server: %w", err)
	}
	cmd := exec.Command(path, argv[1:]...)
	cmd.Env = env
	cmd.Stderr = stderr
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
		return nil, fmt.Errorf("cannot start the MCP server %q: %w", argv[0], err)
	}
	c := &Child{Stdin: stdin, Stdout: stdout, cmd: cmd, done: make(chan struct{})}
	go func() {
		c.waitErr = cmd.Wait()
		close(c.done)
	}()
	return c, nil
}

// Done is closed when the process has exited.
func (c *Child) Done() <-chan struct{} { return c.done }

// Wait waits for the process to exit and returns its exit code (-1 when it
// was killed by a signal).
func (c *Child) Wait() int {
	<-c.done
	return c.cmd.ProcessState.ExitCode()
}

// Err is the error from waiting on the process, after Done is closed.
func (c *Child) Err() error {
	<-c.done
	return c.waitErr
}

// Pid is the process id.
func (c *Child) Pid() int { return c.cmd.Process.Pid }

// Shutdown closes the server's input and waits up to grace for it to exit,
// then sends SIGTERM and waits up to grace again, then kills it. It returns
// when the process has exited or ctx is done.
func (c *Child) Shutdown(ctx context.Context, grace time.Duration) {
	c.stopOnce.Do(func() {
		_ = c.Stdin.Close()
		steps := []func(){func() { terminate(c.cmd) }, func() { kill(c.cmd) }}
		for _, step := range steps {
			t := time.NewTimer(grace)
			select {
			case <-c.done:
				t.Stop()
				return
			case <-ctx.Done():
				t.Stop()
				kill(c.cmd)
				return
			case <-t.C:
				step()
			}
		}
		<-c.done
	})
}
