package clients

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

var wrapTime = time.Date(2026, 11, 29, 15, 45, 0, 0, time.UTC)

const desktopConfig = `{
  "mcpServers": {
    "notes": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/ada/notes"]
    },
    "web": {"command": "uvx", "args": ["mcp-server-fetch"]}
  },
  "globalShortcut": ""
}
`

// writeConfig writes a config file named like Claude Desktop's into a new
// directory.
func writeConfig(t *testing.T, name, data string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func backupsOf(t *testing.T, p string) []string {
	t.Helper()
	bs, err := listBackups(p)
	if err != nil {
		t.Fatal(err)
	}
	return bs
}

func TestWrapFileDryRun(t *testing.T) {
	p := writeConfig(t, "claude_desktop_config.json", desktopConfig, 0o600)
	res, err := WrapFile(p, WrapOptions{}, false, wrapTime)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Changed || res.Written || res.Backup != "" {
		t.Errorf("dry run: %+v", res)
	}
	if got := readFile(t, p); got != desktopConfig {
		t.Error("dry run changed the file")
	}
	if !strings.Contains(string(res.Out), `"args": ["run", "--name", "notes", "--", "npx", "-y"`) {
		t.Errorf("Out:\n%s", res.Out)
	}
	if len(backupsOf(t, p)) != 0 {
		t.Error("dry run wrote a backup")
	}
	if res.Location.Client != ClaudeDesktop {
		t.Errorf("Location = %+v", res.Location)
	}
}

func TestWrapFileInPlaceAndRestore(t *testing.T) {
	p := writeConfig(t, "claude_desktop_config.json", desktopConfig, 0o600)
	res, err := WrapFile(p, WrapOptions{WeirPath: "/opt/weir/bin/weir", Policy: "/home/ada/policy.yaml"}, true, wrapTime)
	if err != nil {
		t.Fatal(err)
	}
	wantBackup := p + ".weir-backup-20261129T154500Z"
	if res.Backup != wantBackup || !res.Written || !res.Changed {
		t.Fatalf("WrapFile = %+v", res)
	}
	if got := readFile(t, wantBackup); got != desktopConfig {
		t.Error("backup differs from the original")
	}
	if got := readFile(t, p); got != string(res.Out) {
		t.Error("file differs from Out")
	}
	if runtime.GOOS != "windows" {
		for _, f := range []string{p, wantBackup} {
			if fi, err := os.Stat(f); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("%s: mode %v, %v; want 0600", f, fi.Mode().Perm(), err)
			}
		}
	}
	// No temporary files are left behind.
	ents, _ := os.ReadDir(filepath.Dir(p))
	if len(ents) != 2 {
		t.Errorf("directory holds %d files, want the file and its backup", len(ents))
	}

	// Wrapping again changes nothing and writes no backup.
	res2, err := WrapFile(p, WrapOptions{WeirPath: "/opt/weir/bin/weir"}, true, wrapTime.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if res2.Changed || res2.Written || res2.Backup != "" {
		t.Errorf("second WrapFile = %+v", res2)
	}
	for _, ch := range res2.Changes {
		if ch.Action != ActionUnchanged {
			t.Errorf("second WrapFile: %+v", ch)
		}
	}
	if n := len(backupsOf(t, p)); n != 1 {
		t.Errorf("%d backups, want 1", n)
	}

	// Unwrapping restores the original byte for byte.
	res3, err := UnwrapFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !res3.Restored || res3.Backup != wantBackup || res3.Note != "restored byte for byte from claude_desktop_config.json.weir-backup-20261129T154500Z" {
		t.Errorf("UnwrapFile = %+v", res3)
	}
	if got := readFile(t, p); got != desktopConfig {
		t.Errorf("restored file:\n%s", got)
	}
	for _, ch := range res3.Changes {
		if ch.Action != ActionUnwrapped {
			t.Errorf("UnwrapFile: %+v", ch)
		}
	}
}

func TestWrapFileBackupNamesDoNotCollide(t *testing.T) {
	p := writeConfig(t, "claude_desktop_config.json", desktopConfig, 0o644)
	if _, err := WrapFile(p, WrapOptions{}, true, wrapTime); err != nil {
		t.Fatal(err)
	}
	// A new server, wrapped in the same second.
	edited := strings.Replace(readFile(t, p), `"mcpServers": {`, `"mcpServers": {"mem": {"command": "mcp-memory"},`, 1)
	if err := os.WriteFile(p, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := WrapFile(p, WrapOptions{}, true, wrapTime)
	if err != nil {
		t.Fatal(err)
	}
	if res.Backup != p+".weir-backup-20261129T154500Z-1" {
		t.Errorf("second backup = %s", res.Backup)
	}
	if got := backupsOf(t, p); len(got) != 2 || got[0] != res.Backup {
		t.Errorf("backups, newest first = %v", got)
	}
	// Unwrap restores the newest backup, which still holds the entries
	// the first wrap made, and says so.
	un, err := UnwrapFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !un.Restored || un.Backup != res.Backup || readFile(t, p) != edited || !strings.Contains(un.Note, "2 entries were already wrapped in that backup") {
		t.Fatalf("UnwrapFile = %+v", un)
	}
	var left int
	for _, ch := range un.Changes {
		if ch.Action == ActionUnchanged && strings.Contains(ch.Detail, "already wrapped before") {
			left++
		}
	}
	if left != 2 {
		t.Errorf("changes = %+v", un.Changes)
	}
	// A second unwrap finds no matching backup and unwraps in place.
	un2, err := unwrapFile(p, wrapTime.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if un2.Restored || !un2.Written || !strings.Contains(un2.Note, "in place") {
		t.Errorf("second UnwrapFile = %+v", un2)
	}
	want := strings.Replace(desktopConfig, `"mcpServers": {`, `"mcpServers": {"mem": {"command": "mcp-memory"},`, 1)
	if got := readFile(t, p); got != want {
		t.Errorf("after the second unwrap:\n%s\nwant\n%s", got, want)
	}
}

func TestUnwrapFileAfterEdit(t *testing.T) {
	p := writeConfig(t, "claude_desktop_config.json", desktopConfig, 0o600)
	if _, err := WrapFile(p, WrapOptions{}, true, wrapTime); err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(readFile(t, p), `"globalShortcut": ""`, `"globalShortcut": "Alt+Space"`, 1)
	if err := os.WriteFile(p, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := unwrapFile(p, wrapTime.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if res.Restored || !res.Written || !strings.Contains(res.Note, "changed since weir wrap") {
		t.Errorf("UnwrapFile = %+v", res)
	}
	if res.Backup != p+".weir-backup-20261129T164500Z" || readFile(t, res.Backup) != edited {
		t.Errorf("backup before unwrapping in place: %q", res.Backup)
	}
	want := strings.Replace(desktopConfig, `"globalShortcut": ""`, `"globalShortcut": "Alt+Space"`, 1)
	if got := readFile(t, p); got != want {
		t.Errorf("unwrapped in place:\n%s\nwant\n%s", got, want)
	}
}

func TestUnwrapFileNothingWrapped(t *testing.T) {
	p := writeConfig(t, "claude_desktop_config.json", desktopConfig, 0o600)
	res, err := UnwrapFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if res.Written || res.Changed || !strings.Contains(res.Note, "nothing to unwrap") {
		t.Errorf("UnwrapFile = %+v", res)
	}
	if len(backupsOf(t, p)) != 0 {
		t.Error("backup written")
	}
}

func TestWrapFileFollowsSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "dotfiles", "claude.json")
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(target, []byte(desktopConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "Claude", "claude_desktop_config.json")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	res, err := WrapFile(link, WrapOptions{}, true, wrapTime)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the link was replaced by a file")
	}
	if readFile(t, target) != string(res.Out) || res.Backup != target+".weir-backup-20261129T154500Z" {
		t.Errorf("WrapFile through a link = %+v", res)
	}
	if _, err := UnwrapFile(link); err != nil || readFile(t, target) != desktopConfig {
		t.Errorf("UnwrapFile through a link: %v", err)
	}
}

func TestReplaceFileRefusesConcurrentChange(t *testing.T) {
	p := writeConfig(t, "claude_desktop_config.json", "new by someone else", 0o600)
	err := replaceFile(p, []byte("what we read"), []byte("ours"), 0o600)
	if err == nil || !strings.Contains(err.Error(), "changed while Weir was rewriting it") {
		t.Errorf("replaceFile = %v", err)
	}
	if readFile(t, p) != "new by someone else" {
		t.Error("file overwritten")
	}
	ents, _ := os.ReadDir(filepath.Dir(p))
	if len(ents) != 1 {
		t.Error("temporary file left behind")
	}
}

func TestWrapFileErrors(t *testing.T) {
	p := writeConfig(t, "claude_desktop_config.json", "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"C:\\Tools\\x.exe\"}\n  }\n}\n", 0o600)
	_, err := WrapFile(p, WrapOptions{}, true, wrapTime)
	if err == nil || !strings.Contains(err.Error(), p+":3:25: invalid escape") {
		t.Errorf("WrapFile of bad JSON = %v", err)
	}
	if len(backupsOf(t, p)) != 0 {
		t.Error("backup written for a file that was not changed")
	}
	_, err = WrapFile(filepath.Join(t.TempDir(), "missing.json"), WrapOptions{}, true, wrapTime)
	if err == nil || !strings.Contains(err.Error(), "cannot read the file") {
		t.Errorf("WrapFile of a missing file = %v", err)
	}
}

func TestWrapFileYAML(t *testing.T) {
	orig := readFile(t, filepath.Join("testdata", "golden", "goose", "original.yaml"))
	dir := filepath.Join(t.TempDir(), "goose")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(p, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := WrapFile(p, WrapOptions{}, true, wrapTime)
	if err != nil {
		t.Fatal(err)
	}
	if res.Location.Format != FormatGoose || !res.Written {
		t.Fatalf("WrapFile = %+v", res)
	}
	un, err := UnwrapFile(p)
	if err != nil || !un.Restored || !bytes.Equal([]byte(readFile(t, p)), []byte(orig)) {
		t.Errorf("UnwrapFile = %+v, %v", un, err)
	}
}

// TestUnwrapFileSkipsBackupOfItself: a newer backup holding the current
// (wrapped) content, as an earlier in-place unwrap leaves behind, must not
// be "restored": that would unwrap nothing.
func TestUnwrapFileSkipsBackupOfItself(t *testing.T) {
	p := writeConfig(t, "claude_desktop_config.json", desktopConfig, 0o600)
	res, err := WrapFile(p, WrapOptions{}, true, wrapTime)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p+".weir-backup-20261130T000000Z", res.Out, 0o600); err != nil {
		t.Fatal(err)
	}
	un, err := UnwrapFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !un.Restored || un.Backup != res.Backup || readFile(t, p) != desktopConfig {
		t.Errorf("UnwrapFile = %+v", un)
	}
}
