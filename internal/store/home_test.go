package store

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

func TestHomeFromEnv(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "weir")
	t.Setenv("WEIR_HOME", dir)
	got, err := Home()
	if err != nil {
		t.Fatal(err)
	}
	if got != dir {
		t.Errorf("Home = %q, want %q", got, dir)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o700 {
		t.Errorf("mode %v, want 0700", fi.Mode().Perm())
	}
}

func TestHomeDefault(t *testing.T) {
	h := t.TempDir()
	t.Setenv("WEIR_HOME", "")
	t.Setenv("HOME", h)
	t.Setenv("USERPROFILE", h)
	got, err := Home()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(h, ".weir"); got != want {
		t.Errorf("Home = %q, want %q", got, want)
	}
}

func TestHomeNotADirectory(t *testing.T) {
	f := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(f, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("WEIR_HOME", f)
	if _, err := Home(); err == nil || !strings.Contains(err.Error(), f) {
		t.Errorf("Home on a file: err = %v", err)
	}
}

func TestLoadKey(t *testing.T) {
	home := t.TempDir()
	k1, err := LoadKey(home)
	if err != nil {
		t.Fatal(err)
	}
	if len(k1) != KeySize || bytes.Equal(k1, make([]byte, KeySize)) {
		t.Fatalf("key = %x", k1)
	}
	fi, err := os.Stat(filepath.Join(home, "key"))
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("key mode %v, want 0600", fi.Mode().Perm())
	}
	k2, err := LoadKey(home)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(k1, k2) {
		t.Error("second LoadKey returned a different key")
	}
	// No temp files are left behind.
	ents, _ := os.ReadDir(home)
	if len(ents) != 1 {
		t.Errorf("home holds %d entries, want just the key", len(ents))
	}
}

func TestLoadKeyRefusesReadableKey(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix modes")
	}
	home := t.TempDir()
	if _, err := LoadKey(home); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(home, "key")
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o620} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		_, err := LoadKey(home)
		if err == nil || !strings.Contains(err.Error(), "chmod 600 "+path) {
			t.Errorf("mode %04o: err = %v, want one saying chmod 600 %s", mode, err, path)
		}
	}
}

func TestLoadKeyDamaged(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, "key")
	for _, size := range []int{0, 16, 33} {
		if err := os.WriteFile(path, make([]byte, size), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadKey(home); err == nil || !strings.Contains(err.Error(), "damaged") {
			t.Errorf("%d-byte key: err = %v", size, err)
		}
	}
}

func TestLoadKeyRaceGoroutines(t *testing.T) {
	home := t.TempDir()
	var (
		wg      sync.WaitGroup
		keys    [16][]byte
		errs    [16]error
		arrived sync.WaitGroup
	)
	// Every caller writes its own key before any links one: all but one
	// lose the race and must read the winner's.
	arrived.Add(len(keys))
	linkHook = func() { arrived.Done(); arrived.Wait() }
	defer func() { linkHook = nil }()
	for i := range keys {
		wg.Go(func() { keys[i], errs[i] = LoadKey(home) })
	}
	wg.Wait()
	for i := range keys {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if !bytes.Equal(keys[i], keys[0]) {
			t.Fatalf("goroutine %d got a different key", i)
		}
	}
}

func TestLoadKeyRaceProcesses(t *testing.T) {
	home := t.TempDir()
	const n = 8
	outs := make([][]byte, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		cmd := helperCommand(t, "loadkey", "WEIR_TEST_HOME="+home)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		wg.Go(func() {
			outs[i], errs[i] = cmd.Output()
			if errs[i] != nil {
				errs[i] = &helperError{errs[i], stderr.String()}
			}
		})
	}
	wg.Wait()
	var first string
	for i := range n {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		l := outLines(outs[i])
		if len(l) != 1 {
			t.Fatalf("process %d printed %q", i, outs[i])
		}
		if i == 0 {
			first = l[0]
		} else if l[0] != first {
			t.Fatalf("process %d got key %s, process 0 got %s", i, l[0], first)
		}
	}
	key, err := LoadKey(home)
	if err != nil {
		t.Fatal(err)
	}
	if got := hexString(key); got != first {
		t.Errorf("key on disk %s, processes got %s", got, first)
	}
}
