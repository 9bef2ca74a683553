//go:build !unix

package transport

import "os/exec"

func setProcessGroup(*exec.Cmd) {}

// Windows has no SIGTERM for console programs; closing stdin is the polite
// request, and killing is what is left.
func terminate(cmd *exec.Cmd) { _ = cmd.Process.Kill() }

func kill(cmd *exec.Cmd) { _ = cmd.Process.Kill() }
