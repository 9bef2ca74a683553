//go:build !linux

package policy

import "time"

func threadCPU() time.Duration { return 0 }
