//go:build !linux

package detect

import "time"

func threadCPU() time.Duration { return 0 }

const haveThreadCPU = false
