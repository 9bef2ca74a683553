package clients

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"time"
)

// BackupSuffix starts the name of every backup WrapFile and UnwrapFile
// write: PATH.weir-backup-20261129T154500Z (UTC). A second backup in the
// same second gets "-1", "-2"... appended.
const BackupSuffix = ".weir-backup-"

const backupTimeFormat = "20060102T150405Z"

var backupNameRE = regexp.MustCompile(`^\.weir-backup-(\d{8}T\d{6}Z)(?:-(\d+))?$`)

// Result is what WrapFile or UnwrapFile did to a file.
type Result struct {
	// Path is the file that was read (and written): the path given, with
	// symbolic links resolved, so that a link into a dotfiles repository
	// stays a link.
	Path     string
	Location Location
	// Backup is the copy of the file's previous content that was written
	// (and verified) before the file was changed, or for UnwrapFile, the
	// backup the file was restored from. "" when neither happened.
	Backup string
	// Changed is set when the new content differs from the old. Written is
	// set when the new content was written to Path.
	Changed, Written bool
	// Restored is set by UnwrapFile when the file is now byte for byte the
	// Backup it was wrapped from.
	Restored bool
	// Out is the new content (the old content when nothing changed).
	Out []byte
	// Changes lists what happened to each server.
	Changes []Change
	// Note says, for people, how UnwrapFile went about it when it could
	// not simply restore a backup.
	Note string
}

// WrapFile wraps the configuration file at path (see Wrap). The client and
// format come from Identify. With inPlace false it only computes the result
// (Out and Changes) and writes nothing. With inPlace true, when something
// changes, it first writes a backup PATH.weir-backup-TIMESTAMP (now, in UTC)
// with the file's permissions, reads it back and compares it with the
// original, and only then replaces the file atomically (a temporary file in
// the same directory, synced, renamed over it, keeping the file's mode). A
// file that changed on disk while WrapFile worked is left alone and an
// error returned. Nothing is written when nothing changes.
func WrapFile(path string, opts WrapOptions, inPlace bool, now time.Time) (Result, error) {
	res, data, mode, err := load(path)
	if err != nil {
		return res, err
	}
	c, err := Parse(res.Location, data)
	if err != nil {
		return res, err
	}
	out, changes, err := Wrap(c, opts)
	if err != nil {
		return res, err
	}
	res.Out, res.Changes = out, changes
	res.Changed = !bytes.Equal(out, data)
	if !res.Changed || !inPlace {
		return res, nil
	}
	if res.Backup, err = writeBackup(res.Path, data, mode, now); err != nil {
		return res, err
	}
	if err := replaceFile(res.Path, data, out, mode); err != nil {
		return res, err
	}
	res.Written = true
	return res, nil
}

// UnwrapFile undoes WrapFile on the file at path. When the file is byte for
// byte what WrapFile made of one of its backups — checked by wrapping each
// backup again, newest first, with the weir path and policy the wrapped
// entries use — the file is restored from that backup, byte for byte
// (Restored). Otherwise (the file was edited since, or the backup is gone)
// each wrapped entry is unwrapped in place with Unwrap, after a backup of
// the current content, and Note says so. Entries that were already wrapped
// in the restored backup stay wrapped and are reported as unchanged; a
// second UnwrapFile unwraps them in place.
func UnwrapFile(path string) (Result, error) {
	return unwrapFile(path, time.Now())
}

func unwrapFile(path string, now time.Time) (Result, error) {
	res, data, mode, err := load(path)
	if err != nil {
		return res, err
	}
	c, err := Parse(res.Location, data)
	if err != nil {
		return res, err
	}
	res.Out = data
	var opts []WrapOptions
	seen := map[WrapOptions]bool{}
	for _, s := range c.Servers {
		if !s.Wrapped {
			continue
		}
		_, policy := s.RunFlags()
		o := WrapOptions{WeirPath: s.Command, Policy: policy}
		if !seen[o] {
			seen[o] = true
			opts = append(opts, o)
		}
	}
	if len(opts) == 0 {
		res.Note = "no entry runs behind weir run; nothing to unwrap"
		for _, s := range c.Servers {
			res.Changes = append(res.Changes, Change{Server: s.Name, Path: s.Path, Action: ActionUnchanged, Detail: "does not run behind weir run"})
		}
		return res, nil
	}

	backups, err := listBackups(res.Path)
	if err != nil {
		return res, err
	}
	for _, b := range backups {
		old, err := os.ReadFile(b)
		if err != nil || bytes.Equal(old, data) {
			continue // unreadable, or the current content itself: restoring it would unwrap nothing
		}
		bc, err := Parse(res.Location, old)
		if err != nil {
			continue
		}
		for _, o := range opts {
			w, _, err := Wrap(bc, o)
			if err != nil || !bytes.Equal(w, data) {
				continue
			}
			if err := replaceFile(res.Path, data, old, mode); err != nil {
				return res, err
			}
			res.Backup, res.Restored, res.Written, res.Changed, res.Out = b, true, true, true, old
			res.Changes = restoredChanges(c, bc)
			res.Note = "restored byte for byte from " + filepath.Base(b)
			if n := countWrapped(bc); n > 0 {
				res.Note += fmt.Sprintf("; %d %s already wrapped in that backup and stay so (run weir unwrap again to unwrap them in place)", n, plural(n, "entry was", "entries were"))
			}
			return res, nil
		}
	}

	out, changes, err := Unwrap(c)
	if err != nil {
		return res, err
	}
	res.Out, res.Changes = out, changes
	res.Changed = !bytes.Equal(out, data)
	if len(backups) == 0 {
		res.Note = "no backup of this file was found; unwrapped the entries in place"
	} else {
		res.Note = "the file changed since weir wrap wrote it, so no backup matches it; unwrapped the entries in place and kept your other edits"
	}
	if !res.Changed {
		return res, nil
	}
	if res.Backup, err = writeBackup(res.Path, data, mode, now); err != nil {
		return res, err
	}
	if err := replaceFile(res.Path, data, out, mode); err != nil {
		return res, err
	}
	res.Written = true
	return res, nil
}

