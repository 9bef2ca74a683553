// Command weir is an MCP security gateway: it sits between an MCP client and
// its servers, labels where every byte came from, and refuses the tool calls
// that would exfiltrate private data or act on an attacker's behalf.
//
// Usage:
//
//	weir run --name notes -- npx -y @modelcontextprotocol/server-filesystem ~/notes
//	weir audit tail
//	weir audit verify
//
// Run `weir help` for every command.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	if path := os.Getenv("WEIR_CPUPROFILE"); path != "" {
		// For performance work: a CPU profile of this process, written on
		// exit to PATH.PID (SIGINT and SIGTERM end the commands that serve
		// cleanly), one file per process of a benchmark.
		if f, err := os.Create(fmt.Sprintf("%s.%d", path, os.Getpid())); err == nil {
			_ = pprof.StartCPUProfile(f)
		}
	}
	code := execute(ctx, os.Args[1:])
	stop()
	pprof.StopCPUProfile()
	if path := os.Getenv("WEIR_MEMPROFILE"); path != "" {
		// The heap as the process ends (PATH.PID): what a long session
		// left resident, for footprint work.
		if f, err := os.Create(fmt.Sprintf("%s.%d", path, os.Getpid())); err == nil {
			_ = pprof.Lookup("heap").WriteTo(f, 0)
			_ = f.Close()
		}
	}
	os.Exit(code)
}

// exitError carries a process exit code through cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

func execute(ctx context.Context, args []string) int {
	root := newRoot()
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintf(os.Stderr, "weir: %v\n", ee.err)
		}
		return ee.code
	}
	fmt.Fprintf(os.Stderr, "weir: %v\n", err)
	return 2
}
