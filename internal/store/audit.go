package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weir-sec/weir/internal/audit"
)

// A store can keep the audit chain itself, one chain per tenant, instead of
// each process appending to a file of its home: replicas of a gateway on
// one PostgreSQL database then write one chain per tenant, in the order
// the database serialises their appends, that `weir audit verify` checks
// as it checks a file. Each row holds a record's line exactly as a file
// would (see the audit package), so a chain written out by WriteAudit is a
// log file, byte for byte.

// AuditLog is the relay's Auditor for a store's chains: it appends each
// record to the chain of its session's tenant ([audit.Tenant]).
type AuditLog struct {
	Store interface {
		AppendAudit(ctx context.Context, tenant string, rs []*audit.Record) error
	}
}

// auditTimeout bounds one append: the relay's Auditor interface carries no
// context (a file append does not block on a network), and a database
// that does not answer must not hold the relay's audit writer forever.
const auditTimeout = 30 * time.Second

// AppendAll appends rs, in order within each tenant's chain.
func (l AuditLog) AppendAll(rs []*audit.Record) error {
	if len(rs) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), auditTimeout)
	defer cancel()
	// A batch is nearly always of one tenant: the relay's writer serves
	// one session.
	var order []string
	by := map[string][]*audit.Record{}
	for _, r := range rs {
		if r == nil {
			return errors.New("audit: append: nil record")
		}
		t := audit.Tenant(r.Session)
		if _, ok := by[t]; !ok {
			order = append(order, t)
		}
		by[t] = append(by[t], r)
	}
	for _, t := range order {
		if err := l.Store.AppendAudit(ctx, t, by[t]); err != nil {
			return err
		}
	}
	return nil
}

// Close is a no-op: the store is closed by its owner.
func (AuditLog) Close() error { return nil }

// AppendAudit appends rs to tenant's chain, chained to its last record,
// under the write lock (BEGIN IMMEDIATE), so appends of several processes
// serialise. On success each record's Seq, Prev and Hash are set.
func (s *SQLite) AppendAudit(ctx context.Context, tenant string, rs []*audit.Record) error {
	if len(rs) == 0 {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE (_txlock)
	if err != nil {
		return fmt.Errorf("state store %s: audit: %w", s.path, err)
	}
	defer tx.Rollback()
	seq, prev := int64(0), audit.Genesis
	err = tx.QueryRowContext(ctx, `SELECT seq, hash FROM audit WHERE tenant = ? ORDER BY seq DESC LIMIT 1`, tenant).Scan(&seq, &prev)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("state store %s: audit: %w", s.path, err)
	}
	out, lines, err := audit.Chain(rs, seq, prev)
	if err != nil {
		return fmt.Errorf("state store %s: audit: %w", s.path, err)
	}
	for i := range out {
		if _, err := tx.ExecContext(ctx, `INSERT INTO audit (tenant, seq, hash, line) VALUES (?, ?, ?, ?)`,
			tenant, out[i].Seq, out[i].Hash, lines[i]); err != nil {
			return fmt.Errorf("state store %s: audit: %w", s.path, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("state store %s: audit: %w", s.path, err)
	}
	for i, r := range rs {
		*r = out[i]
	}
	return nil
}

// WriteAudit writes tenant's chain to w, one line per record in seq order
// as a log file holds them, and returns how many records it wrote.
func (s *SQLite) WriteAudit(ctx context.Context, tenant string, w io.Writer) (int64, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT line FROM audit WHERE tenant = ? ORDER BY seq`, tenant)
	if err != nil {
		return 0, fmt.Errorf("state store %s: audit: %w", s.path, err)
	}
	defer rows.Close()
	var n int64
	for rows.Next() {
		var line sql.RawBytes
		if err := rows.Scan(&line); err != nil {
			return n, fmt.Errorf("state store %s: audit: %w", s.path, err)
		}
		if err := writeLine(w, line); err != nil {
			return n, err
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return n, fmt.Errorf("state store %s: audit: %w", s.path, err)
	}
	return n, nil
}

// AuditTenants lists the tenants that have a chain, sorted ("" first).
func (s *SQLite) AuditTenants(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT tenant FROM audit ORDER BY tenant`)
	if err != nil {
		return nil, fmt.Errorf("state store %s: audit: %w", s.path, err)
	}
	defer rows.Close()
	var ts []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, fmt.Errorf("state store %s: audit: %w", s.path, err)
		}
		ts = append(ts, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("state store %s: audit: %w", s.path, err)
	}
	return ts, nil
}

