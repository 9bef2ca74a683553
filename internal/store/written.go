package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/weir-sec/weir/internal/flow"
)

// MaxWritten is how many written entries the store keeps per server
// identity; older ones are dropped first. A server an agent keeps
// writing tainted text to then holds the most recent of it.
const MaxWritten = 2000

// AppendWritten records what a call wrote to the server identity while
// its session held private or untrusted data: the observation's labels,
// fingerprints and digests (its Tool is not stored).
func (s *SQLite) AppendWritten(ctx context.Context, identity string, o *flow.Observation) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("state store %s: written: %w", s.path, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO written (identity, at, labels, prints, digests) VALUES (?, ?, ?, ?, ?)`,
		identity, o.At, int64(o.Labels), packHashes(o.Prints), packHashes(o.Digests)); err != nil {
		return fmt.Errorf("state store %s: written: %w", s.path, err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM written WHERE identity = ? AND seq <= (
		SELECT seq FROM written WHERE identity = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)`, identity, identity, MaxWritten); err != nil {
		return fmt.Errorf("state store %s: written: %w", s.path, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("state store %s: written: %w", s.path, err)
	}
	return nil
}

// Written calls fn for each entry written to identity after seq, in order.
func (s *SQLite) Written(ctx context.Context, identity string, after int64, fn func(seq int64, o *flow.Observation)) error {
	rows, err := s.db.QueryContext(ctx, `SELECT seq, at, labels, prints, digests FROM written WHERE identity = ? AND seq > ? ORDER BY seq`, identity, after)
	if err != nil {
		return fmt.Errorf("state store %s: written: %w", s.path, err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			seq, at, labels int64
			prints, digests sql.RawBytes
		)
		if err := rows.Scan(&seq, &at, &labels, &prints, &digests); err != nil {
			return fmt.Errorf("state store %s: written: %w", s.path, err)
		}
		o := &flow.Observation{Tool: identity, At: at, Labels: flow.Labels(labels) & flow.Legs}
		if o.Prints, err = unpackHashes(prints); err != nil {
			return fmt.Errorf("state store %s: written row %d: %w", s.path, seq, err)
		}
		if o.Digests, err = unpackHashes(digests); err != nil {
			return fmt.Errorf("state store %s: written row %d: %w", s.path, seq, err)
		}
		fn(seq, o)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("state store %s: written: %w", s.path, err)
	}
	return nil
}

// PruneWritten drops written entries older than olderThan.
func (s *SQLite) PruneWritten(ctx context.Context, olderThan time.Time) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM written WHERE at < ?`, olderThan.UnixMilli()); err != nil {
		return fmt.Errorf("state store %s: prune written: %w", s.path, err)
	}
	return nil
}
