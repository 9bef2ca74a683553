//go:build !linux && !darwin

package store

import (
	"os"
	"strconv"
)

// processSession names the session by the parent process: on this system
// Weir does not walk the process tree, so a launcher between the client and
// this process (npx, a shell) splits the client's proxies into separate
// sessions. Set WEIR_SESSION to share one.
func processSession() (key, how string, err error) {
	ppid := os.Getppid()
	return "ppid:" + strconv.Itoa(ppid), "parent process (pid " + strconv.Itoa(ppid) + ")", nil
}
