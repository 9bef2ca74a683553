//go:build !unix

package main

import (
	"io"
	"os"
)

func pollableStdin() io.ReadCloser { return os.Stdin }
