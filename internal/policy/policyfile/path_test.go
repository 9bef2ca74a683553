package policyfile

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/weir-sec/weir/internal/policy"
)

// pathFixture is a home directory with an allowed projects directory and
// the things an attacker would like to reach from it:
//
//	ROOT/etc/passwd
//	ROOT/home/u/.ssh/id_rsa
//	ROOT/home/u/projects/sub/file.txt
//	ROOT/home/u/projects/link        -> ROOT/etc         (inside pointing out)
//	ROOT/home/u/projects/up          -> ROOT/home/u      (a symlinked parent)
//	ROOT/home/u/projects/chain       -> projects/chain2 -> ROOT/etc/passwd
//	ROOT/home/u/projects/dangling    -> ROOT/etc/new     (target missing)
//	ROOT/home/u/projects/inner       -> projects/sub     (inside pointing in)
//	ROOT/home/u/projects/loop        -> projects/loop
//	ROOT/home/u/projects-evil/x
type pathFixture struct {
	root, home, projects string
}

func newPathFixture(t *testing.T) pathFixture {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the fixture uses Unix paths and symlinks")
	}
	// The temporary directory may itself sit behind a symlink (/tmp on
	// macOS); resolve it, as a within directory must be written.
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := pathFixture{root: root, home: filepath.Join(root, "home", "u")}
	f.projects = filepath.Join(f.home, "projects")
	for _, dir := range []string{"etc", "home/u/.ssh", "home/u/projects/sub", "home/u/projects-evil"} {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, file := range []string{"etc/passwd", "home/u/.ssh/id_rsa", "home/u/projects/sub/file.txt", "home/u/projects-evil/x"} {
		if err := os.WriteFile(filepath.Join(root, file), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"link":     filepath.Join(root, "etc"),
		"up":       f.home,
		"chain":    "chain2",
		"chain2":   filepath.Join(root, "etc", "passwd"),
		"dangling": filepath.Join(root, "etc", "new"),
		"inner":    "sub",
		"loop":     "loop",
	} {
		if err := os.Symlink(target, filepath.Join(f.projects, link)); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// TestResolvePathEscapes tries to reach outside ~/projects from a rule
// `path: {within: ["~/projects"]}` in every way we know of. Each attempt must
// either fail to resolve (a violation: the call is refused) or resolve to a
// path outside.
func TestResolvePathEscapes(t *testing.T) {
	f := newPathFixture(t)
	rule := &policy.ArgRule{Name: "path", Within: []string{f.projects}, WithinText: []string{"~/projects"}}
	sub := filepath.Join(f.projects, "sub")
	tests := []struct {
		name    string
		raw     string
		cwd     string
		wantErr error // nil: must resolve, to a path outside
	}{
		{"dot-dot climb from the home form", "~/projects/../.ssh/id_rsa", "/", nil},
		{"relative climb", "../.ssh/id_rsa", f.projects, nil},
		{"deep relative climb", "../../../../etc/passwd", sub, nil},
		{"absolute climb", f.projects + "/../.ssh/id_rsa", "/", nil},
		{"percent-encoded dots", "%2e%2e/.ssh/id_rsa", f.projects, ErrAmbiguousPath},
		{"percent-encoded dots, upper case", "~/projects/%2E%2E/.ssh/id_rsa", "/", ErrAmbiguousPath},
		{"percent-encoded slash", "..%2f.ssh%2fid_rsa", f.projects, ErrAmbiguousPath},
		{"double-encoded dots", "%252e%252e/%252e%252e/etc/passwd", sub, ErrAmbiguousPath},
		{"four times encoded", "%2525252e%2525252e/x", f.projects, ErrDeepEncoding},
		{"file URL climb", "file://" + f.projects + "/../../../../etc/passwd", "/", nil},
		{"file URL with a host", "file://evil.example" + f.projects + "/x", "/", ErrFileURL},
		{"file URL encoded climb (a URL path is decoded)", "file://" + f.projects + "/%2e%2e/.ssh/id_rsa", "/", nil},
		{"file URL double-encoded climb", "file://" + f.projects + "/%252e%252e/.ssh/id_rsa", "/", ErrAmbiguousPath},
		{"sibling with the prefix as its name", f.projects + "-evil/x", "/", nil},
		{"sibling, relative", "../projects-evil/x", f.projects, nil},
		{"symlink inside pointing outside", "~/projects/link/passwd", "/", nil},
		{"the symlink itself", "~/projects/link", "/", nil},
		{"symlinked parent directory", "~/projects/up/.ssh/id_rsa", "/", nil},
		{"symlinked parent, file not there yet", "~/projects/up/.ssh/authorized_keys", "/", nil},
		{"symlink chain", "~/projects/chain", "/", nil},
		{"dangling symlink pointing outside", "~/projects/dangling", "/", nil},
		{"symlink loop", "~/projects/loop", "/", ErrLinkLoop},
		{"trailing /..", f.projects + "/sub/../..", "/", nil},
		{"trailing /.. of the home form", "~/projects/..", "/", nil},
		{"double slashes", f.projects + "//..//.ssh//id_rsa", "/", nil},
		{"dot segments", f.projects + "/./.././.ssh/./id_rsa", "/", nil},
		{"NUL byte", "~/projects/sub/file.txt\x00../../.ssh/id_rsa", "/", ErrNULInPath},
		{"encoded NUL byte", "~/projects/x%00/../../.ssh/id_rsa", "/", ErrNULInPath},
		// On Unix "..\..\etc\passwd" is one file name, which would be inside;
		// a server that normalises separators would climb. Refused.
		{"backslash separators", `..\..\.ssh\id_rsa`, f.projects, ErrBackslash},
		{"mixed separators", `sub\..\..\..\.ssh/id_rsa`, f.projects, ErrBackslash},
		{"relative path against a cwd outside", "projects/sub/file.txt", filepath.Join(f.root, "etc"), nil},
		{"relative path with no cwd", "sub/file.txt", "", ErrRelativeCwd},
		{"empty string", "", f.projects, ErrEmptyPath},
		{"home itself", "~", "/", nil},
		{"the root", "/", "/", nil},
		// Case matters on Linux; on a case-insensitive file system the
		// upper-case path names the same directory but is refused anyway
		// (a false refusal, never a false allow).
		{"different case", "~/PROJECTS/sub/file.txt", "/", nil},
		{"~user is a name, relative to cwd", "~u/.ssh/id_rsa", f.root, nil},
	}
	if len(tests) < 15 {
		t.Fatalf("only %d escape attempts", len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ResolvePath(tt.raw, f.home, tt.cwd)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("ResolvePath(%q) = %q, %v; want error %v", tt.raw, r, err, tt.wantErr)
				}
			} else if err != nil {
				t.Fatalf("ResolvePath(%q): %v", tt.raw, err)
			} else if r == f.projects || strings.HasPrefix(r, f.projects+"/") {
				t.Fatalf("ResolvePath(%q) = %q, inside %s", tt.raw, r, f.projects)
			}
			msg := rule.Check(tt.raw, func(string) (string, bool) { return r, err == nil })
			if msg == "" {
				t.Fatalf("Check accepted %q", tt.raw)
			}
			if strings.Contains(msg, tt.raw) && tt.raw != "" && tt.raw != "/" && tt.raw != "~" {
				t.Errorf("violation %q quotes the value", msg)
			}
			if err != nil && strings.Contains(err.Error(), tt.raw) && len(tt.raw) > 1 {
				t.Errorf("error %q quotes the path", err)
			}
		})
	}
}

