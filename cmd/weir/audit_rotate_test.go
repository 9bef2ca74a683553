package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weir-sec/weir/internal/audit"
	"github.com/weir-sec/weir/internal/policy/policyfile"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{
		"67108864": 64 << 20, "64MiB": 64 << 20, "64M": 64 << 20, "64 mib": 64 << 20, "64MB": 64e6,
		"512KiB": 512 << 10, "512k": 512 << 10, "1GiB": 1 << 30, "1.5G": 3 << 29, "2gb": 2e9, "100B": 100,
		"0": 0, "off": 0, "None": 0,
	} {
		if got, err := policyfile.ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "big", "-1M", "64 XB", "NaN", "Inf", "1e30G", "MiB"} {
		if _, err := policyfile.ParseSize(in); err == nil || !strings.Contains(err.Error(), "want a size such as 64MiB") {
			t.Errorf("ParseSize(%q) = %v, want an error", in, err)
		}
	}
}

// TestOpenAuditLogRotates: the log every command opens rotates at
// WEIR_AUDIT_MAX_SIZE, 64 MiB when it is not set, and a bad value is a
// clear error.
func TestOpenAuditLogRotates(t *testing.T) {
	home := t.TempDir()
	t.Setenv(auditMaxSizeEnv, "1KiB")
	l, err := openAuditLog(home, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if err := l.AppendAll([]*audit.Record{{Session: "s", Server: "notes", Event: "call", Tool: fmt.Sprintf("tool_%d", i), Verdict: "allow", Enforced: true, Reason: strings.Repeat("x", 100)}}); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	files, err := audit.Files(filepath.Join(home, "audit.log"))
	if err != nil || len(files) < 3 || files[0] != filepath.Join(home, "audit.log.1") {
		t.Fatalf("Files = %v, %v", files, err)
	}
	if _, err := audit.VerifyFiles(files, audit.FromGenesis); err != nil {
		t.Fatal(err)
	}

	t.Setenv(auditMaxSizeEnv, "")
	if n, err := auditMaxSize(nil); err != nil || n != 64<<20 {
		t.Errorf("default: %d, %v", n, err)
	}
	pol, err := policyfile.Parse("p.yaml", []byte("version: 1\naudit: {max_size: 2MiB}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := auditMaxSize(pol); err != nil || n != 2<<20 {
		t.Errorf("the policy's audit.max_size: %d, %v", n, err)
	}
	t.Setenv(auditMaxSizeEnv, "off")
	if n, err := auditMaxSize(pol); err != nil || n != 0 {
		t.Errorf("WEIR_AUDIT_MAX_SIZE over the policy: %d, %v", n, err)
	}
	t.Setenv(auditMaxSizeEnv, "lots")
	if _, err := openAuditLog(t.TempDir(), nil, nil); err == nil || !strings.Contains(err.Error(), `WEIR_AUDIT_MAX_SIZE="lots": want a size such as 64MiB`) {
		t.Errorf("a bad size: %v", err)
	}
}
