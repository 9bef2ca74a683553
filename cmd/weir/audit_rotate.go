package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/weir-sec/weir/internal/audit"
	"github.com/weir-sec/weir/internal/policy"
	"github.com/weir-sec/weir/internal/policy/policyfile"
)

// auditMaxSizeEnv overrides the policy's audit.max_size; 0 or "off" turns
// rotation off.
const auditMaxSizeEnv = "WEIR_AUDIT_MAX_SIZE"

// openAuditLog opens $WEIR_HOME/audit.log for appending, rotating by size
// as WEIR_AUDIT_MAX_SIZE, else the policy's audit.max_size (64 MiB in every
// preset), says. Every command that writes the log opens it here, so that
// they all rotate alike.
func openAuditLog(home string, pol *policy.Policy) (*audit.Log, error) {
	n, err := auditMaxSize(pol)
	if err != nil {
		return nil, err
	}
	return audit.Open(filepath.Join(home, "audit.log"), audit.MaxSize(n))
}

// auditMaxSize reads WEIR_AUDIT_MAX_SIZE, else the policy's audit.max_size.
func auditMaxSize(pol *policy.Policy) (int64, error) {
	v := strings.TrimSpace(os.Getenv(auditMaxSizeEnv))
	if v == "" {
		if pol == nil {
			return 64 << 20, nil
		}
		return pol.AuditMaxSize, nil
	}
	n, err := policyfile.ParseSize(v)
	if err != nil {
		return 0, fmt.Errorf("%s=%q: %w", auditMaxSizeEnv, v, err)
	}
	return n, nil
}
