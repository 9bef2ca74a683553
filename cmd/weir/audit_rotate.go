package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/weir-sec/weir/internal/audit"
	"github.com/weir-sec/weir/internal/policy"
	"github.com/weir-sec/weir/internal/policy/policyfile"
	"github.com/weir-sec/weir/internal/store"
)

// auditMaxSizeEnv overrides the policy's audit.max_size; 0 or "off" turns
// rotation off.
const auditMaxSizeEnv = "WEIR_AUDIT_MAX_SIZE"

// auditSink is where a command's audit records go: the file log of its
// home, or the chains a PostgreSQL state store keeps.
type auditSink interface {
	AppendAll(rs []*audit.Record) error
	Close() error
}

var (
	_ auditSink = (*audit.Log)(nil)
	_ auditSink = (*store.AuditLog)(nil)
)

// openAuditLog opens where the audit records of a command go. With a
// PostgreSQL state store they go to the store, one chain per tenant, so
// that replicas on several machines keep one chain each tenant can verify;
// otherwise to $WEIR_HOME/audit.log, rotated by size as
// WEIR_AUDIT_MAX_SIZE, else the policy's audit.max_size (64 MiB in every
// preset), says. Every command that writes the log opens it here, so that
// they all write alike.
func openAuditLog(home string, pol *policy.Policy, st store.State) (auditSink, error) {
	if storeKeepsAudit(st) {
		return store.NewAuditLog(st), nil
	}
	n, err := auditMaxSize(pol)
	if err != nil {
		return nil, err
	}
	return audit.Open(filepath.Join(home, "audit.log"), audit.MaxSize(n))
}

// storeKeepsAudit reports whether the audit chains live in st rather than
// in files: they do in PostgreSQL, the store replicas share.
func storeKeepsAudit(st store.State) bool {
	_, ok := st.(*store.Postgres)
	return ok
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
