package relay

import (
	"context"
	"time"

	"github.com/weir-sec/weir/internal/flow"
	"github.com/weir-sec/weir/internal/store"
)

// Joining a long session. A proxy that starts in a session other proxies
// have recorded much in (a server added to a running client, a proxy
// restarted) used to read every fingerprint before its first decision:
// seconds, for 20,000 results of 4 KB. Instead it reads the session's
// outline first, each observation's tool and labels and none of its
// hashes, and decides from that while it reads the hashes in the
// background. A source it knows only the labels of is flow.Unloaded,
// which widens taint as eviction does: a sink call in a session that
// holds private data is refused as `strict` would refuse it, saying to
// retry in a few seconds, until the hashes are in. Nothing is allowed for
// want of them.

// joinBytes is the size of a session (bytes of hashes, as session.max_bytes
// counts them) from which a proxy joins it lazily: below it the whole
// session is read in tens of milliseconds, before the first decision.
const joinBytes = 4 << 20

// joiner is a store a proxy can join a long session from.
type joiner interface {
	SessionBytes(ctx context.Context, session string) (int64, error)
	Outline(ctx context.Context, session string, apply func(seq int64, o *flow.Observation)) error
}

var (
	_ joiner = (*store.SQLite)(nil)
	_ joiner = (*store.Postgres)(nil)
)

// join reads a long session's outline into the empty mirror and returns
// what reads the session whole, for Run to run in the background; nil
// when the session is small or the store cannot outline it, and the first
// decision reads it whole as for any session.
func (r *Relay) join(ctx context.Context) func(context.Context) {
	j, ok := r.opts.Store.(joiner)
	if !ok {
		return nil
	}
	n, err := j.SessionBytes(ctx, r.opts.Session)
	if err != nil || n < joinBytes {
		return nil
	}
	start := time.Now()
	r.mirrorMu.Lock()
	defer r.mirrorMu.Unlock()
	err = j.Outline(ctx, r.opts.Session, func(seq int64, o *flow.Observation) {
		o.Labels |= flow.Unloaded
		r.mirror.Apply(seq, o)
	})
	if err != nil {
		r.mirror = flow.Session{}
		r.log.Warn("reading the outline of a long session failed; its first decision reads it whole", "err", err)
		return nil
	}
	r.log.Info("joined a long session: deciding from its outline while its fingerprints are read",
		"results", len(r.mirror.Sources), "bytes", n, "outline", time.Since(start))
	return r.load
}

// load reads the session whole into a new mirror and puts it in the
// outline's place, holding the mirror's lock only to bring it up to date
// with what arrived meanwhile. A store that fails is tried again, less
// and less often; until it answers, decisions go on from the outline.
func (r *Relay) load(ctx context.Context) {
	start := time.Now()
	for wait := time.Second; ; wait = min(2*wait, 30*time.Second) {
		full := flow.Session{MaxBytes: r.policy.Load().SessionMaxBytes}
		err := r.opts.Store.Sync(ctx, r.opts.Session, &full)
		if err == nil {
			r.mirrorMu.Lock()
			full.MaxBytes = r.policy.Load().SessionMaxBytes
			if err = r.opts.Store.Sync(ctx, r.opts.Session, &full); err == nil {
				r.mirror = full
			}
			r.mirrorMu.Unlock()
		}
		if err == nil {
			r.log.Info("read the fingerprints of the joined session", "results", len(full.Sources), "took", time.Since(start))
			return
		}
		if ctx.Err() != nil {
			return
		}
		r.log.Warn("reading the joined session failed; sink calls stay judged from its outline", "err", err, "retry in", wait)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}
