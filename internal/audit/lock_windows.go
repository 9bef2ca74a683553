//go:build windows

package audit

import (
	"os"

	"golang.org/x/sys/windows"
)

// Windows byte-range locks are mandatory: a locked range cannot be read by
// other handles. The lock therefore covers one byte far past any real end of
// file, so readers that take no lock (Verify, Tail, Follow) are never refused.
const (
	lockOffsetLow  = 0xFFFFFFFE
	lockOffsetHigh = 0x7FFFFFFF
)

// lockFile takes an exclusive LockFileEx lock on f, waiting for it.
func lockFile(f *os.File) error {
	ol := windows.Overlapped{Offset: lockOffsetLow, OffsetHigh: lockOffsetHigh}
	return windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, &ol)
}

// unlockFile releases the lock taken by lockFile.
func unlockFile(f *os.File) error {
	ol := windows.Overlapped{Offset: lockOffsetLow, OffsetHigh: lockOffsetHigh}
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, &ol)
}
