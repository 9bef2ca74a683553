package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"sync"

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

// pinsVersionQuery reads the counter the pins table's triggers bump.
const pinsVersionQuery = `SELECT version FROM pins_version`

// pinCache keeps every pin as of one value of the pins version counter,
// which triggers on the pins table bump on every write, whoever writes it
// (another proxy, `weir pins approve`, a Weir of an older version): a
// proxy that lists its tools again reads one row instead of the table,
// which was a third of its CPU. The pins are read after the counter, so
// what is kept is never older than the version it is kept under.
type pinCache struct {
	mu      sync.Mutex
	version int64
	all     []pin.Pin // ordered by server, identity and tool; nil: none kept
	loads   int       // how many times the table was read (tests)
}

// get returns every pin, ordered by server, identity and tool: the kept
// ones when the counter has not moved. The slice is shared; callers copy
// what they hand on.
func (c *pinCache) get(ctx context.Context, version func(context.Context) (int64, error), load func(context.Context) ([]pin.Pin, error)) ([]pin.Pin, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, err := version(ctx)
	if err != nil {
		return nil, err
	}
	if c.all != nil && v == c.version {
		return c.all, nil
	}
	all, err := load(ctx)
	if err != nil {
		return nil, err
	}
	c.loads++
	c.version, c.all = v, append([]pin.Pin{}, all...)
	return c.all, nil
}

// pinsOf is Pins over every pin.
func pinsOf(all []pin.Pin, identity string) map[string]pin.Pin {
	out := map[string]pin.Pin{}
	for _, p := range all {
		if p.Identity == identity {
			out[p.Tool] = p
		}
	}
	return out
}

// serverPins is AllPins over every pin: a copy, never the cache's slice.
func serverPins(all []pin.Pin, server string) []pin.Pin {
	if server == "" {
		return slices.Clone(all)
	}
	var out []pin.Pin
	for _, p := range all {
		if p.Server == server {
			out = append(out, p)
		}
	}
	return out
}

// Pins returns the pins of one server identity, by tool name.
func (s *SQLite) Pins(ctx context.Context, identity string) (map[string]pin.Pin, error) {
	all, err := s.allPins(ctx)
	if err != nil {
		return nil, err
	}
	return pinsOf(all, identity), nil
}

// AllPins returns every pin, ordered by server name, identity and tool; a
// non-empty server keeps only that server's.
func (s *SQLite) AllPins(ctx context.Context, server string) ([]pin.Pin, error) {
	all, err := s.allPins(ctx)
	if err != nil {
		return nil, err
	}
	return serverPins(all, server), nil
}

func (s *SQLite) allPins(ctx context.Context) ([]pin.Pin, error) {
	return s.pins.get(ctx, s.PinsVersion, func(ctx context.Context) ([]pin.Pin, error) {
		rows, err := s.db.QueryContext(ctx, `SELECT `+pinColumns+` FROM pins ORDER BY server, identity, tool`)
		if err != nil {
			return nil, fmt.Errorf("reading pins from %s: %w", s.path, err)
		}
		all, err := scanPins(rows)
		if err != nil {
			return nil, fmt.Errorf("reading pins from %s: %w", s.path, err)
		}
		return all, nil
	})
}

const putPinQuery = `INSERT INTO pins (` + pinColumns + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (identity, tool) DO UPDATE SET server = excluded.server, hash = excluded.hash,
		definition = excluded.definition, pending_hash = excluded.pending_hash,
		pending_def = excluded.pending_def, pending_why = excluded.pending_why, updated = excluded.updated,
		command = excluded.command`

// PutPin writes pins, in one transaction, replacing the row for each one's
// identity and tool but keeping the first FirstSeen. A server's first
// tool list pins every tool: one commit, not one per tool.
func (s *SQLite) PutPin(ctx context.Context, ps ...pin.Pin) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("writing pins to %s: %w", s.path, err)
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, putPinQuery)
	if err != nil {
		return fmt.Errorf("writing pins to %s: %w", s.path, err)
	}
	defer stmt.Close()
	for _, p := range ps {
		if _, err := stmt.ExecContext(ctx, p.Identity, p.Tool, p.Server, p.Hash, p.Definition, p.PendingHash, p.PendingDef, p.PendingWhy, p.FirstSeen, p.Updated, p.Command); err != nil {
			return fmt.Errorf("writing a pin to %s: %w", s.path, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("writing pins to %s: %w", s.path, err)
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

// PinsVersion is the pins version counter: it moves on every write to
// the pins, by anyone.
func (s *SQLite) PinsVersion(ctx context.Context) (v int64, err error) {
	if err = s.pinsVersion.QueryRowContext(ctx).Scan(&v); err != nil {
		return 0, fmt.Errorf("reading the pins version from %s: %w", s.path, err)
	}
	return v, nil
}
