package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/weir-sec/weir/internal/audit"
)

// chainOf writes tenant's chain out and verifies it as audit verify does.
func chainOf(t *testing.T, s State, tenant string) (audit.Summary, []byte, error) {
	t.Helper()
	var buf bytes.Buffer
	n, err := s.WriteAudit(context.Background(), tenant, &buf)
	if err != nil {
		t.Fatal(err)
	}
	sum, verr := audit.Verify(bytes.NewReader(buf.Bytes()))
	if verr == nil && int64(sum.Records) != n {
		t.Errorf("tenant %q: WriteAudit wrote %d records, Verify counted %d", tenant, n, sum.Records)
	}
	return sum, buf.Bytes(), verr
}

// TestAuditChainPerTenant: records of sessions of several tenants, in one
// batch and in several, make one chain per tenant, each from Genesis, each
// verifying as a log file would; what a chain holds is its tenant's only.
func TestAuditChainPerTenant(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open opener) {
		b := open(t)
		log := NewAuditLog(b.State)
		sessions := []string{"env:local", "acme/env:build", "beta/http:x1", "acme/http:y2", "pid:12:34"}
		for round := range 3 {
			var batch []*audit.Record
			for _, s := range sessions {
				batch = append(batch, &audit.Record{Session: s, Server: "notes", Event: "call", Tool: "read", Verdict: "allow", Reason: fmt.Sprint("round ", round)})
			}
			if err := log.AppendAll(batch); err != nil {
				t.Fatal(err)
			}
			for _, r := range batch {
				if r.Hash == "" || r.Seq == 0 {
					t.Fatalf("record of %s not chained: %+v", r.Session, r)
				}
			}
		}
		tenants, err := b.AuditTenants(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"", "acme", "beta"}; !slices.Equal(tenants, want) {
			t.Fatalf("tenants %q, want %q", tenants, want)
		}
		for tenant, want := range map[string]int{"": 6, "acme": 6, "beta": 3} {
			sum, lines, err := chainOf(t, b.State, tenant)
			if err != nil {
				t.Fatalf("tenant %q: %v", tenant, err)
			}
			if sum.Records != want {
				t.Errorf("tenant %q: %d records, want %d", tenant, sum.Records, want)
			}
			for _, l := range bytes.Split(bytes.TrimSuffix(lines, []byte("\n")), []byte("\n")) {
				var got string
				if i := bytes.Index(l, []byte(`"session":"`)); i >= 0 {
					got, _, _ = strings.Cut(string(l[i+11:]), `"`)
				}
				if audit.Tenant(got) != tenant {
					t.Errorf("tenant %q's chain holds a record of session %q", tenant, got)
				}
			}
		}
		if sum, _, err := chainOf(t, b.State, "nobody"); err != nil || sum.Records != 0 {
			t.Errorf("a tenant without records: %+v, %v", sum, err)
		}
	})
}

// TestAuditChainConcurrent: several handles (replicas), and several
// writers on each log, appending to one tenant's chain at once make one
// chain with every record, no fork and no gap, each batch whole and in its
// writer's order.
func TestAuditChainConcurrent(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open opener) {
		b := open(t)
		// Two handles (replicas), two writers' logs on each: appends
		// group-commit within a log and serialise across them.
		handles := []State{b.State, b.reopen(t).State}
		logs := []*AuditLog{NewAuditLog(handles[0]), NewAuditLog(handles[1]), NewAuditLog(handles[0]), NewAuditLog(handles[1])}
		const writers, batches, per = 8, 15, 3
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				log := logs[w%len(logs)]
				for i := range batches {
					var batch []*audit.Record
					for j := range per {
						batch = append(batch, &audit.Record{Session: "acme/env:s", Server: "s", Event: "call", Verdict: "allow", Reason: fmt.Sprint(w, "/", i, "/", j)})
					}
					if err := log.AppendAll(batch); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		sum, lines, err := chainOf(t, b.State, "acme")
		if err != nil {
			t.Fatal(err)
		}
		if sum.Records != writers*batches*per {
			t.Errorf("%d records, want %d", sum.Records, writers*batches*per)
		}
		// Each writer's batches are whole and in its order in the chain.
		last := map[string]int{}
		prev := ""
		for _, l := range bytes.Split(bytes.TrimSuffix(lines, []byte("\n")), []byte("\n")) {
			i := bytes.Index(l, []byte(`"reason":"`))
			reason, _, _ := strings.Cut(string(l[i+10:]), `"`)
			var w, n, j int
			fmt.Sscanf(reason, "%d/%d/%d", &w, &n, &j)
			k := fmt.Sprint(w)
			if pos := n*per + j; pos != last[k] {
				t.Fatalf("writer %d's record %d/%d came at its position %d", w, n, j, last[k])
			}
			if j > 0 && prev != fmt.Sprint(w, "/", n, "/", j-1) {
				t.Fatalf("batch %d/%d is split: its record %d follows %s", w, n, j, prev)
			}
			prev = reason
			last[k]++
		}
	})
}

// TestAuditChainTampered: an edited, deleted or reordered row is found by
// Verify at its line, as in a file.
func TestAuditChainTampered(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open opener) {
		for _, tc := range []struct {
			name, q string
			args    []any
			want    string
		}{
			{"edited", `UPDATE audit SET line = replace(line, CAST('"allow"' AS BLOB), CAST('"block"' AS BLOB)) WHERE tenant = 'acme' AND seq = 3 RETURNING seq`, nil, "hash"},
			{"deleted", `DELETE FROM audit WHERE tenant = 'acme' AND seq = 2 RETURNING seq`, nil, "seq"},
			{"moved", `UPDATE audit SET seq = 100 WHERE tenant = 'acme' AND seq = 1 RETURNING seq`, nil, "seq"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				b := open(t)
				var batch []*audit.Record
				for i := range 5 {
					batch = append(batch, &audit.Record{Session: "acme/env:s", Server: "s", Event: "call", Verdict: "allow", Prints: i})
				}
				if err := NewAuditLog(b.State).AppendAll(batch); err != nil {
					t.Fatal(err)
				}
				q := tc.q
				if b.kind == "postgres" {
					q = strings.ReplaceAll(q, "BLOB", "bytea")
					q = strings.Replace(q, "replace(line,", "decode(replace(encode(line, 'escape'),", 1)
					q = strings.Replace(q, `CAST('"allow"' AS bytea), CAST('"block"' AS bytea))`, `'"allow"', '"block"'), 'escape')`, 1)
				}
				var seq int64
				b.queryRow(t, q, tc.args, &seq)
				_, _, err := chainOf(t, b.State, "acme")
				var ve *audit.VerifyError
				if !errors.As(err, &ve) || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("Verify after the row was %s: %v, want a break naming %s", tc.name, err, tc.want)
				}
			})
		}
	})
}
