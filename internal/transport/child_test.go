//go:build unix

package transport

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for the copy goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// run starts c, reads its stdout to the end, and waits for it.
func run(t *testing.T, c Command) (*Child, string) {
	t.Helper()
	ch, err := StartCommand(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ch.Kill)
	out, err := io.ReadAll(ch.Stdout)
	ch.Stdout.Close()
	if err != nil {
		t.Fatal(err)
	}
	<-ch.Done()
	return ch, string(out)
}

func TestStartCommandDirAndEnv(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ch, out := run(t, Command{
		Argv: []string{"sh", "-c", `pwd; printf '%s|%s\n' "$WEIR_T" "${HOME-unset}"`},
		Env:  []string{"WEIR_T=x=y", "PATH=" + os.Getenv("PATH")},
		Dir:  dir,
	})
	if want := dir + "\nx=y|unset\n"; out != want {
		t.Errorf("stdout %q, want %q", out, want)
	}
	if ch.Wait() != 0 || ch.Err() != nil || ch.Stopped() || ch.ExitStatus() != "exited with status 0" {
		t.Errorf("exit %d err %v stopped %v status %q", ch.Wait(), ch.Err(), ch.Stopped(), ch.ExitStatus())
	}
}

// A relative command with a path separator is taken from Dir, as exec
// does, and the server sees argv[0] as written.
func TestStartCommandRelativeToDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "srv.sh"), []byte("#!/bin/sh\necho \"$0 $1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, out := run(t, Command{Argv: []string{"./srv.sh", "hi"}, Dir: dir})
	if out != "./srv.sh hi\n" {
		t.Errorf("stdout %q", out)
	}
}

func TestStartCommandStderrAndExitStatus(t *testing.T) {
	var stderr syncBuffer
	ch, out := run(t, Command{Argv: []string{"sh", "-c", "echo out; echo 'fatal: no database' >&2; exit 2"}, Stderr: &stderr})
	if out != "out\n" || stderr.String() != "fatal: no database\n" {
		t.Errorf("stdout %q stderr %q", out, stderr.String())
	}
	var ee *exec.ExitError
	if ch.Wait() != 2 || !errors.As(ch.Err(), &ee) || ch.Stopped() || ch.ExitStatus() != "exited with status 2" {
		t.Errorf("exit %d err %v stopped %v status %q", ch.Wait(), ch.Err(), ch.Stopped(), ch.ExitStatus())
	}
}

func TestStartCommandNotFound(t *testing.T) {
	_, err := StartCommand(context.Background(), Command{Argv: []string{"weir-no-such-server-xyz"}})
	var ee *exec.Error
	if !errors.As(err, &ee) || !errors.Is(err, exec.ErrNotFound) || !strings.Contains(err.Error(), "cannot start the MCP server") {
		t.Errorf("err %v", err)
	}
	if _, err := Start(nil, nil, nil); err == nil {
		t.Errorf("no error for an empty command")
	}
}

// TestKillEndsProcessGroup: Kill ends the server and a grandchild it
// started, which would otherwise outlive it.
func TestKillEndsProcessGroup(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "alive")
	ch, err := StartCommand(context.Background(), Command{Argv: []string{"sh", "-c",
		"(while :; do touch " + marker + "; sleep 0.05; done) & echo started; wait"}})
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Stdout.Close()
	line := make([]byte, 8)
	if _, err := io.ReadFull(ch.Stdout, line); err != nil || string(line) != "started\n" {
		t.Fatalf("read %q, %v", line, err)
	}
	waitFor(t, func() bool { _, err := os.Stat(marker); return err == nil })
	ch.Kill()
	select {
	case <-ch.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the server did not exit after Kill")
	}
	if !ch.Stopped() || ch.Wait() != -1 || ch.ExitStatus() != "was killed (signal: killed)" {
		t.Errorf("stopped %v exit %d status %q", ch.Stopped(), ch.Wait(), ch.ExitStatus())
	}
	// Stdout ends: nothing holds the pipe any more.
	if _, err := io.ReadAll(ch.Stdout); err != nil {
		t.Errorf("reading stdout after Kill: %v", err)
	}
	time.Sleep(200 * time.Millisecond)
	os.Remove(marker)
	time.Sleep(300 * time.Millisecond)
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the grandchild still runs after Kill")
	}
}

// TestWaitDelay: a server that exits while a grandchild holds its stderr
// open is seen to exit within WaitDelay, and Kill afterwards ends the
// grandchild.
func TestWaitDelay(t *testing.T) {
	var stderr syncBuffer
	start := time.Now()
	ch, err := StartCommand(context.Background(), Command{
		Argv:      []string{"sh", "-c", "echo bye >&2; sleep 30 >/dev/null & exit 0"},
		Stderr:    &stderr,
		WaitDelay: 200 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Stdout.Close()
	select {
	case <-ch.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Done was not closed while a grandchild held stderr")
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("Done after %s", el)
	}
	if ch.Stopped() || ch.ExitStatus() != "exited with status 0" || !errors.Is(ch.Err(), exec.ErrWaitDelay) || stderr.String() != "bye\n" {
		t.Errorf("stopped %v status %q err %v stderr %q", ch.Stopped(), ch.ExitStatus(), ch.Err(), stderr.String())
	}
	ch.Kill() // the sleep is in the group
	done := make(chan struct{})
	go func() { io.Copy(io.Discard, ch.Stdout); close(done) }()
	select {
	case <-done: // stdout ends once the grandchild holding it is gone
	case <-time.After(5 * time.Second):
		t.Errorf("Kill after exit did not end the grandchild")
	}
}

// TestContextKills: the end of StartCommand's context kills the server.
func TestContextKills(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	ch, err := StartCommand(ctx, Command{Argv: []string{"sleep", "60"}})
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Stdout.Close()
	select {
	case <-ch.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the context's end did not kill the server")
	}
	if !ch.Stopped() || ch.ExitStatus() != "was killed (signal: killed)" {
		t.Errorf("stopped %v status %q", ch.Stopped(), ch.ExitStatus())
	}
}

// TestShutdown: closing stdin is enough for a well-behaved server (it
// exits on its own); one that ignores it and SIGTERM is killed.
func TestShutdown(t *testing.T) {
	ch, err := Start([]string{"cat"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Stdout.Close()
	ch.Shutdown(context.Background(), time.Second)
	if ch.Stopped() || ch.Wait() != 0 {
		t.Errorf("cat: stopped %v exit %d", ch.Stopped(), ch.Wait())
	}

	ch, err = Start([]string{"sh", "-c", "trap '' TERM; echo ready; while :; do sleep 0.05; done"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Stdout.Close()
	ready := make([]byte, 6)
	if _, err := io.ReadFull(ch.Stdout, ready); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	ch.Shutdown(context.Background(), 100*time.Millisecond)
	if !ch.Stopped() || ch.ExitStatus() != "was killed (signal: killed)" || time.Since(start) > 3*time.Second {
		t.Errorf("stubborn: stopped %v status %q after %s", ch.Stopped(), ch.ExitStatus(), time.Since(start))
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
