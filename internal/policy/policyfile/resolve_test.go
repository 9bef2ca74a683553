package policyfile

import (
	"os"
	"path/filepath"
	"testing"
)

// TestResolveAsk: only the no-policy default has an ask policy; a policy
// file, named or in WEIR_HOME, decides every call itself.
func TestResolveAsk(t *testing.T) {
	home := t.TempDir()
	pol, ask, err := ResolveAsk("", home)
	if err != nil || pol.Source != "preset:default" || ask == nil || ask.Source != "preset:"+AskPreset {
		t.Fatalf("no file: %v, %v, %v", pol, ask, err)
	}
	file := filepath.Join(home, FileName)
	if err := os.WriteFile(file, []byte("version: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, flag := range []string{"", file} {
		pol, ask, err := ResolveAsk(flag, home)
		if err != nil || pol.Source != file || ask != nil {
			t.Errorf("flag %q: %v, %v, %v", flag, pol.Source, ask, err)
		}
	}
	if _, _, err := ResolveAsk(filepath.Join(home, "missing.yaml"), home); err == nil {
		t.Error("a missing file is not an error")
	}
}
