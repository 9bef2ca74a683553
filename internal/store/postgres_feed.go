package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// feedChannel is the LISTEN/NOTIFY channel appends announce themselves on.
const feedChannel = "weir_observations"

// The change feed: a wake-up, never the truth. Append notifies
// feedChannel with the session's hash in its transaction; one connection
// per store listens. Sync may skip its query for a session only when the
// feed proves nothing can have been appended to it since this store's
// last query of it. The proof (see the package documentation) rests on
// three facts:
//
//   - the listener was confirmed listening (LISTEN had returned) before
//     that query began, on the connection that is still the listener now
//     (epoch unchanged): a transaction that commits after LISTEN took
//     effect notifies it, and a reconnect may have missed some;
//   - every notification of a commit acknowledged before this Sync began
//     has been read: a barrier (a trivial query on the listener connection)
//     that began after Sync did has completed. PostgreSQL signals the
//     listeners of a commit before it acknowledges the commit, and a
//     listening backend sends the notifications it has pending before the
//     ReadyForQuery of the next command, so they are read (and counted by
//     the OnNotification handler) before the barrier returns;
//   - no notification for the session's hash was counted after the mark
//     taken before that query.
//
// Anything else (the listener down, reconnecting, or not yet listening;
// the mirror at another watermark; a barrier that failed; a notification
// that did not parse; the bookkeeping's bound reached) makes Sync query.
//
// The Sync that needs a barrier runs it itself, on the listener
// connection, when none is running; when one is, it waits for that one to
// end (it began too early to count) and then runs or waits for the next.
// So barriers are shared: one serves every Sync that was waiting when it
// began, and many concurrent syncs cost one trivial round trip between
// them, not one indexed query each. Between barriers nothing reads the
// connection; notifications wait in its socket until the next barrier,
// which a background loop also runs every feedIdle, to drain them and to
// notice a dead connection.
type feed struct {
	cfg  *pgconn.Config
	name string

	mu    sync.Mutex
	epoch uint64 // bumped when a new connection is confirmed listening
	live  bool   // the connection of epoch is listening and healthy
	count uint64 // notifications counted, on any connection
	floor uint64 // every session counts as notified at floor
	last  map[string]uint64
	marks map[string]feedMark // session → state after its last query

	conn     *pgconn.PgConn // the listener; used only by a barrier's runner
	pid      uint32         // its backend
	started  uint64         // barriers begun
	passed   uint64         // the latest barrier that succeeded
	failed   uint64         // the latest barrier that failed
	running  bool           // a barrier is running
	finished chan struct{}  // closed when the running barrier ends
	broken   chan struct{}  // a barrier failed: the loop must reconnect

	ctx    context.Context // the feed's life; barriers run under it
	cancel context.CancelFunc
	done   chan struct{}
}

// feedMark is what a Sync's query left: the mirror's watermark after it,
// and the feed's epoch and count before it began.
type feedMark struct {
	watermark int64
	epoch     uint64
	count     uint64
	ok        bool // the listener was live when the mark was taken
}

// Bounds on the feed's bookkeeping; past them it forgets, which only
// makes Syncs query.
const (
	feedMaxSessions = 50_000
	feedIdle        = time.Second           // barrier at least this often, to drain and to notice a dead connection
	feedRetryMin    = 50 * time.Millisecond // first wait before a reconnect
	feedRetryMax    = 5 * time.Second       // longest wait between reconnects
	feedBarrierMax  = 10 * time.Second      // a barrier slower than this counts as a dead connection
)

func startFeed(cfg *pgconn.Config, name string) *feed {
	ctx, cancel := context.WithCancel(context.Background())
	f := &feed{
		cfg: cfg, name: name,
		last: map[string]uint64{}, marks: map[string]feedMark{},
		broken: make(chan struct{}, 1),
		ctx:    ctx, cancel: cancel, done: make(chan struct{}),
	}
	cfg.OnNotification = f.notified
	go f.run()
	return f
}

func (f *feed) stop() {
	f.cancel()
	<-f.done
}

