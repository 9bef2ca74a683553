//go:build !linux

package policyfile

import "time"

func threadCPU() time.Duration { return 0 }
