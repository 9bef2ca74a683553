// Package sysinfo is what the bench programs record about the machine and
// the tree they measured, and read of the processes they measure, so that
// each results file says where its numbers come from.
package sysinfo

import (
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
)

// Machine describes the computer.
type Machine struct {
	CPU    string `json:"cpu"`
	Cores  int    `json:"cores"`
	OS     string `json:"os"`
	Kernel string `json:"kernel"`
	Arch   string `json:"arch"`
}

// RepoRoot is the nearest folder up from the working directory with a
// go.mod.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the repository (no go.mod found)")
		}
		dir = parent
	}
}

// This is the machine the program runs on.
func This() Machine {
	m := Machine{CPU: "unknown", Cores: runtime.NumCPU(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	if data, err := os.ReadFile("/etc/os-release"); err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(l, "PRETTY_NAME="); ok {
				m.OS = strings.Trim(v, `"`)
			}
		}
	}
	if data, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(data))
	}
	return m
}

// Commit is HEAD's short hash, with -dirty when the code weir is built
// from has uncommitted changes, and those changes.
func Commit(root string) (string, []string) {
	c := strings.TrimSpace(Output("git", "-C", root, "rev-parse", "--short", "HEAD"))
	if c == "" {
		c = "unknown"
	}
	var changed []string
	for _, l := range strings.Split(Output("git", "-C", root, "status", "--porcelain", "--", "cmd", "internal", "go.mod", "go.sum"), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			changed = append(changed, l)
		}
	}
	if len(changed) > 0 {
		c += "-dirty"
	}
	return c, changed
}

// Output is a command's standard output, "" when it fails.
func Output(name string, args ...string) string {
	out, _ := exec.Command(name, args...).Output()
	return string(out)
}

// LoadAvg is the 1, 5 and 15 minute load averages (nil off Linux).
func LoadAvg() []float64 {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return nil
	}
	var l []float64
	for _, f := range strings.Fields(string(data))[:3] {
		v, _ := strconv.ParseFloat(f, 64)
		l = append(l, v)
	}
	return l
}

// VmHWM is a process's peak resident set size in KiB.
func VmHWM(pid int) (int, error) {
	v, err := status(pid, "VmHWM")
	return v["VmHWM"], err
}

// Round rounds x to digits decimals, for results files people read.
func Round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

// Memory is a process's resident set now (VmRSS) and at its peak (VmHWM),
// in KiB, from /proc/PID/status.
func Memory(pid int) (rss, hwm int, err error) {
	v, err := status(pid, "VmRSS", "VmHWM")
	return v["VmRSS"], v["VmHWM"], err
}

// Resident splits a process's resident set (KiB) into anonymous memory
// (its heap and stacks: its own) and file-backed pages (mostly its
// binary's, shared with every process running the same file).
func Resident(pid int) (anon, file int, err error) {
	v, err := status(pid, "RssAnon", "RssFile")
	return v["RssAnon"], v["RssFile"], err
}

// Shares is what a process holds, in KiB, counting shared pages once
// among the processes that map them (/proc/PID/smaps_rollup): pss, its
// proportional share (a page ten processes map counts a tenth in each),
// and uss, the pages only it maps (Private_Clean + Private_Dirty), what
// ending it would give back.
func Shares(pid int) (pss, uss int, err error) {
	v, err := kibFields(fmt.Sprintf("/proc/%d/smaps_rollup", pid), "Pss", "Private_Clean", "Private_Dirty")
	return v["Pss"], v["Private_Clean"] + v["Private_Dirty"], err
}

// status reads the named KiB fields of /proc/PID/status; a field missing
// is an error.
func status(pid int, keys ...string) (map[string]int, error) {
	return kibFields(fmt.Sprintf("/proc/%d/status", pid), keys...)
}

// kibFields reads the named "Key: N kB" fields of a /proc file; a field
// missing is an error.
func kibFields(path string, keys ...string) (map[string]int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, l := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok || !slices.Contains(keys, k) {
			continue
		}
		fields := strings.Fields(v)
		if len(fields) == 0 {
			continue
		}
		n, err := strconv.Atoi(fields[0])
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", path, k, err)
		}
		out[k] = n
	}
	for _, k := range keys {
		if _, ok := out[k]; !ok {
			return nil, fmt.Errorf("no %s in %s", k, path)
		}
	}
	return out, nil
}
