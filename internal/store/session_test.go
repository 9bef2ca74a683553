package store

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"testing"
)

// table is a fake process table for walk.
type table map[int]proc

func (t table) lookup(pid int) (proc, error) {
	p, ok := t[pid]
	if !ok {
		return proc{}, fmt.Errorf("process %d: %w", pid, fs.ErrNotExist)
	}
	p.pid = pid
	return p, nil
}

func TestWalk(t *testing.T) {
	self := proc{pid: 100, ppid: 99, name: "weir"}
	tests := []struct {
		name    string
		procs   table
		self    proc
		wantPID int
		wantEnd walkEnd
	}{
		{
			name: "client is the parent",
			procs: table{
				99: {ppid: 50, name: "Claude"},
			},
			wantPID: 99, wantEnd: endClient,
		},
		{
			name: "npx chain: title-rewritten node, sh, npx node, up to the client",
			procs: table{
				99: {ppid: 98, name: "sh", argv: []string{"sh", "-c", "weir run -- server"}},
				98: {ppid: 97, name: "npm exec weir", argv: []string{"npm exec weir"}},
				97: {ppid: 96, name: "node", argv: []string{"node", "/usr/lib/node_modules/npm/bin/npx-cli.js", "-y", "weir"}},
				96: {ppid: 1, name: "node", argv: []string{"node", "/opt/client/main.js"}},
			},
			wantPID: 96, wantEnd: endClient,
		},
		{
			name: "env and shells are launchers",
			procs: table{
				99: {ppid: 98, name: "env"},
				98: {ppid: 97, name: "bash"},
				97: {ppid: 96, name: "zsh"},
				96: {ppid: 95, name: "dash"},
				95: {ppid: 94, name: "fish"},
				94: {ppid: 93, name: "ksh"},
				93: {ppid: 92, name: "uvx"},
				92: {ppid: 91, name: "uv"},
				91: {ppid: 90, name: "pipx"},
				90: {ppid: 89, name: "pnpm"},
				89: {ppid: 88, name: "yarn"},
				88: {ppid: 87, name: "bunx"},
				87: {ppid: 86, name: "weir"},
				86: {ppid: 85, name: "cmd.exe"},
				85: {ppid: 84, name: "npx"},
				84: {ppid: 83, name: "npm"},
				83: {ppid: 2, name: "cursor"},
			},
			wantPID: 83, wantEnd: endClient,
		},
		{
			name: "node running npm by argv[1] basename",
			procs: table{
				99: {ppid: 98, name: "node", argv: []string{"/usr/bin/node", "/usr/local/bin/npm", "exec", "x"}},
				98: {ppid: 1, name: "code"},
			},
			wantPID: 98, wantEnd: endClient,
		},
		{
			name: "node running a cached npx package",
			procs: table{
				99: {ppid: 98, name: "node", argv: []string{"node", "/home/u/.npm/_npx/abc/node_modules/.bin/weir"}},
				98: {ppid: 1, name: "code"},
			},
			wantPID: 98, wantEnd: endClient,
		},
		{
			name: "a shell script run through its #! line",
			procs: table{
				99: {ppid: 98, name: "run-server", argv: []string{"/bin/sh", "/opt/bin/run-server"}},
				98: {ppid: 1, name: "code"},
			},
			wantPID: 98, wantEnd: endClient,
		},
		{
			name: "plain node script is a client",
			procs: table{
				99: {ppid: 98, name: "node", argv: []string{"node", "client.js"}},
				98: {ppid: 1, name: "bash"},
			},
			wantPID: 99, wantEnd: endClient,
		},
		{
			name: "node with an unreadable command line is a client",
			procs: table{
				99: {ppid: 98, name: "node"},
				98: {ppid: 1, name: "bash"},
			},
			wantPID: 99, wantEnd: endClient,
		},
		{
			name: "a name that merely starts with a launcher's is a client",
			procs: table{
				99: {ppid: 98, name: "shell-client"},
			},
			wantPID: 99, wantEnd: endClient,
		},
		{
			name: "launchers up to init: the top launcher names the session",
			procs: table{
				99: {ppid: 98, name: "sh"},
				98: {ppid: 1, name: "bash"},
				1:  {ppid: 0, name: "systemd"},
			},
			wantPID: 98, wantEnd: endTop,
		},
		{
			name: "a subreaper init ends the walk too",
			procs: table{
				99:   {ppid: 98, name: "sh"},
				98:   {ppid: 1500, name: "bash"},
				1500: {ppid: 1, name: "systemd"},
			},
			wantPID: 98, wantEnd: endTop,
		},
		{
			name: "parent is init: this process alone",
			self: proc{pid: 100, ppid: 1, name: "weir"},
			procs: table{
				1: {ppid: 0, name: "launchd"},
			},
			wantPID: 100, wantEnd: endSelf,
		},
		{
			name: "pid 1 that is a launcher is not passed",
			procs: table{
				99: {ppid: 1, name: "sh"},
				1:  {ppid: 0, name: "sh"},
			},
			wantPID: 99, wantEnd: endTop,
		},
		{
			name: "a client running as pid 1 of a container",
			self: proc{pid: 100, ppid: 1, name: "weir"},
			procs: table{
				1: {ppid: 0, name: "node", argv: []string{"node", "agent.js"}},
			},
			wantPID: 1, wantEnd: endClient,
		},
		{
			name: "top of a namespace (ppid 0)",
			procs: table{
				99: {ppid: 0, name: "bash"},
			},
			wantPID: 99, wantEnd: endTop,
		},
		{
			name: "a launcher above vanished: the last one seen",
			procs: table{
				99: {ppid: 98, name: "sh"},
			},
			wantPID: 99, wantEnd: endTop,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.self
			if s.pid == 0 {
				s = self
			}
			p, end, err := walk(s, tt.procs.lookup)
			if err != nil {
				t.Fatal(err)
			}
			if p.pid != tt.wantPID || end != tt.wantEnd {
				t.Errorf("walk = pid %d end %d, want pid %d end %d", p.pid, end, tt.wantPID, tt.wantEnd)
			}
		})
	}
}

