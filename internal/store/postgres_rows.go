package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weir-sec/weir/internal/approval"
	"github.com/weir-sec/weir/internal/flow"
	"github.com/weir-sec/weir/internal/pin"
)

// The Postgres store's pins, approvals, recordings and written entries:
// the SQLite store's statements in PostgreSQL's dialect, with the same
// meaning. Where SQLite's single writer made a read-then-write safe, a
// statement here does both (ON CONFLICT, UPDATE … WHERE status = from), so
// two replicas racing for one row get one winner.

// Pins returns the pins of one server identity, by tool name.
func (p *Postgres) Pins(ctx context.Context, identity string) (map[string]pin.Pin, error) {
	if err := p.checkText("pins", identity); err != nil {
		return nil, err
	}
	all, err := p.allPins(ctx)
	if err != nil {
		return nil, err
	}
	return pinsOf(all, identity), nil
}

// AllPins returns every pin, ordered by server name, identity and tool; a
// non-empty server keeps only that server's.
func (p *Postgres) AllPins(ctx context.Context, server string) ([]pin.Pin, error) {
	if err := p.checkText("pins", server); err != nil {
		return nil, err
	}
	all, err := p.allPins(ctx)
	if err != nil {
		return nil, err
	}
	return serverPins(all, server), nil
}

func (p *Postgres) allPins(ctx context.Context) ([]pin.Pin, error) {
	return p.pins.get(ctx, p.PinsVersion, func(ctx context.Context) ([]pin.Pin, error) {
		all, err := p.readPins(ctx, `SELECT `+pinColumns+` FROM pins ORDER BY server, identity, tool`)
		if err != nil {
			return nil, fmt.Errorf("reading pins from %s: %w", p.name, err)
		}
		return all, nil
	})
}

func (p *Postgres) readPins(ctx context.Context, q string, args ...any) ([]pin.Pin, error) {
	rows, err := p.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (pin.Pin, error) {
		var pn pin.Pin
		err := r.Scan(&pn.Identity, &pn.Tool, &pn.Server, &pn.Hash, &pn.Definition, &pn.PendingHash, &pn.PendingDef,
			&pn.PendingWhy, &pn.FirstSeen, &pn.Updated, &pn.Command)
		return pn, err
	})
}

const pgPutPinQuery = `INSERT INTO pins (` + pinColumns + `) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
	ON CONFLICT (identity, tool) DO UPDATE SET server = excluded.server, hash = excluded.hash,
		definition = excluded.definition, pending_hash = excluded.pending_hash,
		pending_def = excluded.pending_def, pending_why = excluded.pending_why, updated = excluded.updated,
		command = excluded.command`

// PutPin is [SQLite.PutPin].
func (p *Postgres) PutPin(ctx context.Context, ps ...pin.Pin) error {
	for _, pn := range ps {
		if err := p.checkText("pin", pn.Identity, pn.Tool, pn.Server, pn.Hash, pn.PendingHash, pn.PendingWhy, pn.Command); err != nil {
			return err
		}
	}
	var b pgx.Batch
	for _, pn := range ps {
		b.Queue(pgPutPinQuery, pn.Identity, pn.Tool, pn.Server, pn.Hash, pn.Definition, pn.PendingHash, pn.PendingDef, pn.PendingWhy, pn.FirstSeen, pn.Updated, pn.Command)
	}
	// A batch is one implicit transaction: all of it or none.
	if err := p.pool.SendBatch(ctx, &b).Close(); err != nil {
		return fmt.Errorf("writing pins to %s: %w", p.name, err)
	}
	return nil
}

// ApprovePins makes the pending definitions of a server's tools (tool ""
// for all of them) the approved ones, and reports how many it approved.
func (p *Postgres) ApprovePins(ctx context.Context, server, tool string, now int64) (int, error) {
	if err := p.checkText("approve pins", server, tool); err != nil {
		return 0, err
	}
	q := `UPDATE pins SET hash = pending_hash, definition = pending_def, pending_hash = '', pending_def = NULL,
		pending_why = '', updated = $1 WHERE server = $2 AND pending_hash <> ''`
	args := []any{now, server}
	if tool != "" {
		q += ` AND tool = $3`
		args = append(args, tool)
	}
	tag, err := p.pool.Exec(ctx, q, args...)
	if err != nil {
		return 0, fmt.Errorf("approving pins in %s: %w", p.name, err)
	}
	return int(tag.RowsAffected()), nil
}