func TestResolvePathAccepts(t *testing.T) {
	f := newPathFixture(t)
	rule := &policy.ArgRule{Name: "path", Within: []string{f.projects}}
	sub := filepath.Join(f.projects, "sub")
	file := filepath.Join(sub, "file.txt")
	tests := []struct {
		name, raw, cwd, want string
	}{
		{"home form", "~/projects/sub/file.txt", "/", file},
		{"absolute", file, "/", file},
		{"relative to cwd", "sub/file.txt", f.projects, file},
		{"dot segments that stay inside", "./sub/../sub/./file.txt", f.projects, file},
		{"the directory itself", "~/projects", "/", f.projects},
		{"trailing slash", "~/projects/", "/", f.projects},
		{"not created yet", "~/projects/new/dir/notes.md", "/", filepath.Join(f.projects, "new/dir/notes.md")},
		{"file URL", "file://" + file, "/", file},
		{"file URL on localhost", "file://localhost" + file, "/", file},
		{"file URL with an escaped space", "file://" + sub + "/my%20notes.txt", "/", filepath.Join(sub, "my notes.txt")},
		{"escaped space in a name", "~/projects/a%20b.txt", "/", filepath.Join(f.projects, "a b.txt")},
		{"a stray percent", "~/projects/100%.txt", "/", filepath.Join(f.projects, "100%.txt")},
		{"symlink that stays inside", "~/projects/inner/file.txt", "/", file},
		{"climb out and back in", "../projects/sub/file.txt", f.projects, file},
		{"double slash", f.projects + "//sub//file.txt", "/", file},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ResolvePath(tt.raw, f.home, tt.cwd)
			if err != nil {
				t.Fatalf("ResolvePath(%q): %v", tt.raw, err)
			}
			if r != tt.want {
				t.Errorf("ResolvePath(%q) = %q, want %q", tt.raw, r, tt.want)
			}
			if msg := rule.Check(tt.raw, func(string) (string, bool) { return r, true }); msg != "" {
				t.Errorf("Check(%q): %s", tt.raw, msg)
			}
		})
	}
}

