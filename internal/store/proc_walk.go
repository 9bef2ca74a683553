//go:build linux || darwin

package store

import (
	"fmt"
	"os"
)

// processSession walks the process table from this process up to the
// client; readProc (per OS: /proc on Linux, sysctl on macOS) reads one
// process.
func processSession() (key, how string, err error) {
	self, err := readProc(os.Getpid())
	if err != nil {
		return "", "", fmt.Errorf("session: reading this process: %w; set WEIR_SESSION to name the session", err)
	}
	p, end, err := walk(self, readProc)
	if err != nil {
		return "", "", fmt.Errorf("session: %w; set WEIR_SESSION to name the session", err)
	}
	key, how = describe(p, end)
	return key, how, nil
}
