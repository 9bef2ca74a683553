package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
)

// SessionKey names the client session this process serves. Proxies that get
// the same key share flow state; proxies of different clients must not.
//
// The key is, in order of preference:
//
//   - "env:VALUE" when WEIR_SESSION is set and not empty (how is
//     "WEIR_SESSION");
//   - "pid:PID:START" naming the MCP client process, found by walking up the
//     process tree from this process's parent past launchers (npx, npm,
//     uvx, shells and scripts they run, env, weir, and node when it is
//     running npx or npm; a plain `node client.js` is a client). START
//     is the process start time, so a pid the OS reuses for another client
//     later is a different session. how is "client process NAME (pid PID)".
//     This is how it works on Linux (/proc) and macOS (sysctl).
//   - "ppid:N" on other systems, naming the parent process without walking.
//
// The walk stops at pid 1 and at any init system (systemd, launchd, tini and
// the like, which also adopt orphans as subreapers). pid 1 is the client only
// if it is neither a launcher nor an init system, so a client running as the
// first process of a container is found. When the walk ends at init or at the
// top of the tree without finding a client, the last launcher passed (the
// root of the chain that started this process) names the session; if there
// was none, because this process's own parent is init, this process alone
// names it. Either way the session is never shared with an unrelated client:
// sharing needs a common ancestor below init. A walk longer than 32 levels is
// an error, and so is a process table that cannot be read; set WEIR_SESSION
// to choose the session explicitly.
func SessionKey() (key, how string, err error) {
	if v, ok := os.LookupEnv("WEIR_SESSION"); ok && v != "" {
		return "env:" + v, "WEIR_SESSION", nil
	}
	return processSession()
}

// maxWalk bounds the walk up the process tree.
const maxWalk = 32

// A proc is what the walk needs to know about one process.
type proc struct {
	pid, ppid int
	// name is the process name as the OS reports it (comm on Linux and
	// macOS); it may be truncated and may have been rewritten by the
	// process (node sets it from process.title).
	name string
	// start is the process start time in OS-specific units; with pid it
	// identifies the process across pid reuse.
	start uint64
	// argv is the command line, when it could be read.
	argv []string
}

// walkEnd says how a walk ended.
type walkEnd int

const (
	// endClient: the walk found a process that is not a launcher.
	endClient walkEnd = iota
	// endTop: the walk passed launchers up to pid 1 or the top of the
	// tree; the process returned is the last launcher passed.
	endTop
	// endSelf: the starting process's parent is init; the process returned
	// is the starting process itself.
	endSelf
)

// errNoProcess marks a lookup of a process that does not exist.
var errNoProcess = fs.ErrNotExist

// walk finds the process that names the session of self: the first ancestor
// of self that is not a launcher. lookup reads one process from the process
// table; it returns an error matching fs.ErrNotExist for a process that is
// gone. See SessionKey for how the walk ends at the top of the tree.
func walk(self proc, lookup func(pid int) (proc, error)) (proc, walkEnd, error) {
	last, end := self, endSelf
	pid := last.ppid
	for range maxWalk {
		if pid <= 0 {
			return last, end, nil
		}
		p, err := lookup(pid)
		if err != nil {
			if errors.Is(err, errNoProcess) && pid != self.ppid {
				// The chain above was torn down while we walked it
				// (a launcher exited); what we passed is its root.
				return last, end, nil
			}
			return proc{}, 0, fmt.Errorf("reading process %d: %w", pid, err)
		}
		switch {
		case isInit(p.name) || pid == 1 && isLauncher(p):
			// Init, or a subreaper that adopted an orphaned chain.
			return last, end, nil
		case !isLauncher(p):
			return p, endClient, nil
		}
		last, end = p, endTop
		pid = p.ppid
	}
	return proc{}, 0, fmt.Errorf("more than %d launchers above process %d (a loop in the process table?); set WEIR_SESSION to name the session", maxWalk, self.pid)
}

// launchers are processes that start an MCP server on a client's behalf;
// the walk passes them to find the client.
var launchers = map[string]bool{
	"npx": true, "npm": true, "pnpm": true, "yarn": true, "bunx": true,
	"uvx": true, "uv": true, "pipx": true, "env": true,
	"sh": true, "bash": true, "zsh": true, "dash": true, "fish": true, "ksh": true,
	"cmd.exe": true, "weir": true,
}

// inits are the names pid 1 has when it is an init system rather than a
// client running as the first process of a container.
var inits = map[string]bool{
	"init": true, "systemd": true, "launchd": true, "tini": true,
	"dumb-init": true, "docker-init": true, "catatonit": true,
}

// isLauncher reports whether p is a launcher the walk passes. node counts
// only when it is running npx or npm; a plain `node client.js` is a client.
// The command line counts as well as the name: a script run through its #!
// line is named after the script, but its argv[0] is the shell.
func isLauncher(p proc) bool {
	name := baseName(p.name)
	if launchers[name] || len(p.argv) > 0 && launchers[baseName(p.argv[0])] {
		return true
	}
	if name == "node" || name == "nodejs" {
		return nodeRunsNPM(p.argv)
	}
	return false
}

// nodeRunsNPM reports whether a node command line runs npx or npm.
func nodeRunsNPM(argv []string) bool {
	for _, a := range argv {
		a = strings.ReplaceAll(a, `\`, "/")
		if strings.Contains(a, "npx-cli.js") || strings.Contains(a, "npm-cli.js") || strings.Contains(a, "/_npx/") {
			return true
		}
	}
	if len(argv) > 1 {
		switch baseName(argv[1]) {
		case "npx", "npm":
			return true
		}
	}
	return false
}

// baseName reduces a process name or argv word to the program's bare name.
// npm and npx set their process title to "npm exec PACKAGE", which becomes
// the name node reports, so only the first word counts; a path keeps only its
// last element; a trailing ".exe" is dropped except from cmd.exe.
func baseName(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), " ")
	s = path.Base(strings.ReplaceAll(s, `\`, "/"))
	if s != "cmd.exe" {
		s = strings.TrimSuffix(s, ".exe")
	}
	return s
}

func isInit(name string) bool { return inits[baseName(name)] }

// describe turns the end of a walk into a session key and a description.
func describe(p proc, end walkEnd) (key, how string) {
	key = "pid:" + strconv.Itoa(p.pid) + ":" + strconv.FormatUint(p.start, 10)
	switch end {
	case endClient:
		how = fmt.Sprintf("client process %s (pid %d)", p.name, p.pid)
	case endTop:
		how = fmt.Sprintf("launcher %s (pid %d), the top of the chain that started this process: no client process above it", p.name, p.pid)
	default:
		how = fmt.Sprintf("this process alone (pid %d): its parent is init, so there is no client process to share a session with", p.pid)
	}
	return key, how
}
