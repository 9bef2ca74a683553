package store

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// KeySize is the length in bytes of the per-install key.
const KeySize = 32

// Home returns Weir's home directory: $WEIR_HOME if set, else ~/.weir. It is
// created with mode 0700 if absent. The path returned is absolute.
func Home() (string, error) {
	dir := os.Getenv("WEIR_HOME")
	if dir == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("weir home: no home directory to put .weir in (set WEIR_HOME): %w", err)
		}
		dir = filepath.Join(h, ".weir")
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("weir home %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("weir home %s: cannot create it: %w", dir, err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return "", fmt.Errorf("weir home %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("weir home %s is not a directory", dir)
	}
	return dir, nil
}

// LoadKey returns the per-install key kept in home/key: KeySize random bytes
// that key every fingerprint and digest Weir stores. The first call creates
// it, atomically even when several processes race: each writes its own temp
// file and hard-links it to the final name, and a process whose link fails
// because the key exists reads the winner's. On Unix a key file that group or
// others can access is refused.
func LoadKey(home string) ([]byte, error) {
	path := filepath.Join(home, "key")
	key, err := readKey(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}

	tmp, err := os.CreateTemp(home, ".key-*") // mode 0600
	if err != nil {
		return nil, fmt.Errorf("key file %s: cannot create it: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	key = make([]byte, KeySize)
	_, _ = rand.Read(key) // never fails (crypto/rand)
	if err := tmp.Chmod(0o600); err != nil && runtime.GOOS != "windows" {
		tmp.Close()
		return nil, fmt.Errorf("key file %s: %w", path, err)
	}
	if _, err := tmp.Write(key); err != nil {
		tmp.Close()
		return nil, fmt.Errorf("key file %s: cannot write it: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return nil, fmt.Errorf("key file %s: cannot write it: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return nil, fmt.Errorf("key file %s: cannot write it: %w", path, err)
	}
	if linkHook != nil {
		linkHook()
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			// Another process won the race; its key is complete, because
			// it was written and synced before it was linked.
			return readKey(path)
		}
		return nil, fmt.Errorf("key file %s: cannot create it: %w", path, err)
	}
	syncDir(home)
	return key, nil
}

// linkHook, when set by a test, runs just before the key is linked into
// place, so a test can line racing callers up at that point.
var linkHook func()

// readKey reads and checks an existing key file.
func readKey(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("key file %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("key file %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("key file %s is not a regular file", path)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("key file %s has mode %04o: other users can read it, and it keys every fingerprint Weir stores; run `chmod 600 %s`",
			path, fi.Mode().Perm(), path)
	}
	key := make([]byte, KeySize+1)
	n, err := io.ReadFull(f, key)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("key file %s: %w", path, err)
	}
	if n != KeySize {
		return nil, fmt.Errorf("key file %s is damaged: it holds %d bytes, want %d; restore it from a backup, or delete it to make a new key (fingerprints already stored will then no longer match)",
			path, n, KeySize)
	}
	return key[:KeySize], nil
}

// syncDir makes a new directory entry durable where the OS allows; failure
// only costs durability across a crash, so it is ignored.
func syncDir(dir string) {
	if runtime.GOOS == "windows" {
		return
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}
