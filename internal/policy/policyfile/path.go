package policyfile

import (
	"errors"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/weir-sec/weir/internal/policy"
)

// maxDecodeRounds bounds percent-decoding: a path still changing after this
// many rounds is refused rather than guessed at.
const maxDecodeRounds = 3

// Errors from ResolvePath. They never quote the path: it is a call's
// argument, and reasons reach logs.
var (
	ErrEmptyPath     = errors.New("empty path")
	ErrNULInPath     = errors.New("path contains a NUL byte")
	ErrBackslash     = errors.New(`path contains "\"; some servers read it as a separator, so Weir cannot tell which file it names`)
	ErrDeepEncoding  = errors.New("path is percent-encoded more than 3 times")
	ErrAmbiguousPath = errors.New("path names a different directory once percent-decoded; Weir cannot tell which one the server opens")
	ErrFileURL       = errors.New("file URL is not of the form file:///path")
	ErrNoHome        = errors.New("path starts with ~ but the home directory is not known")
	ErrRelativeCwd   = errors.New("path is relative and the working directory is not known")
)

// ResolvePath turns a raw path argument into the absolute, clean path of
// the file it names, for `within` checks. It is the one place that does I/O
// for argument rules; the relay calls it for each argument [Policy.PathArgs]
// names, before the (pure) decision, and hands the result to
// [policy.ArgRule.Check].
//
// In order:
//
//  1. A file: URL ("file:///home/u/x", "file://localhost/x") becomes its
//     path (URL-decoded once, as URL syntax says); any other host is an
//     error.
//  2. The path is percent-decoded until it stops changing, at most three
//     rounds ("%252e%252e" is ".."); still changing after that is an error.
//     Both the path as written and the decoded path are resolved (steps
//     3-5): a server may or may not decode. If they end in different
//     directories ("%2e%2e/x", "a%2fb") that is an error, so an escape
//     through either reading is refused; if they differ only in the last
//     name ("a%20b.txt") the decoded path is returned.
//  3. "~" and "~/…" are relative to home; "~user" is an ordinary name.
//     Other relative paths are relative to cwd.
//  4. filepath.Clean removes "//", "/./" and resolves "..", lexically.
//  5. Symlinks are resolved on the longest prefix that exists
//     (filepath.EvalSymlinks), and the rest is appended: a symlink inside
//     an allowed directory that points outside resolves to the outside
//     path, however deep the link is and whether or not the file at the end
//     exists. A dangling symlink is followed to its (missing) target, since
//     writing through it creates the target.
//
// Refused outright: an empty path, a NUL byte anywhere (also once decoded:
// C servers stop at it), and, where "\" is not the separator (Unix), any
// backslash: on Unix "..\..\etc" is one odd file name, but a server that
// normalises separators reads it as a climb, and Weir cannot know which.
//
// Resolution is a snapshot: a file system that changes between the check and
// the server's open (a symlink swapped in) is not something a proxy can
// prevent.
func ResolvePath(raw, home, cwd string) (string, error) {
	if raw == "" {
		return "", ErrEmptyPath
	}
	if strings.IndexByte(raw, 0) >= 0 {
		return "", ErrNULInPath
	}
	p := raw
	if len(p) >= 5 && strings.EqualFold(p[:5], "file:") {
		u, err := url.Parse(p)
		if err != nil || u.Opaque != "" || u.Path == "" || (u.Host != "" && !strings.EqualFold(u.Host, "localhost")) {
			return "", ErrFileURL
		}
		p = u.Path
	}
	decoded := p
	for round := 0; ; round++ {
		next := percentDecode(decoded)
		if next == decoded {
			break
		}
		if round == maxDecodeRounds {
			return "", ErrDeepEncoding
		}
		decoded = next
	}
	for _, s := range []string{p, decoded} {
		if strings.IndexByte(s, 0) >= 0 {
			return "", ErrNULInPath
		}
		if filepath.Separator != '\\' && strings.IndexByte(s, '\\') >= 0 {
			return "", ErrBackslash
		}
		if s == "" {
			return "", ErrEmptyPath
		}
	}
	asWritten, err := resolveOne(p, home, cwd)
	if err != nil {
		return "", err
	}
	if decoded == p {
		return asWritten, nil
	}
	asDecoded, err := resolveOne(decoded, home, cwd)
	if err != nil {
		return "", err
	}
	if filepath.Dir(asWritten) != filepath.Dir(asDecoded) {
		return "", ErrAmbiguousPath
	}
	return asDecoded, nil
}

