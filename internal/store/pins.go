package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/weir-sec/weir/internal/pin"
)

const pinColumns = `identity, tool, server, hash, definition, pending_hash, pending_def, pending_why, first_seen, updated, command`

func scanPins(rows *sql.Rows) ([]pin.Pin, error) {
	defer rows.Close()
	var out []pin.Pin
	for rows.Next() {
		var p pin.Pin
		if err := rows.Scan(&p.Identity, &p.Tool, &p.Server, &p.Hash, &p.Definition, &p.PendingHash, &p.PendingDef, &p.PendingWhy, &p.FirstSeen, &p.Updated, &p.Command); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// Pins returns the pins of one server identity, by tool name.
func (s *SQLite) Pins(ctx context.Context, identity string) (map[string]pin.Pin, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+pinColumns+` FROM pins WHERE identity = ?`, identity)
	if err != nil {
		return nil, fmt.Errorf("reading pins from %s: %w", s.path, err)
	}
	list, err := scanPins(rows)
	if err != nil {
		return nil, fmt.Errorf("reading pins from %s: %w", s.path, err)
	}
	out := make(map[string]pin.Pin, len(list))
	for _, p := range list {
		out[p.Tool] = p
	}
	return out, nil
}

// AllPins returns every pin, ordered by server name, identity and tool; a
// non-empty server keeps only that server's.
func (s *SQLite) AllPins(ctx context.Context, server string) ([]pin.Pin, error) {
	q := `SELECT ` + pinColumns + ` FROM pins`
	var args []any
	if server != "" {
		q += ` WHERE server = ?`
		args = append(args, server)
	}
	rows, err := s.db.QueryContext(ctx, q+` ORDER BY server, identity, tool`, args...)
	if err != nil {
		return nil, fmt.Errorf("reading pins from %s: %w", s.path, err)
	}
	out, err := scanPins(rows)
	if err != nil {
		return nil, fmt.Errorf("reading pins from %s: %w", s.path, err)
	}
	return out, nil
}

// PutPin writes a pin, replacing the row for its identity and tool but
// keeping the first FirstSeen.
func (s *SQLite) PutPin(ctx context.Context, p pin.Pin) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO pins (`+pinColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (identity, tool) DO UPDATE SET server = excluded.server, hash = excluded.hash,
			definition = excluded.definition, pending_hash = excluded.pending_hash,
			pending_def = excluded.pending_def, pending_why = excluded.pending_why, updated = excluded.updated,
			command = excluded.command`,
		p.Identity, p.Tool, p.Server, p.Hash, p.Definition, p.PendingHash, p.PendingDef, p.PendingWhy, p.FirstSeen, p.Updated, p.Command)
	if err != nil {
		return fmt.Errorf("writing a pin to %s: %w", s.path, err)
	}
	return nil
}

// ApprovePins makes the pending definitions of a server's tools (tool ""
// for all of them) the approved ones, and reports how many it approved.
func (s *SQLite) ApprovePins(ctx context.Context, server, tool string, now int64) (int, error) {
	q := `UPDATE pins SET hash = pending_hash, definition = pending_def, pending_hash = '', pending_def = NULL,
		pending_why = '', updated = ? WHERE server = ? AND pending_hash != ''`
	args := []any{now, server}
	if tool != "" {
		q += ` AND tool = ?`
		args = append(args, tool)
	}
	res, err := s.db.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, fmt.Errorf("approving pins in %s: %w", s.path, err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// ResetPins forgets the pins of a server ("" for every server), so its
// tools are pinned afresh on next sight, and reports how many it removed.
func (s *SQLite) ResetPins(ctx context.Context, server string) (int, error) {
	q, args := `DELETE FROM pins`, []any{}
	if server != "" {
		q += ` WHERE server = ?`
		args = append(args, server)
	}
	res, err := s.db.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, fmt.Errorf("resetting pins in %s: %w", s.path, err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}
