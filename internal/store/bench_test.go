package store

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/weir-sec/weir/internal/flow"
	"github.com/weir-sec/weir/internal/pin"
)

// BenchmarkAppendSync times the store's share of the decision path on
// both stores, side by side (PostgreSQL on loopback, from the test
// cluster, fsync off as SQLite's synchronous=NORMAL does not wait for the
// disk either):
//
//   - append: one small observation (a tool result).
//   - append-parallel: 16 goroutines appending at once, each to its own
//     session (SQLite has one writer at a time; PostgreSQL serialises the
//     commits of notifying transactions, see the package documentation).
//   - append+sync: one handle appends, another (a second proxy, or a
//     second replica) syncs it into its mirror, as the next decision on
//     the other side does.
//   - append+sync-own: one handle appends and syncs, as a proxy persists
//     a result's observation and brings its own mirror up to date.
//   - sync-idle: the common case before a decision, nothing new; on
//     PostgreSQL the change feed's barrier replaces the query.
//   - sync-idle-nofeed (PostgreSQL): the same with the watermark query
//     every time.
//   - sync-idle-parallel: 16 goroutines, each its own session, syncing
//     with nothing new at once; on PostgreSQL they share barriers.
func BenchmarkAppendSync(b *testing.B) { benchBackends(b, benchmarkAppendSync) }

func benchmarkAppendSync(b *testing.B, open opener) {
	ctx := context.Background()
	small := func(i int) *flow.Observation {
		h := uint64(i) << 8
		return &flow.Observation{Tool: "web/fetch", Labels: flow.Untrusted, Prints: []uint64{h | 1, h | 2, h | 3, h | 4}, Digests: []uint64{h | 5}}
	}
	b.Run("append", func(b *testing.B) {
		s := open(b)
		i := 0
		for b.Loop() {
			i++
			if _, err := s.Append(ctx, "A", small(i)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("append-parallel", func(b *testing.B) {
		s := open(b)
		var next atomic.Int32
		b.SetParallelism(8)
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			session := "P" + strconv.Itoa(int(next.Add(1)))
			i := 0
			for pb.Next() {
				i++
				if _, err := s.Append(ctx, session, small(i)); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	appendSync := func(b *testing.B, w *backend, r State) {
		var m flow.Session
		i := 0
		for b.Loop() {
			i++
			seq, err := w.Append(ctx, "A", small(i))
			if err != nil {
				b.Fatal(err)
			}
			if err := r.Sync(ctx, "A", &m); err != nil {
				b.Fatal(err)
			}
			if m.Watermark != seq {
				b.Fatalf("mirror at %d after %d", m.Watermark, seq)
			}
		}
	}
	b.Run("append+sync", func(b *testing.B) {
		w := open(b)
		appendSync(b, w, w.reopen(b))
	})
	b.Run("append+sync-own", func(b *testing.B) {
		w := open(b)
		appendSync(b, w, w)
	})
	if s := open(b); s.kind == "postgres" {
		b.Run("append+sync-nofeed", func(b *testing.B) {
			r, err := openPostgres(ctx, s.dsn, false)
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			appendSync(b, s, r)
		})
	}
	idle := func(b *testing.B, s State) {
		for i := range 100 {
			if _, err := s.Append(ctx, "A", small(i)); err != nil {
				b.Fatal(err)
			}
		}
		var m flow.Session
		if err := s.Sync(ctx, "A", &m); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if err := s.Sync(ctx, "A", &m); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("sync-idle", func(b *testing.B) {
		s := open(b)
		if p, ok := s.State.(*Postgres); ok {
			waitListening(b, p)
		}
		idle(b, s)
	})
	if s := open(b); s.kind == "postgres" {
		b.Run("sync-idle-nofeed", func(b *testing.B) {
			p, err := openPostgres(ctx, s.dsn, false)
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close()
			idle(b, p)
		})
	}
	parallel := func(b *testing.B, s State) {
		var next atomic.Int32
		b.SetParallelism(8)
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			session := "P" + strconv.Itoa(int(next.Add(1)))
			if _, err := s.Append(ctx, session, small(1)); err != nil {
				b.Error(err)
				return
			}
			var m flow.Session
			for pb.Next() {
				if err := s.Sync(ctx, session, &m); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	b.Run("sync-idle-parallel", func(b *testing.B) {
		s := open(b)
		if p, ok := s.State.(*Postgres); ok {
			waitListening(b, p)
		}
		parallel(b, s)
	})
	if s := open(b); s.kind == "postgres" {
		b.Run("sync-idle-parallel-nofeed", func(b *testing.B) {
			p, err := openPostgres(ctx, s.dsn, false)
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close()
			parallel(b, p)
		})
	}
}

// BenchmarkPins times what a tools/list reads of the pins, on both stores:
// one server identity's pins and every server's (shadowing), with 20
// servers of 50 tools pinned and nothing written since the last read.
func BenchmarkPins(b *testing.B) { benchBackends(b, benchmarkPins) }

func benchmarkPins(b *testing.B, open opener) {
	ctx := context.Background()
	s := open(b)
	for i := range 20 {
		server := "server-" + strconv.Itoa(i)
		for j := range 50 {
			p := pin.Pin{Identity: server, Server: server, Tool: "tool_" + strconv.Itoa(j), Hash: "h", Definition: []byte(`{"name":"x","description":"a definition of a few hundred bytes stands in here"}`)}
			if err := s.PutPin(ctx, p); err != nil {
				b.Fatal(err)
			}
		}
	}
	for b.Loop() {
		if own, err := s.Pins(ctx, "server-3"); err != nil || len(own) != 50 {
			b.Fatal(len(own), err)
		}
		if all, err := s.AllPins(ctx, ""); err != nil || len(all) != 1000 {
			b.Fatal(len(all), err)
		}
	}
}