// resolveOne is steps 3-5 of ResolvePath for one reading of the path.
func resolveOne(p, home, cwd string) (string, error) {
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		if home == "" || !filepath.IsAbs(home) {
			return "", ErrNoHome
		}
		p = filepath.Join(home, p[1:])
	case !filepath.IsAbs(p):
		if cwd == "" || !filepath.IsAbs(cwd) {
			return "", ErrRelativeCwd
		}
		p = filepath.Join(cwd, p)
	}
	return evalExisting(filepath.Clean(p), 0)
}

// maxLinks bounds the symlinks followed by hand (dangling links), as the
// kernel bounds them (ELOOP).
const maxLinks = 40

// ErrLinkLoop is returned for a path through too many symlinks.
var ErrLinkLoop = errors.New("path goes through too many symbolic links")

// evalExisting resolves the symlinks of the longest prefix of the clean
// absolute path p that resolves, and appends the rest. A prefix that cannot
// be resolved (missing, not a directory, no permission) is treated as not
// existing: the server cannot open through it either. The exception is a
// dangling symlink: creating a file through it creates the link's target,
// so it is followed by hand.
func evalExisting(p string, links int) (string, error) {
	rest := ""
	for {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return joinRest(r, rest), nil
		}
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			if links >= maxLinks {
				return "", ErrLinkLoop
			}
			target, err := os.Readlink(p)
			if err != nil {
				return "", ErrLinkLoop
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(p), target)
			}
			return evalExisting(filepath.Clean(joinRest(target, rest)), links+1)
		}
		parent := filepath.Dir(p)
		if parent == p { // the root itself did not resolve
			return joinRest(p, rest), nil
		}
		rest = joinRest(filepath.Base(p), rest)
		p = parent
	}
}

func joinRest(p, rest string) string {
	if rest == "" {
		return p
	}
	return filepath.Join(p, rest)
}

// percentDecode decodes every valid %XX escape in s and leaves anything
// else ("100%", "%zz") as it is: a path is not a URL, and a stray % is an
// ordinary character in a file name.
func percentDecode(s string) string {
	i := strings.IndexByte(s, '%')
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:i])
	for ; i < len(s); i++ {
		c := s[i]
		if c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// maxNesting bounds how deep ResolveArgs follows arrays in arrays, as
// [policy.ArgRule.Check] does.
const maxNesting = 32

// ResolveArgs resolves the path arguments of a call: the arguments that a
// rule of p matching server:tool checks with `within` ([policy.Policy.PathArgs]),
// strings in arrays included. It returns each raw string's resolved form
// ([ResolvePath]); a string that does not resolve is left out, so a within
// check on it fails. It does I/O (symlinks): call it before the decision
// and pass
//
//	func(raw string) (string, bool) { r, ok := m[raw]; return r, ok }
//
// as Fire's resolved. It is the one place Weir resolves path arguments:
// weir run, weir policy check and every later caller go through it.
func ResolveArgs(p *policy.Policy, server, tool string, args map[string]any, home, cwd string) map[string]string {
	names := p.PathArgs(server, tool)
	if len(names) == 0 {
		return nil
	}
	out := map[string]string{}
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		switch x := v.(type) {
		case string:
			if _, done := out[x]; !done {
				if r, err := ResolvePath(x, home, cwd); err == nil {
					out[x] = r
				}
			}
		case []any:
			if depth < maxNesting {
				for _, e := range x {
					walk(e, depth+1)
				}
			}
		}
	}
	for _, n := range names {
		if v, ok := args[n]; ok {
			walk(v, 0)
		}
	}
	return out
}