// notified counts one notification; it runs on a barrier's runner, inside
// the barrier's read.
func (f *feed) notified(_ *pgconn.PgConn, n *pgconn.Notification) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.count++
	if n.Channel != feedChannel {
		return
	}
	if _, err := strconv.ParseUint(n.Payload, 16, 64); err != nil {
		// Not one of ours: it could stand for any session.
		f.floor = f.count
		return
	}
	f.changedLocked(n.Payload)
}

// changed records that session was appended to by this store, so that its
// next Sync queries at once instead of waiting for a barrier to say so.
func (f *feed) changed(session string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.count++
	f.changedLocked(feedPayload(session))
}

func (f *feed) changedLocked(key string) {
	if len(f.last) >= feedMaxSessions {
		clear(f.last)
		f.floor = f.count
	}
	f.last[key] = f.count
}

// mark is taken before a Sync's query.
func (f *feed) mark() feedMark {
	f.mu.Lock()
	defer f.mu.Unlock()
	return feedMark{epoch: f.epoch, count: f.count, ok: f.live}
}

// clean records that a query begun after m left the session's mirror at
// watermark.
func (f *feed) clean(session string, watermark int64, m feedMark) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !m.ok {
		delete(f.marks, session)
		return
	}
	if len(f.marks) >= feedMaxSessions {
		clear(f.marks)
	}
	m.watermark = watermark
	f.marks[session] = m
}

// unchanged reports whether nothing can have been appended to session
// since the query that left a mirror at watermark; false whenever that is
// not proven.
func (f *feed) unchanged(ctx context.Context, session string, watermark int64) (bool, error) {
	key := feedPayload(session)
	f.mu.Lock()
	m, ok := f.marks[session]
	if !ok || !f.live || m.epoch != f.epoch || m.watermark != watermark || f.floor > m.count || f.last[key] > m.count {
		// Unproven, or already known changed: query, no barrier.
		f.mu.Unlock()
		return false, nil
	}
	f.mu.Unlock()
	passed, err := f.await(ctx)
	if err != nil || !passed {
		return false, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.live && m.epoch == f.epoch && f.floor <= m.count && f.last[key] <= m.count, nil
}

// await waits for a barrier that begins after it was called to end, and
// reports whether it succeeded; it runs that barrier itself when none is
// running.
func (f *feed) await(ctx context.Context) (bool, error) {
	f.mu.Lock()
	target := f.started + 1 // the first barrier that counts
	for {
		switch {
		case f.passed >= target:
			f.mu.Unlock()
			return true, nil
		case f.failed >= target || !f.live:
			f.mu.Unlock()
			return false, nil
		case !f.running:
			f.running = true
			f.started++
			seq, conn, pid := f.started, f.conn, f.pid
			done := make(chan struct{})
			f.finished = done
			f.mu.Unlock()
			// Under the feed's context, not the caller's: a caller that
			// gives up must not cut the shared connection mid-reply.
			err := f.barrier(f.ctx, conn, pid)
			f.mu.Lock()
			f.running = false
			close(done)
			if err == nil {
				f.passed = seq
				continue
			}
			f.failed = seq
			if f.live {
				f.live, f.conn = false, nil
				select {
				case f.broken <- struct{}{}:
				default:
				}
			}
			continue
		}
		done := f.finished
		f.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
			return false, ctx.Err()
		}
		f.mu.Lock()
	}
}

// run keeps a listening connection until the feed stops: it connects,
// listens, runs the idle barriers, and reconnects when a barrier fails.
func (f *feed) run() {
	defer close(f.done)
	retry, warned := feedRetryMin, false
	for f.ctx.Err() == nil {
		listened, err := f.serve()
		if f.ctx.Err() != nil {
			return
		}
		// Say so once per outage, not once per attempt.
		if listened {
			retry, warned = feedRetryMin, false
		}
		if !warned {
			slog.Warn("state store: change feed not listening; syncs query every time until it is", "store", f.name, "err", err)
			warned = true
		}
		select {
		case <-f.ctx.Done():
			return
		case <-time.After(retry):
		}
		retry = min(2*retry, feedRetryMax)
	}
}

