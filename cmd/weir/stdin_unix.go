//go:build unix

package main

import (
	"io"
	"os"
	"syscall"
)

// pollableStdin returns standard input in non-blocking mode, so closing it
// unblocks a pending Read when the server side of the relay ends first.
func pollableStdin() io.ReadCloser {
	if err := syscall.SetNonblock(0, true); err != nil {
		return os.Stdin
	}
	return os.NewFile(0, "/dev/stdin")
}
