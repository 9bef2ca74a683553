package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// cpuTime is the CPU time a process's live threads have run, in
// nanoseconds, from each thread's schedstat (finer than /proc/PID/stat's
// clock ticks, which a quick run would see as zero).
func cpuTime(pid int) time.Duration {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	var total int64
	for _, t := range tasks {
		data, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		if f := strings.Fields(string(data)); len(f) > 0 {
			n, _ := strconv.ParseInt(f[0], 10, 64)
			total += n
		}
	}
	return time.Duration(total)
}

// children are the processes whose parent is pid, from /proc/*/stat.
func children(pid int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []int
	for _, st := range stats {
		data, err := os.ReadFile(st)
		if err != nil {
			continue
		}
		s := string(data)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:]) // state, ppid, …
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			if c, err := strconv.Atoi(filepath.Base(filepath.Dir(st))); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}
