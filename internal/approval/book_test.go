package approval_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weir-sec/weir/internal/approval"
	"github.com/weir-sec/weir/internal/fingerprint"
	"github.com/weir-sec/weir/internal/store"
)

var (
	installKey = []byte("weir-test-install-key-0123456789")
	otherKey   = []byte("weir-other-install-key-987654321")
	t0         = time.UnixMilli(1_800_000_000_000)
	ctx        = context.Background()
)

// backend is a store the book runs on; again opens another handle on the
// same store, as a second proxy of the machine would.
type backend struct {
	name string
	open func(t *testing.T) (s approval.Store, again func() approval.Store)
}

var backends = []backend{
	{"memory", func(t *testing.T) (approval.Store, func() approval.Store) {
		m := store.NewMemory()
		return m, func() approval.Store { return m }
	}},
	{"sqlite", func(t *testing.T) (approval.Store, func() approval.Store) {
		path := filepath.Join(t.TempDir(), "state.db")
		open := func() approval.Store {
			s, err := store.OpenSQLite(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		}
		return open(), open
	}},
}

type fixture struct {
	book  *approval.Book
	again func() approval.Store
	h     *fingerprint.Hasher
}

// call is a tools/call as the relay escalates it.
type call struct{ server, tool, args string }

var (
	mailAlice   = call{"mail", "send_email", `{"to":"alice@example.com","subject":"lunch","body":"noon?"}`}
	mailAlice2  = call{"mail", "send_email", `{"to":"Alice@Example.com","subject":"re: lunch","body":"or one?"}`}
	mailBob     = call{"mail", "send_email", `{"to":"bob@example.com","subject":"lunch","body":"noon?"}`}
	mailBoth    = call{"mail", "send_email", `{"to":["alice@example.com","jay@evil.example"],"subject":"lunch","body":"noon?"}`}
	payRent     = call{"bank", "send_money", `{"recipient":"GB29NWBK60161331926819","amount":1200,"subject":"Rent"}`}
	fetchDocs   = call{"web", "fetch", `{"url":"https://docs.example.com/a"}`}
	fetchDocs2  = call{"web", "fetch", `{"url":"https://docs.example.com/b"}`}
	fetchOther  = call{"web", "fetch", `{"url":"https://evil.example/a"}`}
	writeBashrc = call{"files", "write_file", `{"path":"/home/u/.bashrc","content":"alias ll='ls -l'"}`}
)

func (f *fixture) digest(t *testing.T, c call) string {
	t.Helper()
	d, err := approval.Digest(f.h, c.server, c.tool, json.RawMessage(c.args))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func (f *fixture) dest(c call) string {
	return approval.DestKey(f.h, c.server, c.tool, approval.Destinations(approval.Facts(json.RawMessage(c.args))))
}

// open records a request for c as the relay does: scope says whether it
// may be remembered for the session.
func (f *fixture) open(t *testing.T, session string, c call, ch approval.Channel, now time.Time, scope bool) approval.Row {
	t.Helper()
	return openWith(t, f.book, f, session, c, ch, now, scope)
}

func openWith(t *testing.T, b *approval.Book, f *fixture, session string, c call, ch approval.Channel, now time.Time, scope bool) approval.Row {
	t.Helper()
	row := approval.Row{Session: session, Server: c.server, Tool: c.tool, Digest: f.digest(t, c), Rule: "flow.integrity",
		Created: now.UnixMilli(), Expires: now.Add(approval.DefaultTTL).UnixMilli(), Channel: ch}
	if scope {
		row.Dest = f.dest(c)
	}
	d := approval.Details{Facts: approval.Facts(json.RawMessage(c.args)), Reason: "untrusted text may be steering " + c.tool,
		Sources: []string{"web/fetch"}, SessionScope: scope}
	if !scope {
		d.Paths = []string{"$.to"}
	}
	r, err := b.Open(ctx, row, d)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return r
}

func (f *fixture) consult(t *testing.T, session string, c call, scope bool, now time.Time) approval.Prior {
	t.Helper()
	dest := ""
	if scope {
		dest = f.dest(c)
	}
	p, err := f.book.Consult(ctx, session, f.digest(t, c), dest, now)
	if err != nil {
		t.Fatalf("Consult: %v", err)
	}
	return p
}

func (f *fixture) status(t *testing.T, id string) approval.Row {
	t.Helper()
	r, err := f.book.Store.Approval(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (f *fixture) decide(t *testing.T, id string, approve, session bool, now time.Time) approval.Request {
	t.Helper()
	r, err := f.book.Decide(ctx, id, approve, session, "cli", now)
	if err != nil {
		t.Fatalf("Decide(%s, approve %v, session %v): %v", id, approve, session, err)
	}
	return r
}

func (f *fixture) settle(t *testing.T, r approval.Row, a approval.Answer, now time.Time) {
	t.Helper()
	if err := f.book.Settle(ctx, r, a, now); err != nil {
		t.Fatalf("Settle(%s, %s): %v", r.ID, a, err)
	}
}

func wantPrior(t *testing.T, got, want approval.Prior) {
	t.Helper()
	if got != want {
		t.Fatalf("Consult = %+v, want %+v", got, want)
	}
}

var nothing = approval.Prior{}

// TestBook runs one table of the book's behaviour against the in-memory
// store and a real SQLite store.
func TestBook(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, f *fixture)
	}{
		{"open records a pending request", func(t *testing.T, f *fixture) {
			r := f.open(t, "s1", mailAlice, approval.CLI, t0, true)
			if !approval.ValidID(r.ID) || r.Status != approval.StatusPending || len(r.Sealed) == 0 {
				t.Fatalf("Open = %+v", r)
			}
			if strings.Contains(string(r.Sealed), "alice") || strings.Contains(string(r.Sealed), "untrusted") {
				t.Error("the stored details are readable without the key")
			}
			got := f.status(t, r.ID)
			if got.Digest != f.digest(t, mailAlice) || got.Dest != f.dest(mailAlice) || got.Channel != approval.CLI || got.Status != approval.StatusPending ||
				got.Created != t0.UnixMilli() || got.Expires != t0.Add(approval.DefaultTTL).UnixMilli() || got.Session != "s1" {
				t.Errorf("stored %+v", got)
			}
		}},
		{"open reuses a pending request for the same session and call", func(t *testing.T, f *fixture) {
			r1 := f.open(t, "s1", mailAlice, approval.CLI, t0, true)
			r2 := f.open(t, "s1", mailAlice, approval.CLI, t0.Add(30*time.Second), true)
			if r2.ID != r1.ID || r2.Created != r1.Created {
				t.Errorf("a retry before the answer opened %s (created %d), want %s (created %d)", r2.ID, r2.Created, r1.ID, r1.Created)
			}
			if r := f.open(t, "s2", mailAlice, approval.CLI, t0.Add(31*time.Second), true); r.ID == r1.ID {
				t.Error("another session's call reuses the request")
			}
			if r := f.open(t, "s1", mailBob, approval.CLI, t0.Add(32*time.Second), true); r.ID == r1.ID {
				t.Error("another call reuses the request")
			}
			if r := f.open(t, "s1", mailAlice2, approval.CLI, t0.Add(33*time.Second), true); r.ID == r1.ID {
				t.Error("a call to the same recipient with other arguments reuses the request")
			}
			reqs, err := f.book.List(ctx, "s1", t0.Add(time.Minute))
			if err != nil || len(reqs) != 3 {
				t.Errorf("List = %d requests, %v; want 3", len(reqs), err)
			}
		}},
		{"open after a decision or after expiry asks anew", func(t *testing.T, f *fixture) {
			r1 := f.open(t, "s1", mailAlice, approval.CLI, t0, true)
			f.decide(t, r1.ID, false, false, t0.Add(time.Second))
			r2 := f.open(t, "s1", mailAlice, approval.Elicitation, t0.Add(2*time.Second), true)
			if r2.ID == r1.ID {
				t.Fatal("a refused request was reopened")
			}
			f.settle(t, r2, approval.Approved, t0.Add(3*time.Second))
			if r3 := f.open(t, "s1", mailAlice, approval.Elicitation, t0.Add(4*time.Second), true); r3.ID == r2.ID {
				t.Fatal("a spent request was reopened")
			}
			p1 := f.open(t, "s1", payRent, approval.CLI, t0, true)
			if p2 := f.open(t, "s1", payRent, approval.CLI, t0.Add(approval.DefaultTTL), true); p2.ID == p1.ID {
				t.Fatal("an expired request was reopened")
			}
		}},
		{"consult with nothing known asks", func(t *testing.T, f *fixture) {
			wantPrior(t, f.consult(t, "s1", mailAlice, true, t0), nothing)
			wantPrior(t, f.consult(t, "s1", mailAlice, false, t0), nothing)
		}},
		{"consult: a pending request is no answer", func(t *testing.T, f *fixture) {
			r := f.open(t, "s1", mailAlice, approval.Elicitation, t0, true)
			wantPrior(t, f.consult(t, "s1", mailAlice, true, t0.Add(time.Second)), nothing)
			for _, a := range []approval.Answer{approval.Pending, ""} {
				f.settle(t, r, a, t0.Add(2*time.Second))
				if got := f.status(t, r.ID); got.Status != approval.StatusPending {
					t.Errorf("after %q the request is %s", a, got.Status)
				}
				wantPrior(t, f.consult(t, "s1", mailAlice, true, t0.Add(3*time.Second)), nothing)
			}
		}},
		{"consult: a question nobody answered is no answer, and the next call is a new question", func(t *testing.T, f *fixture) {
			for i, a := range []approval.Answer{approval.TimedOut, approval.Failed, approval.Gone} {
				session := "s" + string(rune('a'+i))
				r := f.open(t, session, mailAlice, approval.Elicitation, t0, true)
				f.settle(t, r, a, t0.Add(approval.DefaultTimeout))
				if got := f.status(t, r.ID); got.Status != approval.StatusUnanswered {
					t.Errorf("after %s the request is %s, want %s", a, got.Status, approval.StatusUnanswered)
				}
				wantPrior(t, f.consult(t, session, mailAlice, true, t0.Add(approval.DefaultTimeout+time.Second)), nothing)
				next := f.open(t, session, mailAlice, approval.Elicitation, t0.Add(approval.DefaultTimeout+time.Second), true)
				if next.ID == r.ID {
					t.Errorf("after %s the next identical call reuses the request", a)
				}
				if n, err := f.book.Store.CountApprovals(ctx, session); err != nil || n != 2 {
					t.Errorf("after %s and a new question: %d questions counted (%v), want 2", a, n, err)
				}
				if _, err := f.book.Decide(ctx, r.ID, true, false, "cli", t0.Add(approval.DefaultTimeout+time.Second)); !errors.Is(err, approval.ErrDecided) {
					t.Errorf("weir approve of a question that went unanswered = %v, want ErrDecided", err)
				}
			}
		}},
		{"consult: a session grant answers approved_session via memory", func(t *testing.T, f *fixture) {
			r := f.open(t, "s1", mailAlice, approval.Elicitation, t0, true)
			f.settle(t, r, approval.ApprovedSession, t0.Add(5*time.Second))
			if got := f.status(t, r.ID); got.Status != approval.StatusUsed || got.Scope != approval.Session || got.By != string(approval.Elicitation) {
				t.Errorf("after approve_session the request is %+v", got)
			}
			grant := approval.Prior{Answer: approval.ApprovedSession, Channel: approval.Memory}
			wantPrior(t, f.consult(t, "s1", mailAlice, true, t0.Add(time.Minute)), grant)
			wantPrior(t, f.consult(t, "s1", mailAlice2, true, t0.Add(time.Minute)), grant) // same recipient, other words
			wantPrior(t, f.consult(t, "s1", mailAlice, true, t0.Add(24*time.Hour)), grant) // for the rest of the session
			wantPrior(t, f.consult(t, "s1", mailBob, true, t0.Add(time.Minute)), nothing)
			wantPrior(t, f.consult(t, "s1", mailBoth, true, t0.Add(time.Minute)), nothing) // one more recipient
			wantPrior(t, f.consult(t, "s2", mailAlice, true, t0.Add(time.Minute)), nothing)
			// A call whose arguments carry untrusted values is never remembered.
			wantPrior(t, f.consult(t, "s1", mailAlice2, false, t0.Add(time.Minute)), nothing)

			h := f.open(t, "s1", fetchDocs, approval.InputRequired, t0, true)
			f.settle(t, h, approval.ApprovedSession, t0.Add(time.Second))
			wantPrior(t, f.consult(t, "s1", fetchDocs2, true, t0.Add(time.Minute)), grant)
			wantPrior(t, f.consult(t, "s1", fetchOther, true, t0.Add(time.Minute)), nothing)
		}},
		{"consult: an approval out of band is spent once", func(t *testing.T, f *fixture) {
			r := f.open(t, "s1", mailAlice, approval.CLI, t0, true)
			req := f.decide(t, r.ID, true, false, t0.Add(30*time.Second))
			if req.Status != approval.StatusApproved || req.Scope != approval.Once || req.By != "cli" || req.Reason == "" {
				t.Errorf("Decide = %+v", req)
			}
			wantPrior(t, f.consult(t, "s1", mailAlice, true, t0.Add(40*time.Second)),
				approval.Prior{Answer: approval.Approved, Channel: approval.CLI, ID: r.ID, Age: 10 * time.Second})
			wantPrior(t, f.consult(t, "s1", mailAlice, true, t0.Add(41*time.Second)), nothing)
			if got := f.status(t, r.ID); got.Status != approval.StatusUsed {
				t.Errorf("the spent approval is %s", got.Status)
			}
			// Once: no grant for the destination.
			wantPrior(t, f.consult(t, "s1", mailAlice2, true, t0.Add(42*time.Second)), nothing)
			// Not another session's.
			o := f.open(t, "s1", mailBob, approval.CLI, t0, true)
			f.decide(t, o.ID, true, false, t0.Add(time.Second))
			wantPrior(t, f.consult(t, "s2", mailBob, true, t0.Add(2*time.Second)), nothing)
			if got := f.status(t, o.ID); got.Status != approval.StatusApproved {
				t.Errorf("another session's consult spent the approval: %s", got.Status)
			}
		}},
		{"consult: an approval out of band for the session becomes a grant", func(t *testing.T, f *fixture) {
			r := f.open(t, "s1", mailAlice, approval.CLI, t0, true)
			if req := f.decide(t, r.ID, true, true, t0.Add(time.Second)); req.Scope != approval.Session {
				t.Errorf("Decide --session = %+v", req)
			}
			wantPrior(t, f.consult(t, "s1", mailAlice, true, t0.Add(2*time.Second)),
				approval.Prior{Answer: approval.Approved, Channel: approval.CLI, ID: r.ID, Age: time.Second})
			wantPrior(t, f.consult(t, "s1", mailAlice2, true, t0.Add(3*time.Second)), approval.Prior{Answer: approval.ApprovedSession, Channel: approval.Memory})
			wantPrior(t, f.consult(t, "s1", mailBob, true, t0.Add(3*time.Second)), nothing)
		}},
		{"consult: a denial with weir deny stands until the request expires", func(t *testing.T, f *fixture) {
			r := f.open(t, "s1", mailAlice, approval.CLI, t0, true)
			f.decide(t, r.ID, false, false, t0.Add(time.Minute))
			if got := f.status(t, r.ID); got.Status != approval.StatusDenied {
				t.Fatalf("denied request is %s", got.Status)
			}
			denied := func(age time.Duration) approval.Prior {
				return approval.Prior{Answer: approval.Declined, Channel: approval.CLI, ID: r.ID, Age: age}
			}
			wantPrior(t, f.consult(t, "s1", mailAlice, true, t0.Add(time.Minute)), denied(0))
			wantPrior(t, f.consult(t, "s1", mailAlice, true, t0.Add(time.Minute+approval.RepeatWindow+time.Second)), denied(approval.RepeatWindow+time.Second))
			last := t0.Add(approval.DefaultTTL - time.Millisecond)
			wantPrior(t, f.consult(t, "s1", mailAlice, true, last), denied(last.Sub(t0.Add(time.Minute))))
			wantPrior(t, f.consult(t, "s1", mailAlice, true, t0.Add(approval.DefaultTTL)), nothing)
			wantPrior(t, f.consult(t, "s2", mailAlice, true, t0.Add(2*time.Minute)), nothing)
			wantPrior(t, f.consult(t, "s1", mailAlice2, true, t0.Add(2*time.Minute)), nothing) // another call
		}},
		{"consult: a refusal asked in the session stands for the repeat window only", func(t *testing.T, f *fixture) {
			for i, c := range []struct {
				ch approval.Channel
				a  approval.Answer
			}{{approval.Elicitation, approval.Declined}, {approval.Elicitation, approval.Cancelled}, {approval.InputRequired, approval.Declined}, {approval.InputRequired, approval.Cancelled}} {
				session := "s" + string(rune('a'+i))
				r := f.open(t, session, writeBashrc, c.ch, t0, false)
				at := t0.Add(10 * time.Second)
				f.settle(t, r, c.a, at)
				if got := f.status(t, r.ID); got.Status != approval.StatusDenied || got.By != string(c.ch) {
					t.Fatalf("%s %s: the request is %+v", c.ch, c.a, got)
				}
				repeat := func(age time.Duration) approval.Prior {
					return approval.Prior{Answer: approval.Declined, Channel: approval.Repeat, ID: r.ID, Age: age}
				}
				wantPrior(t, f.consult(t, session, writeBashrc, false, at), repeat(0))
				wantPrior(t, f.consult(t, session, writeBashrc, false, at.Add(approval.RepeatWindow)), repeat(approval.RepeatWindow))
				wantPrior(t, f.consult(t, session, writeBashrc, false, at.Add(approval.RepeatWindow+time.Millisecond)), nothing)
				if r2 := f.open(t, session, writeBashrc, c.ch, at.Add(approval.RepeatWindow+time.Millisecond), false); r2.ID == r.ID {
					t.Errorf("%s %s: after the window the refused request is reused", c.ch, c.a)
				}
			}
		}},
		{"settle approved spends the request without a grant", func(t *testing.T, f *fixture) {
			r := f.open(t, "s1", mailAlice, approval.Elicitation, t0, true)
			f.settle(t, r, approval.Approved, t0.Add(time.Second))
			if got := f.status(t, r.ID); got.Status != approval.StatusUsed || got.Scope != approval.Once {
				t.Errorf("after approve the request is %+v", got)
			}
			wantPrior(t, f.consult(t, "s1", mailAlice, true, t0.Add(2*time.Second)), nothing)
			wantPrior(t, f.consult(t, "s1", mailAlice2, true, t0.Add(2*time.Second)), nothing)
			// A later answer to the same request changes nothing.
			f.settle(t, r, approval.ApprovedSession, t0.Add(3*time.Second))
			f.settle(t, r, approval.Declined, t0.Add(3*time.Second))
			if got := f.status(t, r.ID); got.Status != approval.StatusUsed || got.Scope != approval.Once {
				t.Errorf("a second answer changed the request: %+v", got)
			}
		}},
		{"decide refuses an expired request", func(t *testing.T, f *fixture) {
			r := f.open(t, "s1", mailAlice, approval.CLI, t0, true)
			for _, approve := range []bool{true, false} {
				_, err := f.book.Decide(ctx, r.ID, approve, false, "cli", t0.Add(approval.DefaultTTL))
				if !errors.Is(err, approval.ErrExpired) {
					t.Errorf("Decide(approve %v) at expiry = %v, want ErrExpired", approve, err)
				}
			}
			if _, err := f.book.Decide(ctx, r.ID, true, false, "cli", t0.Add(approval.DefaultTTL+time.Hour)); !errors.Is(err, approval.ErrExpired) || !strings.Contains(err.Error(), "retry") {
				t.Errorf("Decide an hour after expiry = %v", err)
			}
			if got := f.status(t, r.ID); got.Status != approval.StatusPending {
				t.Errorf("a refused decision changed the request to %s", got.Status)
			}
			f.decide(t, r.ID, true, false, t0.Add(approval.DefaultTTL-time.Millisecond))
		}},
		{"decide refuses a request already decided", func(t *testing.T, f *fixture) {
			r := f.open(t, "s1", mailAlice, approval.CLI, t0, true)
			f.decide(t, r.ID, true, false, t0.Add(time.Second))
			for _, approve := range []bool{true, false} {
				if _, err := f.book.Decide(ctx, r.ID, approve, false, "cli", t0.Add(2*time.Second)); !errors.Is(err, approval.ErrDecided) {
					t.Errorf("Decide(approve %v) of an approved request = %v, want ErrDecided", approve, err)
				}
			}
			f.consult(t, "s1", mailAlice, true, t0.Add(3*time.Second))
			if _, err := f.book.Decide(ctx, r.ID, true, false, "cli", t0.Add(4*time.Second)); !errors.Is(err, approval.ErrDecided) {
				t.Errorf("Decide of a spent request = %v, want ErrDecided", err)
			}
			d := f.open(t, "s1", mailBob, approval.Elicitation, t0, true)
			f.settle(t, d, approval.Declined, t0.Add(time.Second))
			if _, err := f.book.Decide(ctx, d.ID, true, false, "cli", t0.Add(2*time.Second)); !errors.Is(err, approval.ErrDecided) {
				t.Errorf("Decide of a refused request = %v, want ErrDecided", err)
			}
			if got := f.status(t, d.ID); got.Status != approval.StatusDenied {
				t.Errorf("the refused request became %s", got.Status)
			}
		}},
		{"decide refuses --session for a request without session scope", func(t *testing.T, f *fixture) {
			r := f.open(t, "s1", mailAlice, approval.CLI, t0, false)
			_, err := f.book.Decide(ctx, r.ID, true, true, "cli", t0.Add(time.Second))
			if err == nil || errors.Is(err, approval.ErrDecided) || errors.Is(err, approval.ErrExpired) || !strings.Contains(err.Error(), "without --session") || !strings.Contains(err.Error(), "$.to") {
				t.Fatalf("Decide --session = %v", err)
			}
			if got := f.status(t, r.ID); got.Status != approval.StatusPending {
				t.Fatalf("the refused --session changed the request to %s", got.Status)
			}
			if req := f.decide(t, r.ID, true, false, t0.Add(2*time.Second)); req.Scope != approval.Once {
				t.Errorf("Decide = %+v", req)
			}
			wantPrior(t, f.consult(t, "s1", mailAlice, false, t0.Add(3*time.Second)),
				approval.Prior{Answer: approval.Approved, Channel: approval.CLI, ID: r.ID, Age: time.Second})
			wantPrior(t, f.consult(t, "s1", mailAlice2, true, t0.Add(4*time.Second)), nothing)
		}},
		{"decide an unknown request", func(t *testing.T, f *fixture) {
			if _, err := f.book.Decide(ctx, "abcdefghjk", true, false, "cli", t0); !errors.Is(err, approval.ErrUnknown) {
				t.Errorf("Decide of an unknown id = %v, want ErrUnknown", err)
			}
		}},
		{"concurrent consults spend one approval exactly once", func(t *testing.T, f *fixture) {
			const n = 24
			for round := 0; round < 3; round++ {
				session := "s" + string(rune('a'+round))
				r := f.open(t, session, payRent, approval.CLI, t0, false)
				f.decide(t, r.ID, true, false, t0.Add(time.Second))
				// Every consult reads the approval before any spends it: only
				// the store's compare-and-set can keep the spends to one.
				bar := newBarrier(n)
				books := []*approval.Book{
					{Store: barrierStore{f.book.Store, bar}, Sealer: f.book.Sealer},
					{Store: barrierStore{f.again(), bar}, Sealer: f.book.Sealer},
				}
				digest := f.digest(t, payRent)
				var wg sync.WaitGroup
				var mu sync.Mutex
				won := 0
				var errs []error
				for i := 0; i < n; i++ {
					wg.Add(1)
					go func(b *approval.Book) {
						defer wg.Done()
						p, err := b.Consult(ctx, session, digest, "", t0.Add(2*time.Second))
						mu.Lock()
						defer mu.Unlock()
						if err != nil {
							errs = append(errs, err)
						}
						if p.Answer == approval.Approved {
							won++
						} else if p != nothing {
							errs = append(errs, errors.New("unexpected prior "+string(p.Answer)))
						}
					}(books[i%2])
				}
				wg.Wait()
				if !bar.met() {
					t.Fatal("the consults did not all read the approval before spending it")
				}
				if won != 1 || len(errs) > 0 {
					t.Fatalf("round %d: %d consults were approved, want 1; errors %v", round, won, errs)
				}
				if got := f.status(t, r.ID); got.Status != approval.StatusUsed {
					t.Fatalf("the approval is %s after the consults", got.Status)
				}
			}
		}},
		{"a nonce is spent once", func(t *testing.T, f *fixture) {
			s, other := f.book.Store, f.again()
			exp := t0.Add(approval.DefaultTTL).UnixMilli()
			for i, c := range []struct {
				st    approval.Store
				nonce string
				fresh bool
			}{{s, "n1", true}, {s, "n1", false}, {other, "n1", false}, {s, "n2", true}, {other, "n3", true}, {s, "n3", false}, {s, "N1", true}} {
				fresh, err := c.st.SpendNonce(ctx, c.nonce, exp)
				if err != nil || fresh != c.fresh {
					t.Errorf("spend %d of %q: %v, %v; want %v", i, c.nonce, fresh, err, c.fresh)
				}
			}
		}},
		{"count approvals leaves out memory and repeat", func(t *testing.T, f *fixture) {
			for i, ch := range []approval.Channel{approval.CLI, approval.Elicitation, approval.InputRequired, approval.Memory, approval.Repeat, approval.Memory} {
				r := approval.Row{ID: approval.NewID(), Session: "s1", Server: "mail", Tool: "send_email", Digest: "d" + string(rune('a'+i)), Rule: "r",
					Sealed: []byte{1}, Created: t0.UnixMilli(), Expires: t0.Add(time.Minute).UnixMilli(), Status: approval.StatusPending, Scope: approval.Once, Channel: ch}
				if err := f.book.Store.PutApproval(ctx, r); err != nil {
					t.Fatal(err)
				}
			}
			f.open(t, "s1", mailAlice, approval.CLI, t0, true)
			f.open(t, "s2", mailAlice, approval.Elicitation, t0, true)
			for session, want := range map[string]int{"s1": 4, "s2": 1, "s3": 0} {
				if n, err := f.book.Store.CountApprovals(ctx, session); err != nil || n != want {
					t.Errorf("CountApprovals(%s) = %d, %v; want %d", session, n, err, want)
				}
			}
		}},
		{"list unseals details, newest first, by session, not expired", func(t *testing.T, f *fixture) {
			a := f.open(t, "s1", mailAlice, approval.CLI, t0, true)
			b := f.open(t, "s1", payRent, approval.Elicitation, t0.Add(time.Second), false)
			c := f.open(t, "s2", fetchDocs, approval.InputRequired, t0.Add(2*time.Second), true)
			reqs, err := f.book.List(ctx, "", t0.Add(3*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			if ids := idsOf(reqs); ids != c.ID+" "+b.ID+" "+a.ID {
				t.Fatalf("List = %s, want %s %s %s", ids, c.ID, b.ID, a.ID)
			}
			pay := reqs[1]
			if pay.Reason != "untrusted text may be steering send_money" || pay.SessionScope || len(pay.Paths) != 1 || pay.Paths[0] != "$.to" ||
				len(pay.Sources) != 1 || len(pay.Facts) != 2 || pay.Facts[1].Value != "GB29NWBK60161331926819" || pay.Facts[0].Value != "1200" {
				t.Errorf("unsealed details %+v", pay.Details)
			}
			if !reqs[0].SessionScope || reqs[0].Facts[0].Kind != approval.KindHost {
				t.Errorf("unsealed details %+v", reqs[0].Details)
			}
			if reqs, err := f.book.List(ctx, "s1", t0.Add(3*time.Second)); err != nil || idsOf(reqs) != b.ID+" "+a.ID {
				t.Errorf("List(s1) = %s, %v", idsOf(reqs), err)
			}
			if reqs, err := f.book.List(ctx, "", t0.Add(approval.DefaultTTL)); err != nil || idsOf(reqs) != c.ID+" "+b.ID {
				t.Errorf("List at a's expiry = %s, %v", idsOf(reqs), err)
			}
			if reqs, err := f.book.List(ctx, "s9", t0); err != nil || len(reqs) != 0 {
				t.Errorf("List(s9) = %s, %v", idsOf(reqs), err)
			}
		}},
		{"a request sealed under another install key cannot be listed or decided", func(t *testing.T, f *fixture) {
			f.open(t, "s1", mailAlice, approval.CLI, t0, true)
			sealer, err := approval.NewSealer(otherKey)
			if err != nil {
				t.Fatal(err)
			}
			foreign := &approval.Book{Store: f.book.Store, Sealer: sealer}
			x := openWith(t, foreign, f, "s1", mailBob, approval.CLI, t0.Add(time.Second), true)
			_, err = f.book.List(ctx, "", t0.Add(2*time.Second))
			if err == nil || !strings.Contains(err.Error(), x.ID) || !strings.Contains(err.Error(), "install's key") {
				t.Errorf("List = %v, want an error naming %s and the key", err, x.ID)
			}
			if _, err := f.book.Decide(ctx, x.ID, true, false, "cli", t0.Add(2*time.Second)); err == nil {
				t.Error("Decide approved a request whose details it cannot read")
			}
			if got := f.status(t, x.ID); got.Status != approval.StatusPending {
				t.Errorf("the foreign request became %s", got.Status)
			}
			if _, err := foreign.List(ctx, "s1", t0.Add(2*time.Second)); err == nil {
				t.Error("the other key opens this key's request")
			}
		}},
	}
	for _, be := range backends {
		for _, tc := range tests {
			t.Run(be.name+"/"+tc.name, func(t *testing.T) {
				s, again := be.open(t)
				sealer, err := approval.NewSealer(installKey)
				if err != nil {
					t.Fatal(err)
				}
				h, err := fingerprint.NewHasher(installKey)
				if err != nil {
					t.Fatal(err)
				}
				tc.run(t, &fixture{book: &approval.Book{Store: s, Sealer: sealer}, again: again, h: h})
			})
		}
	}
}

func idsOf(reqs []approval.Request) string {
	var ids []string
	for _, r := range reqs {
		ids = append(ids, r.ID)
	}
	return strings.Join(ids, " ")
}

// barrier holds n goroutines until all have arrived (or five seconds
// have passed, so that a broken test fails rather than hangs).
type barrier struct {
	mu      sync.Mutex
	n       int
	arrived int
	all     chan struct{}
}

func newBarrier(n int) *barrier { return &barrier{n: n, all: make(chan struct{})} }

func (b *barrier) wait() {
	b.mu.Lock()
	b.arrived++
	if b.arrived == b.n {
		close(b.all)
	}
	b.mu.Unlock()
	select {
	case <-b.all:
	case <-time.After(5 * time.Second):
	}
}

func (b *barrier) met() bool {
	select {
	case <-b.all:
		return true
	default:
		return false
	}
}

// barrierStore is a store whose LatestApproval waits at the barrier after
// reading.
type barrierStore struct {
	approval.Store
	bar *barrier
}

func (s barrierStore) LatestApproval(ctx context.Context, session, digest string, now int64) (approval.Row, bool, error) {
	r, ok, err := s.Store.LatestApproval(ctx, session, digest, now)
	s.bar.wait()
	return r, ok, err
}
