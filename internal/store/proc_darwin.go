package store

import (
	"bytes"
	"fmt"

	"golang.org/x/sys/unix"
)

// readProc reads one process with sysctl kern.proc.pid and kern.procargs2.
func readProc(pid int) (proc, error) {
	k, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		// The kernel answers a pid that does not exist with an empty
		// record, which x/sys reports as EIO.
		if err == unix.EIO || err == unix.ESRCH {
			return proc{}, fmt.Errorf("process %d: %w", pid, errNoProcess)
		}
		return proc{}, fmt.Errorf("sysctl kern.proc.pid %d: %w", pid, err)
	}
	if int(k.Proc.P_pid) != pid {
		return proc{}, fmt.Errorf("process %d: %w", pid, errNoProcess)
	}
	comm := k.Proc.P_comm[:]
	if i := bytes.IndexByte(comm, 0); i >= 0 {
		comm = comm[:i]
	}
	tv := k.Proc.P_starttime
	p := proc{
		pid:   pid,
		ppid:  int(k.Eproc.Ppid),
		name:  string(comm),
		start: uint64(tv.Sec)*1_000_000 + uint64(tv.Usec),
	}
	// Another user's arguments are not readable; argv stays empty then.
	if b, err := unix.SysctlRaw("kern.procargs2", pid); err == nil {
		p.argv = parseProcargs(b)
	}
	return p, nil
}
