package store

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenReadOnlyMount opens a store in a directory mounted read-only, in a
// private mount namespace (root only; as root, directory modes do not stop
// writes). Both a new store and an existing one are refused with a clear
// error.
func TestOpenReadOnlyMount(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for a mount namespace; TestOpenReadOnlyDir covers other users")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("unshare not installed")
	}
	dir := t.TempDir()
	existing := filepath.Join(dir, "existing.db")
	s, err := OpenSQLite(context.Background(), existing)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	for _, path := range []string{filepath.Join(dir, "new.db"), existing} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			_, argv := helperArgs("open")
			script := `mount --bind -o ro "$0" "$0" && exec "$@"`
			cmd := exec.Command("unshare", append([]string{"-m", "sh", "-c", script, dir}, argv...)...)
			env, _ := helperArgs("open")
			cmd.Env = append(append(os.Environ(), env...), "WEIR_TEST_DB="+path)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			msg := strings.TrimSpace(stderr.String())
			if strings.Contains(msg, "mount") && !strings.Contains(msg, "state store") {
				t.Skipf("cannot make a read-only mount here: %s", msg)
			}
			if err == nil {
				t.Fatal("opened a store in a read-only directory")
			}
			t.Log(msg)
			if !strings.Contains(msg, path) || !strings.Contains(msg, "writable") {
				t.Errorf("error %q should name the path and say it must be writable", msg)
			}
		})
	}
}