func writeLine(w io.Writer, line []byte) error {
	if _, err := w.Write(line); err != nil {
		return err
	}
	_, err := w.Write([]byte{'\n'})
	return err
}

// AppendAudit is [SQLite.AppendAudit] for PostgreSQL. Appends to one
// tenant's chain serialise on the tenant's advisory transaction lock,
// taken before the chain's last record is read, so each append chains from
// the one committed before it, whichever replica made it; the primary key
// (tenant, seq) makes a fork impossible even so.
func (p *Postgres) AppendAudit(ctx context.Context, tenant string, rs []*audit.Record) error {
	if len(rs) == 0 {
		return nil
	}
	if err := p.checkText("audit", tenant); err != nil {
		return err
	}
	tx, err := p.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("state store %s: audit: %w", p.name, err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, pgLockQuery, lockKey("weir/audit", tenant)); err != nil {
		return fmt.Errorf("state store %s: audit: %w", p.name, err)
	}
	seq, prev := int64(0), audit.Genesis
	err = tx.QueryRow(ctx, `SELECT seq, hash FROM audit WHERE tenant = $1 ORDER BY seq DESC LIMIT 1`, tenant).Scan(&seq, &prev)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("state store %s: audit: %w", p.name, err)
	}
	out, lines, err := audit.Chain(rs, seq, prev)
	if err != nil {
		return fmt.Errorf("state store %s: audit: %w", p.name, err)
	}
	seqs := make([]int64, len(out))
	hashes := make([]string, len(out))
	for i := range out {
		seqs[i], hashes[i] = out[i].Seq, out[i].Hash
	}
	if _, err := tx.Exec(ctx, `INSERT INTO audit (tenant, seq, hash, line)
		SELECT $1, s, h, l FROM unnest($2::bigint[], $3::text[], $4::bytea[]) AS u(s, h, l)`,
		tenant, seqs, hashes, lines); err != nil {
		return fmt.Errorf("state store %s: audit: %w", p.name, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("state store %s: audit: %w", p.name, err)
	}
	for i, r := range rs {
		*r = out[i]
	}
	return nil
}

// WriteAudit is [SQLite.WriteAudit] for PostgreSQL. The rows come from one
// snapshot, so a chain being appended to is written out whole up to some
// record.
func (p *Postgres) WriteAudit(ctx context.Context, tenant string, w io.Writer) (int64, error) {
	if err := p.checkText("audit", tenant); err != nil {
		return 0, err
	}
	rows, err := p.pool.Query(ctx, `SELECT line FROM audit WHERE tenant = $1 ORDER BY seq`, tenant)
	if err != nil {
		return 0, fmt.Errorf("state store %s: audit: %w", p.name, err)
	}
	defer rows.Close()
	var n int64
	for rows.Next() {
		if err := writeLine(w, rows.RawValues()[0]); err != nil {
			return n, err
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return n, fmt.Errorf("state store %s: audit: %w", p.name, err)
	}
	return n, nil
}

// AuditTenants is [SQLite.AuditTenants] for PostgreSQL.
func (p *Postgres) AuditTenants(ctx context.Context) ([]string, error) {
	rows, err := p.pool.Query(ctx, `SELECT DISTINCT tenant FROM audit ORDER BY tenant`)
	if err != nil {
		return nil, fmt.Errorf("state store %s: audit: %w", p.name, err)
	}
	ts, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("state store %s: audit: %w", p.name, err)
	}
	return ts, nil
}
