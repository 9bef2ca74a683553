//go:build !unix

package clients

import "os/exec"

// setGroup does nothing where there are no process groups; killGroup ends
// the server's own process.
func setGroup(*exec.Cmd) {}

func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