func countWrapped(c *Config) int {
	n := 0
	for _, s := range c.Servers {
		if s.Wrapped {
			n++
		}
	}
	return n
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// restoredChanges reports a restore from a backup, entry by entry.
func restoredChanges(wrapped, restored *Config) []Change {
	before := map[string]Server{}
	for _, s := range restored.Servers {
		before[s.Path] = s
	}
	var out []Change
	for _, s := range wrapped.Servers {
		ch := Change{Server: s.Name, Path: s.Path, Action: ActionUnchanged}
		b, ok := before[s.Path]
		switch {
		case !s.Wrapped:
			ch.Detail = "does not run behind weir run"
		case ok && b.Wrapped:
			ch.Detail = "was already wrapped before weir wrap ran, and is left so; run weir unwrap again to unwrap it"
		case ok && b.Transport == TransportHTTP:
			ch.Action, ch.Detail = ActionUnwrapped, remoteDetail(b)
		case ok:
			ch.Action, ch.Detail = ActionUnwrapped, shellJoin(append([]string{b.Command}, b.Args...))
		}
		out = append(out, ch)
	}
	return out
}

// load resolves path, identifies it and reads it.
func load(path string) (Result, []byte, fs.FileMode, error) {
	var res Result
	abs, err := filepath.Abs(path)
	if err != nil {
		return res, nil, 0, &Error{File: path, Msg: err.Error(), err: err}
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return res, nil, 0, &Error{File: path, Msg: "cannot read the file: " + errText(err), err: err}
	}
	res.Path = real
	fi, err := os.Stat(real)
	if err != nil {
		return res, nil, 0, &Error{File: path, Msg: "cannot read the file: " + errText(err), err: err}
	}
	if !fi.Mode().IsRegular() {
		return res, nil, 0, &Error{File: path, Msg: "not a regular file"}
	}
	data, err := os.ReadFile(real)
	if err != nil {
		return res, nil, 0, &Error{File: path, Msg: "cannot read the file: " + errText(err), err: err}
	}
	env := FromOS()
	loc, err := Identify(env, abs, data)
	if err != nil {
		return res, nil, 0, err
	}
	loc.Path = real
	res.Location = loc
	return res, data, fi.Mode().Perm(), nil
}

// writeBackup writes data to a new backup file next to path, with path's
// permissions, and verifies it by reading it back.
func writeBackup(path string, data []byte, mode fs.FileMode, now time.Time) (string, error) {
	base := path + BackupSuffix + now.UTC().Format(backupTimeFormat)
	for i := 0; i < 1000; i++ {
		name := base
		if i > 0 {
			name += "-" + strconv.Itoa(i)
		}
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("%s: cannot write the backup: %w; the file was not changed", path, err)
		}
		_, werr := f.Write(data)
		serr := f.Sync()
		cerr := f.Close()
		if err := errors.Join(werr, serr, cerr); err != nil {
			os.Remove(name)
			return "", fmt.Errorf("%s: cannot write the backup %s: %w; the file was not changed", path, name, err)
		}
		back, err := os.ReadFile(name)
		if err != nil || !bytes.Equal(back, data) {
			os.Remove(name)
			return "", fmt.Errorf("%s: the backup %s does not read back as written; the file was not changed", path, name)
		}
		return name, nil
	}
	return "", fmt.Errorf("%s: too many backups named %s*; the file was not changed", path, base)
}

// replaceFile atomically replaces path, which must still hold old, with
// data, keeping mode.
func replaceFile(path string, old, data []byte, mode fs.FileMode) error {
	dir, base := filepath.Split(path)
	tmp, err := os.CreateTemp(dir, "."+base+".weir-tmp-*")
	if err != nil {
		return fmt.Errorf("%s: cannot write: %w; the file was not changed", path, err)
	}
	name := tmp.Name()
	_, werr := tmp.Write(data)
	serr := tmp.Sync()
	cerr := tmp.Close()
	merr := os.Chmod(name, mode)
	if err := errors.Join(werr, serr, cerr, merr); err != nil {
		os.Remove(name)
		return fmt.Errorf("%s: cannot write: %w; the file was not changed", path, err)
	}
	if cur, err := os.ReadFile(path); err != nil || !bytes.Equal(cur, old) {
		os.Remove(name)
		return fmt.Errorf("%s: the file changed while Weir was rewriting it (another program saved it?); it was not changed, run the command again", path)
	}
	if err := os.Rename(name, path); err != nil {
		os.Remove(name)
		return fmt.Errorf("%s: cannot replace the file: %w; it was not changed", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync() // make the rename durable where the OS allows it
		d.Close()
	}
	return nil
}

// listBackups returns the backups of path, newest first.
func listBackups(path string) ([]string, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot list the backups: %w", path, err)
	}
	type backup struct {
		name  string
		stamp string
		n     int
	}
	var bs []backup
	for _, e := range ents {
		name := e.Name()
		if len(name) <= len(base) || name[:len(base)] != base || !e.Type().IsRegular() {
			continue
		}
		m := backupNameRE.FindStringSubmatch(name[len(base):])
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[2])
		bs = append(bs, backup{filepath.Join(dir, name), m[1], n})
	}
	sort.Slice(bs, func(i, j int) bool {
		if bs[i].stamp != bs[j].stamp {
			return bs[i].stamp > bs[j].stamp
		}
		return bs[i].n > bs[j].n
	})
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = b.name
	}
	return out, nil
}
