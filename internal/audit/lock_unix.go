//go:build unix && !aix && !hurd

package audit

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// lockFile takes an exclusive flock(2) on f, waiting for it. flock locks
// belong to the open file description, so two Logs opened on one path
// exclude each other even within one process.
func lockFile(f *os.File) error { return flock(f, unix.LOCK_EX) }

// unlockFile releases the lock taken by lockFile.
func unlockFile(f *os.File) error { return flock(f, unix.LOCK_UN) }

func flock(f *os.File, how int) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) {
		for {
			ferr = unix.Flock(int(fd), how)
			if !errors.Is(ferr, unix.EINTR) {
				return
			}
		}
	}); err != nil {
		return err
	}
	return ferr
}
