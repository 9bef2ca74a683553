package store

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
)

// readProc reads one process from /proc.
func readProc(pid int) (proc, error) {
	dir := "/proc/" + strconv.Itoa(pid)
	stat, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return proc{}, err
	}
	p, err := parseStat(stat)
	if err != nil {
		return proc{}, fmt.Errorf("%s/stat: %w", dir, err)
	}
	if p.pid != pid {
		return proc{}, fmt.Errorf("%s/stat: holds pid %d", dir, p.pid)
	}
	cmdline, err := os.ReadFile(dir + "/cmdline")
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return proc{}, err
	case err == nil:
		p.argv = splitCmdline(cmdline)
	}
	// Other errors leave argv empty: a node whose command line cannot be
	// read counts as a client, which at worst splits a session.
	return p, nil
}

// parseStat parses /proc/PID/stat: "pid (comm) state ppid ... starttime ...".
// comm can hold spaces and parentheses, so the fields after it are found
// from the last ')'.
func parseStat(b []byte) (proc, error) {
	open := bytes.IndexByte(b, '(')
	end := bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return proc{}, errors.New("malformed: no (comm)")
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:open])))
	if err != nil {
		return proc{}, fmt.Errorf("malformed pid: %w", err)
	}
	// Fields from 3 (state) on; starttime is field 22.
	f := strings.Fields(string(b[end+1:]))
	if len(f) < 20 {
		return proc{}, fmt.Errorf("malformed: %d fields after comm", len(f))
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return proc{}, fmt.Errorf("malformed ppid: %w", err)
	}
	start, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return proc{}, fmt.Errorf("malformed starttime: %w", err)
	}
	return proc{pid: pid, ppid: ppid, name: string(b[open+1 : end]), start: start}, nil
}

// splitCmdline splits /proc/PID/cmdline into its NUL-terminated words. A
// process that rewrote its title may leave one long word padded with NULs;
// empty words are dropped.
func splitCmdline(b []byte) []string {
	var argv []string
	for w := range bytes.SplitSeq(b, []byte{0}) {
		if len(w) > 0 {
			argv = append(argv, string(w))
		}
	}
	return argv
}
