package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/weir-sec/weir/internal/approval"
)

var (
	_ approval.Store = (*SQLite)(nil)
	_ approval.Store = (*Postgres)(nil)
	_ approval.Store = (*Memory)(nil)
)

const approvalColumns = `id, session, server, tool, digest, dest, rule, sealed, created, expires, status, scope, channel, decided_by, decided`

// approvalKeep is how long a request outlives its expiry before it is
// pruned: `weir approve` on a just-expired id says "expired", not "unknown".
const approvalKeep = 24 * 60 * 60 * 1000

func scanApproval(sc interface{ Scan(...any) error }) (approval.Row, error) {
	var r approval.Row
	var status, scope, channel string
	err := sc.Scan(&r.ID, &r.Session, &r.Server, &r.Tool, &r.Digest, &r.Dest, &r.Rule, &r.Sealed,
		&r.Created, &r.Expires, &status, &scope, &channel, &r.By, &r.Decided)
	r.Status, r.Scope, r.Channel = approval.Status(status), approval.Scope(scope), approval.Channel(channel)
	return r, err
}

// PutApproval records a new approval request, and prunes requests long
// expired and spent nonces.
func (s *SQLite) PutApproval(ctx context.Context, r approval.Row) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("state store %s: approval: %w", s.path, err)
	}
	defer tx.Rollback()
	for _, q := range []string{
		`DELETE FROM approvals WHERE expires < ?`,
		`DELETE FROM approval_nonces WHERE expires < ?`,
	} {
		if _, err := tx.ExecContext(ctx, q, r.Created-approvalKeep); err != nil {
			return fmt.Errorf("state store %s: approval: %w", s.path, err)
		}
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO approvals (`+approvalColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, r.Session, r.Server, r.Tool, r.Digest, r.Dest, r.Rule, r.Sealed, r.Created, r.Expires,
		string(r.Status), string(r.Scope), string(r.Channel), r.By, r.Decided)
	if err != nil {
		return fmt.Errorf("state store %s: approval: %w", s.path, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("state store %s: approval: %w", s.path, err)
	}
	return nil
}

// Approval returns the request with the id, or approval.ErrUnknown.
func (s *SQLite) Approval(ctx context.Context, id string) (approval.Row, error) {
	r, err := scanApproval(s.db.QueryRowContext(ctx, `SELECT `+approvalColumns+` FROM approvals WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return r, fmt.Errorf("%w %q", approval.ErrUnknown, id)
	}
	if err != nil {
		return r, fmt.Errorf("state store %s: approval %s: %w", s.path, id, err)
	}
	return r, nil
}

