package store

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/jackc/pgx/v5"

	"github.com/weir-sec/weir/internal/flow"
)

// A session's observations are bounded on disk as its mirror is in memory
// (flow.Session.MaxBytes): by session.max_bytes of fingerprints, digests and
// identifier digests. Each append adds its row's bytes to the session's
// count (sessions.bytes); an append that takes the count past the bound
// evicts the session's oldest rows until it is at half the bound, and puts
// in their place one tombstone per tool they came from: the union of those
// rows' labels with flow.Evicted, and no hashes. The tombstone keeps what
// DESIGN rule 3 needs: a proxy that joins the session later, or one that
// never pulled the evicted rows, learns that the session read private or
// untrusted data from that tool which Weir can no longer attribute, and
// judges every sink call as carrying it (save a write back to that tool's
// own server, whose name the tombstone keeps). Mirrors that pulled the
// rows before they were evicted keep their fingerprints, to their own
// bound. Halving, not trimming to the bound, makes eviction rare: its cost,
// a scan of the evicted rows, is paid once per half a bound of appends.

// bound is a store's session.max_bytes.
type bound struct{ maxBytes atomic.Int64 }

// SetSessionMaxBytes bounds the bytes of hashes each session keeps in the
// store (session.max_bytes); 0, the default, leaves them unbounded. Every
// proxy enforces its own policy's bound on the appends it makes.
func (b *bound) SetSessionMaxBytes(n int64) { b.maxBytes.Store(max(n, 0)) }

func (b *bound) over(total int64) bool {
	m := b.maxBytes.Load()
	return m > 0 && total > m
}

// rowBytes is what an observation's row counts against the bound: its
// packed hashes, 8 bytes each.
func rowBytes(o *flow.Observation) int64 {
	return 8 * int64(len(o.Prints)+len(o.Digests)+len(o.Idents))
}

// evictQuery lists a session's rows oldest first with their counted bytes.
const (
	evictQuery = `SELECT seq, at, tool, labels,
	coalesce(length(prints), 0) + coalesce(length(digests), 0) + coalesce(length(idents), 0)
	FROM observations WHERE session = ?1 ORDER BY seq`
	pgEvictQuery = `SELECT seq, at, tool, labels,
	coalesce(length(prints), 0) + coalesce(length(digests), 0) + coalesce(length(idents), 0)
	FROM observations WHERE session = $1 ORDER BY seq`
)

// eviction gathers the oldest rows of a session until enough bytes are
// freed, and the tombstones that replace them.
type eviction struct {
	need, freed int64
	last        int64 // the seq of the newest row evicted; 0 for none
	tools       []string
	tombs       map[string]*tombstone
}

type tombstone struct {
	at     int64
	labels flow.Labels
}

func newEviction(total, maxBytes int64) *eviction {
	return &eviction{need: total - maxBytes/2, tombs: map[string]*tombstone{}}
}

// add takes one row, oldest first, and reports whether more are needed.
// Earlier tombstones are taken too (folded into the new ones), so a
// session's tombstones stay one per tool however often it is evicted.
func (e *eviction) add(seq, at int64, tool string, labels, size int64) bool {
	if e.freed >= e.need {
		return false
	}
	e.freed += size
	e.last = seq
	t := e.tombs[tool]
	if t == nil {
		t = &tombstone{}
		e.tombs[tool] = t
		e.tools = append(e.tools, tool)
	}
	t.at = max(t.at, at)
	t.labels |= flow.Labels(labels)&(flow.Legs|flow.Pruned) | flow.Evicted
	return true
}

// evict brings session back under half its bound, if it is still over it
// when the write lock is held.
func (s *SQLite) evict(ctx context.Context, session string) error {
	tx, err := s.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE (_txlock)
	if err != nil {
		return fmt.Errorf("state store %s: evict: %w", s.path, err)
	}
	defer tx.Rollback()
	var total int64
	if err := tx.QueryRowContext(ctx, `SELECT bytes FROM sessions WHERE session = ?`, session).Scan(&total); err != nil {
		return fmt.Errorf("state store %s: evict: %w", s.path, err)
	}
	if !s.over(total) {
		return nil // another writer evicted first
	}
	e := newEviction(total, s.maxBytes.Load())
	rows, err := tx.QueryContext(ctx, evictQuery, session)
	if err != nil {
		return fmt.Errorf("state store %s: evict: %w", s.path, err)
	}
	for rows.Next() {
		var seq, at, labels, size int64
		var tool string
		if err := rows.Scan(&seq, &at, &tool, &labels, &size); err != nil {
			rows.Close()
			return fmt.Errorf("state store %s: evict: %w", s.path, err)
		}
		if !e.add(seq, at, tool, labels, size) {
			break
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("state store %s: evict: %w", s.path, err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM observations WHERE session = ? AND seq <= ?`, session, e.last); err != nil {
		return fmt.Errorf("state store %s: evict: %w", s.path, err)
	}
	for _, tool := range e.tools {
		t := e.tombs[tool]
		if _, err := tx.ExecContext(ctx, `INSERT INTO observations (session, at, tool, labels) VALUES (?, ?, ?, ?)`,
			session, t.at, tool, int64(t.labels)); err != nil {
			return fmt.Errorf("state store %s: evict: %w", s.path, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE sessions SET bytes = bytes - ? WHERE session = ?`, e.freed, session); err != nil {
		return fmt.Errorf("state store %s: evict: %w", s.path, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("state store %s: evict: %w", s.path, err)
	}
	return nil
}

// evict is [SQLite.evict] for PostgreSQL, under the session's advisory
// lock (as Append takes it, so the tombstones' sequence numbers are drawn
// after every earlier row of the session committed), with the change
// feed's wake-up.
func (p *Postgres) evict(ctx context.Context, session string) error {
	tx, err := p.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("state store %s: evict: %w", p.name, err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, pgLockQuery, lockKey("weir/session", session)); err != nil {
		return fmt.Errorf("state store %s: evict: %w", p.name, err)
	}
	var total int64
	if err := tx.QueryRow(ctx, `SELECT bytes FROM sessions WHERE session = $1`, session).Scan(&total); err != nil {
		return fmt.Errorf("state store %s: evict: %w", p.name, err)
	}
	if !p.over(total) {
		return nil
	}
	e := newEviction(total, p.maxBytes.Load())
	rows, err := tx.Query(ctx, pgEvictQuery, session)
	if err != nil {
		return fmt.Errorf("state store %s: evict: %w", p.name, err)
	}
	for rows.Next() {
		var seq, at, labels, size int64
		var tool string
		if err := rows.Scan(&seq, &at, &tool, &labels, &size); err != nil {
			rows.Close()
			return fmt.Errorf("state store %s: evict: %w", p.name, err)
		}
		if !e.add(seq, at, tool, labels, size) {
			break
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("state store %s: evict: %w", p.name, err)
	}
	b := &pgx.Batch{}
	b.Queue(`DELETE FROM observations WHERE session = $1 AND seq <= $2`, session, e.last)
	for _, tool := range e.tools {
		t := e.tombs[tool]
		b.Queue(`INSERT INTO observations (session, at, tool, labels) VALUES ($1, $2, $3, $4)`, session, t.at, tool, int64(t.labels))
	}
	b.Queue(`UPDATE sessions SET bytes = bytes - $1 WHERE session = $2`, e.freed, session)
	b.Queue(pgNotifyQuery, feedPayload(session))
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("state store %s: evict: %w", p.name, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("state store %s: evict: %w", p.name, err)
	}
	if p.feed != nil {
		p.feed.changed(session)
	}
	return nil
}