func TestWalkErrors(t *testing.T) {
	// The parent cannot be read: no guessing.
	_, _, err := walk(proc{pid: 100, ppid: 99}, table{}.lookup)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing parent: err = %v", err)
	}
	// A permission error part-way is an error, not the end of the walk.
	denied := func(pid int) (proc, error) {
		if pid == 99 {
			return proc{pid: 99, ppid: 98, name: "sh"}, nil
		}
		return proc{}, fs.ErrPermission
	}
	if _, _, err := walk(proc{pid: 100, ppid: 99}, denied); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("denied: err = %v", err)
	}
	// A loop of launchers is bounded.
	loop := table{99: {ppid: 98, name: "sh"}, 98: {ppid: 99, name: "bash"}}
	_, _, err = walk(proc{pid: 100, ppid: 99}, loop.lookup)
	if err == nil || !strings.Contains(err.Error(), "WEIR_SESSION") {
		t.Errorf("loop: err = %v", err)
	}
}

func TestDescribe(t *testing.T) {
	p := proc{pid: 42, name: "node", start: 12345}
	key, how := describe(p, endClient)
	if key != "pid:42:12345" || how != "client process node (pid 42)" {
		t.Errorf("describe = %q, %q", key, how)
	}
}

func TestSessionKeyEnv(t *testing.T) {
	t.Setenv("WEIR_SESSION", "abc")
	key, how, err := SessionKey()
	if err != nil || key != "env:abc" || how != "WEIR_SESSION" {
		t.Errorf("SessionKey = %q, %q, %v", key, how, err)
	}
}

func TestParseProcargs(t *testing.T) {
	// argc, exec path, NUL padding, argv, then the environment.
	b := []byte{3, 0, 0, 0}
	b = append(b, "/usr/local/bin/node\x00\x00\x00\x00"...)
	b = append(b, "node\x00/usr/local/lib/node_modules/npm/bin/npx-cli.js\x00-y\x00PATH=/bin\x00HOME=/u\x00"...)
	got := parseProcargs(b)
	want := []string{"node", "/usr/local/lib/node_modules/npm/bin/npx-cli.js", "-y"}
	if !slices.Equal(got, want) {
		t.Errorf("parseProcargs = %q, want %q", got, want)
	}
	for _, bad := range [][]byte{nil, {1, 0}, {2, 0, 0, 0, 'x'}, {9, 0, 0, 0, 'x', 0, 'a', 0}} {
		_ = parseProcargs(bad) // must not panic
	}
	if got := parseProcargs([]byte{9, 0, 0, 0, 'x', 0, 'a', 0}); !slices.Equal(got, []string{"a"}) {
		t.Errorf("short procargs = %q", got)
	}
}