// Approvals lists the requests not expired at now, newest first; session
// "" lists every session's.
func (s *SQLite) Approvals(ctx context.Context, session string, now int64) ([]approval.Row, error) {
	q := `SELECT ` + approvalColumns + ` FROM approvals WHERE expires > ?`
	args := []any{now}
	if session != "" {
		q += ` AND session = ?`
		args = append(args, session)
	}
	rows, err := s.db.QueryContext(ctx, q+` ORDER BY created DESC, id`, args...)
	if err != nil {
		return nil, fmt.Errorf("state store %s: approvals: %w", s.path, err)
	}
	defer rows.Close()
	var out []approval.Row
	for rows.Next() {
		r, err := scanApproval(rows)
		if err != nil {
			return nil, fmt.Errorf("state store %s: approvals: %w", s.path, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("state store %s: approvals: %w", s.path, err)
	}
	return out, nil
}

// LatestApproval returns the session's newest unexpired request for the
// digest.
func (s *SQLite) LatestApproval(ctx context.Context, session, digest string, now int64) (approval.Row, bool, error) {
	r, err := scanApproval(s.db.QueryRowContext(ctx, `SELECT `+approvalColumns+` FROM approvals
		WHERE session = ? AND digest = ? AND expires > ? ORDER BY created DESC, id LIMIT 1`, session, digest, now))
	if errors.Is(err, sql.ErrNoRows) {
		return r, false, nil
	}
	if err != nil {
		return r, false, fmt.Errorf("state store %s: approvals: %w", s.path, err)
	}
	return r, true, nil
}

// SetApproval moves a request from one status to another; false when it
// was not in the from status.
func (s *SQLite) SetApproval(ctx context.Context, id string, from, to approval.Status, scope approval.Scope, by string, at int64) (bool, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE approvals SET status = ?, scope = ?, decided_by = ?, decided = ? WHERE id = ? AND status = ?`,
		string(to), string(scope), by, at, id, string(from))
	if err != nil {
		return false, fmt.Errorf("state store %s: approval %s: %w", s.path, id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("state store %s: approval %s: %w", s.path, id, err)
	}
	return n == 1, nil
}

// Grant remembers a session approval for a destination key.
func (s *SQLite) Grant(ctx context.Context, session, dest string, at int64) error {
	if _, err := s.db.ExecContext(ctx, `INSERT INTO approval_grants (session, dest, at) VALUES (?, ?, ?)
		ON CONFLICT (session, dest) DO NOTHING`, session, dest, at); err != nil {
		return fmt.Errorf("state store %s: grant: %w", s.path, err)
	}
	return nil
}

// Granted reports whether the session has a grant for dest.
func (s *SQLite) Granted(ctx context.Context, session, dest string) (bool, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM approval_grants WHERE session = ? AND dest = ?`, session, dest).Scan(&n); err != nil {
		return false, fmt.Errorf("state store %s: grant: %w", s.path, err)
	}
	return n > 0, nil
}

// SpendNonce records a nonce as used; false when it was used before.
func (s *SQLite) SpendNonce(ctx context.Context, nonce string, expires int64) (bool, error) {
	res, err := s.db.ExecContext(ctx, `INSERT INTO approval_nonces (nonce, expires) VALUES (?, ?) ON CONFLICT (nonce) DO NOTHING`, nonce, expires)
	if err != nil {
		return false, fmt.Errorf("state store %s: nonce: %w", s.path, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("state store %s: nonce: %w", s.path, err)
	}
	return n == 1, nil
}

// CountApprovals counts the session's requests that asked a person.
func (s *SQLite) CountApprovals(ctx context.Context, session string) (int, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM approvals WHERE session = ? AND channel NOT IN (?, ?)`,
		session, string(approval.Memory), string(approval.Repeat)).Scan(&n); err != nil {
		return 0, fmt.Errorf("state store %s: approvals: %w", s.path, err)
	}
	return n, nil
}

// The Memory store's approvals, for a process that decides alone.

type memApprovals struct {
	rows   map[string]approval.Row
	grants map[[2]string]bool
	nonces map[string]int64
}

func (m *Memory) approvalsLocked() *memApprovals {
	if m.appr == nil {
		m.appr = &memApprovals{rows: map[string]approval.Row{}, grants: map[[2]string]bool{}, nonces: map[string]int64{}}
	}
	return m.appr
}

func (m *Memory) PutApproval(_ context.Context, r approval.Row) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.approvalsLocked()
	if _, dup := a.rows[r.ID]; dup {
		return fmt.Errorf("approval %s exists", r.ID)
	}
	a.rows[r.ID] = r
	return nil
}

func (m *Memory) Approval(_ context.Context, id string) (approval.Row, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.approvalsLocked().rows[id]
	if !ok {
		return r, fmt.Errorf("%w %q", approval.ErrUnknown, id)
	}
	return r, nil
}

func (m *Memory) Approvals(_ context.Context, session string, now int64) ([]approval.Row, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []approval.Row
	for _, r := range m.approvalsLocked().rows {
		if r.Expires > now && (session == "" || r.Session == session) {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b approval.Row) int {
		return cmp.Or(cmp.Compare(b.Created, a.Created), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

func (m *Memory) LatestApproval(ctx context.Context, session, digest string, now int64) (approval.Row, bool, error) {
	rows, _ := m.Approvals(ctx, session, now)
	for _, r := range rows {
		if r.Digest == digest {
			return r, true, nil
		}
	}
	return approval.Row{}, false, nil
}

func (m *Memory) SetApproval(_ context.Context, id string, from, to approval.Status, scope approval.Scope, by string, at int64) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.approvalsLocked()
	r, ok := a.rows[id]
	if !ok || r.Status != from {
		return false, nil
	}
	r.Status, r.Scope, r.By, r.Decided = to, scope, by, at
	a.rows[id] = r
	return true, nil
}

func (m *Memory) Grant(_ context.Context, session, dest string, _ int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.approvalsLocked().grants[[2]string{session, dest}] = true
	return nil
}

func (m *Memory) Granted(_ context.Context, session, dest string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.approvalsLocked().grants[[2]string{session, dest}], nil
}

func (m *Memory) SpendNonce(_ context.Context, nonce string, expires int64) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.approvalsLocked()
	if _, used := a.nonces[nonce]; used {
		return false, nil
	}
	a.nonces[nonce] = expires
	return true, nil
}

func (m *Memory) CountApprovals(_ context.Context, session string) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, r := range m.approvalsLocked().rows {
		if r.Session == session && r.Channel != approval.Memory && r.Channel != approval.Repeat {
			n++
		}
	}
	return n, nil
}
