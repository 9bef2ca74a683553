// Command relay is the bare relay of the overhead benchmark: the physical
// floor for one extra hop. It starts its arguments as a child process and
// copies bytes both ways with read(2) and write(2) through a 64 KiB buffer,
// parsing nothing: what a proxy costs before it does any work.
//
//	relay CMD [ARGS...]
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: relay CMD [ARGS...]")
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		fail(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		fail(err)
	}
	if err := cmd.Start(); err != nil {
		fail(err)
	}
	go func() {
		pump(in, os.Stdin)
		in.Close()
	}()
	pump(os.Stdout, out)
	err = cmd.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		os.Exit(exit.ExitCode())
	}
	if err != nil {
		fail(err)
	}
}

// pump copies src to dst until src ends. It is a plain loop rather than
// io.Copy so that no splice or sendfile path makes the floor lower than a
// userspace proxy could ever be.
func pump(dst io.Writer, src io.Reader) {
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "relay:", err)
	os.Exit(1)
}