// ResetPins forgets the pins of a server ("" for every server) and
// reports how many it removed.
func (p *Postgres) ResetPins(ctx context.Context, server string) (int, error) {
	if err := p.checkText("reset pins", server); err != nil {
		return 0, err
	}
	q, args := `DELETE FROM pins`, []any{}
	if server != "" {
		q += ` WHERE server = $1`
		args = append(args, server)
	}
	tag, err := p.pool.Exec(ctx, q, args...)
	if err != nil {
		return 0, fmt.Errorf("resetting pins in %s: %w", p.name, err)
	}
	return int(tag.RowsAffected()), nil
}

func (p *Postgres) approvalRows(ctx context.Context, q string, args ...any) ([]approval.Row, error) {
	rows, err := p.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (approval.Row, error) { return scanApproval(r) })
}

// PutApproval records a new approval request, and prunes requests long
// expired and spent nonces.
func (p *Postgres) PutApproval(ctx context.Context, r approval.Row) error {
	if err := p.checkText("approval", r.ID, r.Session, r.Server, r.Tool, r.Digest, r.Dest, r.Rule,
		string(r.Status), string(r.Scope), string(r.Channel), r.By); err != nil {
		return err
	}
	b := &pgx.Batch{}
	b.Queue(`DELETE FROM approvals WHERE expires < $1`, r.Created-approvalKeep)
	b.Queue(`DELETE FROM approval_nonces WHERE expires < $1`, r.Created-approvalKeep)
	b.Queue(`INSERT INTO approvals (`+approvalColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
		r.ID, r.Session, r.Server, r.Tool, r.Digest, r.Dest, r.Rule, r.Sealed, r.Created, r.Expires,
		string(r.Status), string(r.Scope), string(r.Channel), r.By, r.Decided)
	if err := p.pool.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("state store %s: approval: %w", p.name, err)
	}
	return nil
}

// Approval returns the request with the id, or approval.ErrUnknown.
func (p *Postgres) Approval(ctx context.Context, id string) (approval.Row, error) {
	if err := p.checkText("approval", id); err != nil {
		return approval.Row{}, err
	}
	rows, err := p.approvalRows(ctx, `SELECT `+approvalColumns+` FROM approvals WHERE id = $1`, id)
	if err != nil {
		return approval.Row{}, fmt.Errorf("state store %s: approval %s: %w", p.name, id, err)
	}
	if len(rows) == 0 {
		return approval.Row{}, fmt.Errorf("%w %q", approval.ErrUnknown, id)
	}
	return rows[0], nil
}

// Approvals lists the requests not expired at now, newest first; session
// "" lists every session's.
func (p *Postgres) Approvals(ctx context.Context, session string, now int64) ([]approval.Row, error) {
	if err := p.checkText("approvals", session); err != nil {
		return nil, err
	}
	q := `SELECT ` + approvalColumns + ` FROM approvals WHERE expires > $1`
	args := []any{now}
	if session != "" {
		q += ` AND session = $2`
		args = append(args, session)
	}
	out, err := p.approvalRows(ctx, q+` ORDER BY created DESC, id`, args...)
	if err != nil {
		return nil, fmt.Errorf("state store %s: approvals: %w", p.name, err)
	}
	return out, nil
}

// LatestApproval returns the session's newest unexpired request for the
// digest.
func (p *Postgres) LatestApproval(ctx context.Context, session, digest string, now int64) (approval.Row, bool, error) {
	if err := p.checkText("approvals", session, digest); err != nil {
		return approval.Row{}, false, err
	}
	rows, err := p.approvalRows(ctx, `SELECT `+approvalColumns+` FROM approvals
		WHERE session = $1 AND digest = $2 AND expires > $3 ORDER BY created DESC, id LIMIT 1`, session, digest, now)
	if err != nil {
		return approval.Row{}, false, fmt.Errorf("state store %s: approvals: %w", p.name, err)
	}
	if len(rows) == 0 {
		return approval.Row{}, false, nil
	}
	return rows[0], true, nil
}

// SetApproval moves a request from one status to another; false when it
// was not in the from status. One UPDATE decides it, so of two replicas
// deciding one request, exactly one moves it.
func (p *Postgres) SetApproval(ctx context.Context, id string, from, to approval.Status, scope approval.Scope, by string, at int64) (bool, error) {
	if err := p.checkText("approval", id, string(from), string(to), string(scope), by); err != nil {
		return false, err
	}
	tag, err := p.pool.Exec(ctx, `UPDATE approvals SET status = $1, scope = $2, decided_by = $3, decided = $4 WHERE id = $5 AND status = $6`,
		string(to), string(scope), by, at, id, string(from))
	if err != nil {
		return false, fmt.Errorf("state store %s: approval %s: %w", p.name, id, err)
	}
	return tag.RowsAffected() == 1, nil
}

