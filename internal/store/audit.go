package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

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
// record to the chain of its session's tenant ([audit.Tenant]). One
// AuditLog serves every relay of a process, and commits their records in
// groups: while one append is in the database, the records other relays
// hand it wait, and go together in the next, so a busy gateway pays one
// lock and one round trip of its tenant's chain for many records, not one
// for each relay's batch.
type AuditLog struct {
	store auditStore

	flush sync.Mutex // held by the append in progress
	mu    sync.Mutex // guards queue
	queue []*auditBatch
}

type auditStore interface {
	AppendAudit(ctx context.Context, tenant string, rs []*audit.Record) error
}

// auditBatch is one AppendAll's records, waiting for a group commit.
type auditBatch struct {
	rs   []*audit.Record
	done chan error // buffered: the committer never waits on it
}

// NewAuditLog returns the Auditor for st's chains.
func NewAuditLog(st auditStore) *AuditLog { return &AuditLog{store: st} }

// auditTimeout bounds one append: the relay's Auditor interface carries no
// context (a file append does not block on a network), and a database
// that does not answer must not hold the relay's audit writer forever.
const auditTimeout = 30 * time.Second

// AppendAll appends rs, in order within each tenant's chain, and returns
// once they are committed (a stopped call's record is written before the
// client hears of it).
func (l *AuditLog) AppendAll(rs []*audit.Record) error {
	if len(rs) == 0 {
		return nil
	}
	for _, r := range rs {
		if r == nil {
			return errors.New("audit: append: nil record")
		}
	}
	b := &auditBatch{rs: rs, done: make(chan error, 1)}
	l.mu.Lock()
	l.queue = append(l.queue, b)
	l.mu.Unlock()

	// Whoever holds flush commits everything queued when it took the
	// queue; a batch queued meanwhile is committed by the next holder,
	// which may be this call.
	l.flush.Lock()
	defer l.flush.Unlock()
	select {
	case err := <-b.done:
		return err
	default:
	}
	l.mu.Lock()
	group := l.queue
	l.queue = nil
	l.mu.Unlock()
	err := l.commit(group)
	for _, g := range group {
		g.done <- err
	}
	return <-b.done
}

// commit appends a group's records, tenant by tenant, in the order they
// were queued.
func (l *AuditLog) commit(group []*auditBatch) error {
	ctx, cancel := context.WithTimeout(context.Background(), auditTimeout)
	defer cancel()
	var order []string
	by := map[string][]*audit.Record{}
	for _, g := range group {
		for _, r := range g.rs {
			t := audit.Tenant(r.Session)
			if _, ok := by[t]; !ok {
				order = append(order, t)
			}
			by[t] = append(by[t], r)
		}
	}
	for _, t := range order {
		if err := l.store.AppendAudit(ctx, t, by[t]); err != nil {
			return err
		}
	}
	return nil
}

// Close is a no-op: the store is closed by its owner.
func (*AuditLog) Close() error { return nil }

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
//
// The head of each chain this store last appended to is remembered: the
// next append chains from it and inserts in one round trip, on condition
// that the chain's last seq is still the head's (under the same lock);
// when another replica appended since, nothing is inserted and the append
// reads the head and chains again.
func (p *Postgres) AppendAudit(ctx context.Context, tenant string, rs []*audit.Record) error {
	if len(rs) == 0 {
		return nil
	}
	if err := p.checkText("audit", tenant); err != nil {
		return err
	}
	p.auditMu.Lock()
	h, ok := p.heads[tenant]
	p.auditMu.Unlock()
	if ok {
		out, lines, err := audit.Chain(rs, h.seq, h.hash)
		if err != nil {
			return fmt.Errorf("state store %s: audit: %w", p.name, err)
		}
		seqs, hashes := auditColumns(out)
		b := &pgx.Batch{}
		b.Queue(pgLockQuery, lockKey("weir/audit", tenant))
		var tag pgconn.CommandTag
		b.Queue(`INSERT INTO audit (tenant, seq, hash, line)
			SELECT $1, s, h, l FROM unnest($2::bigint[], $3::text[], $4::bytea[]) AS u(s, h, l)
			WHERE (SELECT coalesce(max(seq), 0) FROM audit WHERE tenant = $1) = $5`,
			tenant, seqs, hashes, lines, h.seq).Exec(func(ct pgconn.CommandTag) error { tag = ct; return nil })
		if err := p.pool.SendBatch(ctx, b).Close(); err != nil {
			return fmt.Errorf("state store %s: audit: %w", p.name, err)
		}
		if tag.RowsAffected() == int64(len(out)) {
			p.setHead(tenant, out[len(out)-1])
			for i, r := range rs {
				*r = out[i]
			}
			return nil
		}
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
	seqs, hashes := auditColumns(out)
	if _, err := tx.Exec(ctx, `INSERT INTO audit (tenant, seq, hash, line)
		SELECT $1, s, h, l FROM unnest($2::bigint[], $3::text[], $4::bytea[]) AS u(s, h, l)`,
		tenant, seqs, hashes, lines); err != nil {
		return fmt.Errorf("state store %s: audit: %w", p.name, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("state store %s: audit: %w", p.name, err)
	}
	p.setHead(tenant, out[len(out)-1])
	for i, r := range rs {
		*r = out[i]
	}
	return nil
}

// auditHead is the last record of a chain, as this store appended it.
type auditHead struct {
	seq  int64
	hash string
}

func (p *Postgres) setHead(tenant string, last audit.Record) {
	p.auditMu.Lock()
	defer p.auditMu.Unlock()
	if p.heads == nil {
		p.heads = map[string]auditHead{}
	}
	p.heads[tenant] = auditHead{last.Seq, last.Hash}
}

// auditColumns are the seq and hash columns of chained records.
func auditColumns(out []audit.Record) ([]int64, []string) {
	seqs := make([]int64, len(out))
	hashes := make([]string, len(out))
	for i := range out {
		seqs[i], hashes[i] = out[i].Seq, out[i].Hash
	}
	return seqs, hashes
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