// serve connects and listens, then runs idle barriers until one fails or
// the feed stops; listened says whether it got as far as listening.
func (f *feed) serve() (listened bool, err error) {
	cctx, cancel := context.WithTimeout(f.ctx, feedBarrierMax)
	conn, err := pgconn.ConnectConfig(cctx, f.cfg)
	cancel()
	if err != nil {
		return false, err
	}
	defer conn.Close(context.Background())
	if err := f.exec(f.ctx, conn, "LISTEN "+feedChannel); err != nil {
		return false, err
	}
	if err := f.checkListening(f.ctx, conn); err != nil {
		return false, err
	}
	pid := conn.PID()
	f.mu.Lock()
	select {
	case <-f.broken: // left from the previous connection
	default:
	}
	f.conn, f.pid = conn, pid
	f.epoch++
	f.live = true
	f.mu.Unlock()
	idle := time.NewTicker(feedIdle)
	defer idle.Stop()
	for {
		select {
		case <-f.ctx.Done():
			f.detach()
			return true, f.ctx.Err()
		case <-f.broken:
			f.detach()
			return true, errors.New("a barrier on the listener connection failed")
		case <-idle.C:
			f.await(f.ctx)
		}
	}
}

// detach takes the connection from the feed and waits for a running
// barrier to be done with it, so that serve can close it.
func (f *feed) detach() {
	f.mu.Lock()
	f.live, f.conn = false, nil
	for f.running {
		done := f.finished
		f.mu.Unlock()
		<-done
		f.mu.Lock()
	}
	f.mu.Unlock()
}

// The feed must talk to one backend of its own: behind a pooler that
// lends server connections per transaction (pgbouncer's transaction mode),
// a barrier could run on a backend that never listened, and the listening
// backend could hand notifications to another client. So the listener
// checks, once after LISTEN, that the backend it talks to is the one the
// connection's startup named (a pooler names its own) and that it listens,
// and every barrier checks it ran on that backend. Behind such a pooler the
// feed never goes live, and every Sync queries.
const (
	listeningQuery = `SELECT pg_backend_pid(), EXISTS (SELECT 1 FROM pg_listening_channels() AS c WHERE c = '` + feedChannel + `')`
	barrierQuery   = `SELECT pg_backend_pid()`
)

// checkListening runs listeningQuery on conn.
func (f *feed) checkListening(ctx context.Context, conn *pgconn.PgConn) error {
	row, err := f.row(ctx, conn, listeningQuery, 2)
	if err != nil {
		return err
	}
	if err := samePID(row[0], conn.PID()); err != nil {
		return err
	}
	if string(row[1]) != "t" {
		return fmt.Errorf("listener: backend %d does not listen on %s (a pooler in transaction mode?)", conn.PID(), feedChannel)
	}
	return nil
}

// barrier runs barrierQuery on conn, which must answer from backend want.
func (f *feed) barrier(ctx context.Context, conn *pgconn.PgConn, want uint32) error {
	row, err := f.row(ctx, conn, barrierQuery, 1)
	if err != nil {
		return err
	}
	return samePID(row[0], want)
}

func samePID(text []byte, want uint32) error {
	pid, err := strconv.ParseUint(string(text), 10, 32)
	if err != nil {
		return fmt.Errorf("listener: backend pid %q: %w", text, err)
	}
	if uint32(pid) != want {
		return fmt.Errorf("listener: answered by backend %d, not the connection's backend %d (a pooler in transaction mode?)", pid, want)
	}
	return nil
}

// row runs a one-row query of n columns in the simple protocol.
func (f *feed) row(ctx context.Context, conn *pgconn.PgConn, sql string, n int) ([][]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, feedBarrierMax)
	defer cancel()
	res, err := conn.Exec(ctx, sql).ReadAll()
	if err != nil {
		return nil, err
	}
	if len(res) != 1 || len(res[0].Rows) != 1 || len(res[0].Rows[0]) != n {
		return nil, errors.New("listener: unexpected result")
	}
	return res[0].Rows[0], nil
}

func (f *feed) exec(ctx context.Context, conn *pgconn.PgConn, sql string) error {
	ctx, cancel := context.WithTimeout(ctx, feedBarrierMax)
	defer cancel()
	_, err := conn.Exec(ctx, sql).ReadAll()
	if err == nil && conn.IsClosed() {
		err = errors.New("listener connection closed")
	}
	return err
}

// listening reports whether the feed is live; for tests.
func (f *feed) listening() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.live
}
