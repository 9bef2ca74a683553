//go:build !windows && !(unix && !aix && !hurd)

package audit

import (
	"errors"
	"fmt"
	"os"
)

// On systems without flock(2) or LockFileEx, appends from several processes
// could interleave and fork the chain, so Append refuses rather than risk it.
func lockFile(*os.File) error {
	return fmt.Errorf("advisory file locks on this system: %w", errors.ErrUnsupported)
}

func unlockFile(*os.File) error { return nil }
