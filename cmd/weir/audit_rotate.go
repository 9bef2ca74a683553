package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/weir-sec/weir/internal/audit"
)

// defaultAuditMaxSize is the size at which the audit log rotates when
// WEIR_AUDIT_MAX_SIZE is not set: large enough that a desktop client's log
// takes months to get there, small enough to open in an editor.
const defaultAuditMaxSize = 64 << 20

// auditMaxSizeEnv sets the audit log's rotation size; 0 or "off" turns
// rotation off.
const auditMaxSizeEnv = "WEIR_AUDIT_MAX_SIZE"

// openAuditLog opens $WEIR_HOME/audit.log for appending, rotating by size
// as WEIR_AUDIT_MAX_SIZE says (64 MiB by default). Every command that
// writes the log opens it here, so that they all rotate alike.
func openAuditLog(home string) (*audit.Log, error) {
	n, err := auditMaxSize()
	if err != nil {
		return nil, err
	}
	return audit.Open(filepath.Join(home, "audit.log"), audit.MaxSize(n))
}

// auditMaxSize reads WEIR_AUDIT_MAX_SIZE.
func auditMaxSize() (int64, error) {
	v := strings.TrimSpace(os.Getenv(auditMaxSizeEnv))
	if v == "" {
		return defaultAuditMaxSize, nil
	}
	n, err := parseSize(v)
	if err != nil {
		return 0, fmt.Errorf("%s=%q: %w", auditMaxSizeEnv, v, err)
	}
	return n, nil
}

var sizeUnits = []struct {
	suffix string
	n      int64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30},
	{"kb", 1000}, {"mb", 1000 * 1000}, {"gb", 1000 * 1000 * 1000},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30},
	{"b", 1},
}

// parseSize reads a size in bytes: "67108864", "64MiB", "64M" (binary),
// "64MB" (decimal), "512KiB", "1GiB"; "0", "off" or "none" for none.
func parseSize(s string) (int64, error) {
	l := strings.ToLower(strings.TrimSpace(s))
	if l == "off" || l == "none" {
		return 0, nil
	}
	mult := int64(1)
	for _, u := range sizeUnits {
		if num, ok := strings.CutSuffix(l, u.suffix); ok {
			l, mult = strings.TrimSpace(num), u.n
			break
		}
	}
	n, err := strconv.ParseFloat(l, 64)
	if err != nil || !(n >= 0) || n*float64(mult) > 1<<62 {
		return 0, fmt.Errorf("want a size such as 64MiB, 512KiB or 1GB, or 0 (or off) for no rotation")
	}
	return int64(n * float64(mult)), nil
}
