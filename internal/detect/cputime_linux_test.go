package detect

import (
	"syscall"
	"time"
	"unsafe"
)

// threadCPU is the calling thread's CPU time. The time-budget tests and
// the benchmarks measure it next to wall time, because on a shared machine
// other processes' load distorts the latter; callers lock the goroutine
// to its thread first.
func threadCPU() time.Duration {
	const clockThreadCPUTimeID = 3
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}

const haveThreadCPU = true
