package jsonl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.jsonl")
	os.WriteFile(good, []byte("{\"a\":1}\n\n  {\"a\":2}  \n"), 0o644)
	got, err := Read[struct{ A int }](good)
	if err != nil || len(got) != 2 || got[0].A != 1 || got[1].A != 2 {
		t.Fatalf("got %v, %v", got, err)
	}
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte("{\"a\":1}\n{\"a\":\n"), 0o644)
	if _, err := Read[struct{ A int }](bad); err == nil || !strings.Contains(err.Error(), "bad.jsonl:2") {
		t.Fatalf("error %v, want one naming bad.jsonl:2", err)
	}
}
