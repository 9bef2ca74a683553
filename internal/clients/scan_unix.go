//go:build unix

package clients

import (
	"os/exec"
	"syscall"
)

// setGroup starts a scanned server in a process group of its own, so that
// killGroup ends whatever it started too (npx starts node, uvx python...).
func setGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
