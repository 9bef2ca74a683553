//go:build !linux

package fingerprint

import "time"

func threadCPU() time.Duration { return 0 }