// Grant remembers a session approval for a destination key.
func (p *Postgres) Grant(ctx context.Context, session, dest string, at int64) error {
	if err := p.checkText("grant", session, dest); err != nil {
		return err
	}
	if _, err := p.pool.Exec(ctx, `INSERT INTO approval_grants (session, dest, at) VALUES ($1, $2, $3)
		ON CONFLICT (session, dest) DO NOTHING`, session, dest, at); err != nil {
		return fmt.Errorf("state store %s: grant: %w", p.name, err)
	}
	return nil
}

// Granted reports whether the session has a grant for dest.
func (p *Postgres) Granted(ctx context.Context, session, dest string) (bool, error) {
	if err := p.checkText("grant", session, dest); err != nil {
		return false, err
	}
	var ok bool
	if err := p.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM approval_grants WHERE session = $1 AND dest = $2)`, session, dest).Scan(&ok); err != nil {
		return false, fmt.Errorf("state store %s: grant: %w", p.name, err)
	}
	return ok, nil
}

// SpendNonce records a nonce as used; false when it was used before. The
// primary key decides, so a nonce is spent once across every replica.
func (p *Postgres) SpendNonce(ctx context.Context, nonce string, expires int64) (bool, error) {
	if err := p.checkText("nonce", nonce); err != nil {
		return false, err
	}
	tag, err := p.pool.Exec(ctx, `INSERT INTO approval_nonces (nonce, expires) VALUES ($1, $2) ON CONFLICT (nonce) DO NOTHING`, nonce, expires)
	if err != nil {
		return false, fmt.Errorf("state store %s: nonce: %w", p.name, err)
	}
	return tag.RowsAffected() == 1, nil
}

// CountApprovals counts the session's requests that asked a person.
func (p *Postgres) CountApprovals(ctx context.Context, session string) (int, error) {
	if err := p.checkText("approvals", session); err != nil {
		return 0, err
	}
	var n int
	if err := p.pool.QueryRow(ctx, `SELECT count(*) FROM approvals WHERE session = $1 AND channel NOT IN ($2, $3)`,
		session, string(approval.Memory), string(approval.Repeat)).Scan(&n); err != nil {
		return 0, fmt.Errorf("state store %s: approvals: %w", p.name, err)
	}
	return n, nil
}

// AppendRecords stores records, in order, in one transaction.
func (p *Postgres) AppendRecords(ctx context.Context, recs []Rec) error {
	if len(recs) == 0 {
		return nil
	}
	b := &pgx.Batch{}
	for _, r := range recs {
		if r.Session == "" {
			return fmt.Errorf("state store %s: record: empty session key", p.name)
		}
		if err := p.checkText("record", r.Session, r.Kind, r.Server, r.Tool); err != nil {
			return err
		}
		body := r.Body
		if body == nil {
			body = []byte{}
		}
		b.Queue(`INSERT INTO records (session, at, kind, server, tool, body) VALUES ($1, $2, $3, $4, $5, $6)`,
			r.Session, r.At, r.Kind, r.Server, r.Tool, body)
	}
	if err := p.pool.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("state store %s: record: %w", p.name, err)
	}
	return nil
}

// Records calls fn for every record at or after since (Unix ms), of
// session when it is not "", in sequence order.
func (p *Postgres) Records(ctx context.Context, since int64, session string, fn func(Rec) error) error {
	if err := p.checkText("records", session); err != nil {
		return err
	}
	q := `SELECT seq, session, at, kind, server, tool, body FROM records WHERE at >= $1 ORDER BY seq`
	args := []any{since}
	if session != "" {
		q = `SELECT seq, session, at, kind, server, tool, body FROM records WHERE session = $1 AND at >= $2 ORDER BY seq`
		args = []any{session, since}
	}
	rows, err := p.pool.Query(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("state store %s: records: %w", p.name, err)
	}
	defer rows.Close()
	for rows.Next() {
		var r Rec
		if err := rows.Scan(&r.Seq, &r.Session, &r.At, &r.Kind, &r.Server, &r.Tool, &r.Body); err != nil {
			return fmt.Errorf("state store %s: records: %w", p.name, err)
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("state store %s: records: %w", p.name, err)
	}
	return nil
}

// Observations calls apply for each of session's observations, in
// sequence order: what a replay rebuilds the session from.
func (p *Postgres) Observations(ctx context.Context, session string, apply func(seq int64, o *flow.Observation)) error {
	if err := p.checkText("observations", session); err != nil {
		return err
	}
	return p.pull(ctx, session, 0, apply)
}

// PutPolicy stores the text of a policy under its hash, once.
func (p *Postgres) PutPolicy(ctx context.Context, hash, source string, text []byte, at time.Time) error {
	if err := p.checkText("policy", hash, source); err != nil {
		return err
	}
	if text == nil {
		text = []byte{}
	}
	if _, err := p.pool.Exec(ctx, `INSERT INTO policies (hash, source, text, at) VALUES ($1, $2, $3, $4) ON CONFLICT (hash) DO NOTHING`,
		hash, source, text, at.UnixMilli()); err != nil {
		return fmt.Errorf("state store %s: policy: %w", p.name, err)
	}
	return nil
}

// Policy returns the source and text of the policy stored under hash.
func (p *Postgres) Policy(ctx context.Context, hash string) (source string, text []byte, err error) {
	if err := p.checkText("policy", hash); err != nil {
		return "", nil, err
	}
	err = p.pool.QueryRow(ctx, `SELECT source, text FROM policies WHERE hash = $1`, hash).Scan(&source, &text)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil, fmt.Errorf("state store %s: no policy with hash %s is recorded", p.name, hash)
	}
	if err != nil {
		return "", nil, fmt.Errorf("state store %s: policy: %w", p.name, err)
	}
	return source, text, nil
}

// PruneRecords deletes the records of every session with no record since
// olderThan, and returns how many records it deleted.
func (p *Postgres) PruneRecords(ctx context.Context, olderThan time.Time) (int64, error) {
	tag, err := p.pool.Exec(ctx, `DELETE FROM records WHERE session IN
		(SELECT session FROM records GROUP BY session HAVING max(at) < $1)`, olderThan.UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("state store %s: prune records: %w", p.name, err)
	}
	return tag.RowsAffected(), nil
}

// AppendWritten records what a call wrote to the server identity while
// its session held private or untrusted data. Readers follow written
// entries by watermark, as mirrors follow observations, so appends to one
// identity serialise on its advisory transaction lock for the same reason
// (see Append).
func (p *Postgres) AppendWritten(ctx context.Context, identity string, o *flow.Observation) error {
	if err := p.checkText("written", identity); err != nil {
		return err
	}
	b := &pgx.Batch{}
	b.Queue(pgLockQuery, lockKey("weir/written", identity))
	b.Queue(`INSERT INTO written (identity, at, labels, prints, digests) VALUES ($1, $2, $3, $4, $5)`,
		identity, o.At, int64(o.Labels), packHashes(o.Prints), packHashes(o.Digests))
	b.Queue(`DELETE FROM written WHERE identity = $1 AND seq <= (
		SELECT seq FROM written WHERE identity = $1 ORDER BY seq DESC LIMIT 1 OFFSET $2)`, identity, MaxWritten)
	if err := p.pool.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("state store %s: written: %w", p.name, err)
	}
	return nil
}

// Written calls fn for each entry written to identity after seq, in order.
func (p *Postgres) Written(ctx context.Context, identity string, after int64, fn func(seq int64, o *flow.Observation)) error {
	if err := p.checkText("written", identity); err != nil {
		return err
	}
	rows, err := p.pool.Query(ctx, `SELECT seq, at, labels, prints, digests FROM written WHERE identity = $1 AND seq > $2 ORDER BY seq`, identity, after)
	if err != nil {
		return fmt.Errorf("state store %s: written: %w", p.name, err)
	}
	defer rows.Close()
	for rows.Next() {
		var seq, at, labels int64
		if err := rows.Scan(&seq, &at, &labels, nil, nil); err != nil {
			return fmt.Errorf("state store %s: written: %w", p.name, err)
		}
		raw := rows.RawValues()
		o := &flow.Observation{Tool: identity, At: at, Labels: flow.Labels(labels) & flow.Legs}
		if o.Prints, err = unpackHashes(raw[3]); err != nil {
			return fmt.Errorf("state store %s: written row %d: %w", p.name, seq, err)
		}
		if o.Digests, err = unpackHashes(raw[4]); err != nil {
			return fmt.Errorf("state store %s: written row %d: %w", p.name, seq, err)
		}
		fn(seq, o)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("state store %s: written: %w", p.name, err)
	}
	return nil
}

// PruneWritten drops written entries older than olderThan.
func (p *Postgres) PruneWritten(ctx context.Context, olderThan time.Time) error {
	if _, err := p.pool.Exec(ctx, `DELETE FROM written WHERE at < $1`, olderThan.UnixMilli()); err != nil {
		return fmt.Errorf("state store %s: prune written: %w", p.name, err)
	}
	return nil
}

// PinsVersion is [SQLite.PinsVersion].
func (p *Postgres) PinsVersion(ctx context.Context) (v int64, err error) {
	if err = p.pool.QueryRow(ctx, pinsVersionQuery).Scan(&v); err != nil {
		return 0, fmt.Errorf("reading the pins version from %s: %w", p.name, err)
	}
	return v, nil
}
