package store

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"time"

	"github.com/weir-sec/weir/internal/flow"
)

// Rec is one recorded decision, for weir replay and weir learn: what kind
// of event (list, call or result), of which tool, when, and a body of
// JSON that holds labels, shapes and keyed hashes, never values (DESIGN
// rule 2; package recording writes and reads the bodies).
type Rec struct {
	Seq     int64 // set by the store
	Session string
	At      int64 // Unix milliseconds
	Kind    string
	Server  string
	Tool    string
	Body    []byte
}

// AppendRecords stores records, in order, in one transaction.
func (s *SQLite) AppendRecords(ctx context.Context, recs []Rec) error {
	if len(recs) == 0 {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("state store %s: record: %w", s.path, err)
	}
	defer tx.Rollback()
	st, err := tx.PrepareContext(ctx, `INSERT INTO records (session, at, kind, server, tool, body) VALUES (?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return fmt.Errorf("state store %s: record: %w", s.path, err)
	}
	defer st.Close()
	for _, r := range recs {
		if r.Session == "" {
			return fmt.Errorf("state store %s: record: empty session key", s.path)
		}
		if _, err := st.ExecContext(ctx, r.Session, r.At, r.Kind, r.Server, r.Tool, r.Body); err != nil {
			return fmt.Errorf("state store %s: record: %w", s.path, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("state store %s: record: %w", s.path, err)
	}
	return nil
}

// Records calls fn for every record at or after since (Unix ms), of
// session when it is not "", in sequence order.
func (s *SQLite) Records(ctx context.Context, since int64, session string, fn func(Rec) error) error {
	q := `SELECT seq, session, at, kind, server, tool, body FROM records WHERE at >= ? ORDER BY seq`
	args := []any{since}
	if session != "" {
		q = `SELECT seq, session, at, kind, server, tool, body FROM records WHERE session = ? AND at >= ? ORDER BY seq`
		args = []any{session, since}
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("state store %s: records: %w", s.path, err)
	}
	defer rows.Close()
	for rows.Next() {
		var r Rec
		if err := rows.Scan(&r.Seq, &r.Session, &r.At, &r.Kind, &r.Server, &r.Tool, &r.Body); err != nil {
			return fmt.Errorf("state store %s: records: %w", s.path, err)
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("state store %s: records: %w", s.path, err)
	}
	return nil
}

// Observations calls apply for each of session's observations, in
// sequence order: what a replay rebuilds the session from.
func (s *SQLite) Observations(ctx context.Context, session string, apply func(seq int64, o *flow.Observation)) error {
	return s.pull(ctx, session, 0, math.MaxInt64, apply)
}

// PutPolicy stores the text of a policy (a file's bytes; a preset's name
// as its source and no text) under its hash, once.
func (s *SQLite) PutPolicy(ctx context.Context, hash, source string, text []byte, at time.Time) error {
	if text == nil {
		text = []byte{}
	}
	if _, err := s.db.ExecContext(ctx, `INSERT OR IGNORE INTO policies (hash, source, text, at) VALUES (?, ?, ?, ?)`,
		hash, source, text, at.UnixMilli()); err != nil {
		return fmt.Errorf("state store %s: policy: %w", s.path, err)
	}
	return nil
}

// Policy returns the source and text of the policy stored under hash.
func (s *SQLite) Policy(ctx context.Context, hash string) (source string, text []byte, err error) {
	err = s.db.QueryRowContext(ctx, `SELECT source, text FROM policies WHERE hash = ?`, hash).Scan(&source, &text)
	if err == sql.ErrNoRows {
		return "", nil, fmt.Errorf("state store %s: no policy with hash %s is recorded", s.path, hash)
	}
	if err != nil {
		return "", nil, fmt.Errorf("state store %s: policy: %w", s.path, err)
	}
	return source, text, nil
}

// PruneRecords deletes the records of every session with no record since
// olderThan (oldest sessions first: a session is kept or dropped whole),
// and returns how many records it deleted.
func (s *SQLite) PruneRecords(ctx context.Context, olderThan time.Time) (int64, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM records WHERE session IN
		(SELECT session FROM records GROUP BY session HAVING max(at) < ?)`, olderThan.UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("state store %s: prune records: %w", s.path, err)
	}
	return res.RowsAffected()
}