func TestResolvePathNoHome(t *testing.T) {
	if _, err := ResolvePath("~/x", "", "/"); !errors.Is(err, ErrNoHome) {
		t.Errorf("got %v, want ErrNoHome", err)
	}
	if _, err := ResolvePath("~/x", "relative/home", "/"); !errors.Is(err, ErrNoHome) {
		t.Errorf("got %v, want ErrNoHome", err)
	}
	if _, err := ResolvePath("x", "/home/u", "relative"); !errors.Is(err, ErrRelativeCwd) {
		t.Errorf("got %v, want ErrRelativeCwd", err)
	}
}

func TestPercentDecode(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"abc", "abc"},
		{"%2e%2E", ".."},
		{"100%", "100%"},
		{"%zz%2", "%zz%2"},
		{"%252e", "%2e"},
		{"a%20b%", "a b%"},
	} {
		if got := percentDecode(tt.in); got != tt.want {
			t.Errorf("percentDecode(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestResolveArgs(t *testing.T) {
	f := newPathFixture(t)
	p := mustParse(t, "version: 1\nrules:\n  - match: \"fs:*\"\n    args:\n      path: {within: [\""+f.projects+"\"]}\n      paths: {within: [\""+f.projects+"\"]}\n      mode: {one_of: [r]}\n")
	args := map[string]any{
		"path":  "sub/file.txt",
		"paths": []any{"~/projects/link/passwd", "x\x00", 3.0, []any{"inner"}},
		"mode":  "~/not-a-path",
	}
	m := ResolveArgs(p, "fs", "read", args, f.home, f.projects)
	want := map[string]string{
		"sub/file.txt":           filepath.Join(f.projects, "sub/file.txt"),
		"~/projects/link/passwd": filepath.Join(f.root, "etc/passwd"),
		"inner":                  filepath.Join(f.projects, "sub"),
	}
	if len(m) != len(want) {
		t.Errorf("ResolveArgs = %v", m)
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("ResolveArgs[%q] = %q, want %q", k, m[k], v)
		}
	}
	fired := p.Fire("fs", "read", args, policy.Vars{}, func(raw string) (string, bool) { r, ok := m[raw]; return r, ok })
	if len(fired) != 1 || fired[0].Detail != "$.paths[0] is outside "+f.projects {
		t.Errorf("fired %+v", fired)
	}
	if m := ResolveArgs(p, "other", "read", args, f.home, f.projects); m != nil {
		t.Errorf("no rule matches, got %v", m)
	}
}
