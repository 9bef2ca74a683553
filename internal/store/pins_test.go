package store

import (
	"context"
	"testing"

	"github.com/weir-sec/weir/internal/pin"
)

func TestPins(t *testing.T) { forEachBackend(t, testPins) }

func testPins(t *testing.T, open opener) {
	ctx := context.Background()
	s := open(t)
	put := func(p pin.Pin) {
		t.Helper()
		if err := s.PutPin(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	put(pin.Pin{Identity: "id-a", Tool: "read", Server: "a", Hash: "h1", Definition: []byte(`{"name":"read"}`), FirstSeen: 1, Updated: 1})
	put(pin.Pin{Identity: "id-a", Tool: "send", Server: "a", PendingHash: "h2", PendingDef: []byte(`{"name":"send"}`), PendingWhy: "quarantined: shadowing", FirstSeen: 2, Updated: 2})
	put(pin.Pin{Identity: "id-b", Tool: "read", Server: "b", Hash: "h3", FirstSeen: 3, Updated: 3})
	// A later write keeps the first sighting.
	put(pin.Pin{Identity: "id-a", Tool: "read", Server: "a", Hash: "h1", PendingHash: "h4", PendingWhy: "changed", FirstSeen: 9, Updated: 9})

	got, err := s.Pins(ctx, "id-a")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["read"].FirstSeen != 1 || got["read"].PendingHash != "h4" || got["send"].Hash != "" {
		t.Fatalf("pins of id-a: %+v", got)
	}
	all, _ := s.AllPins(ctx, "")
	if len(all) != 3 || all[0].Server != "a" || all[2].Server != "b" {
		t.Fatalf("all pins: %+v", all)
	}
	if n, err := s.ApprovePins(ctx, "a", "send", 10); err != nil || n != 1 {
		t.Fatalf("approve a:send: %d, %v", n, err)
	}
	got, _ = s.Pins(ctx, "id-a")
	if p := got["send"]; p.Hash != "h2" || p.PendingHash != "" || string(p.Definition) != `{"name":"send"}` || p.Updated != 10 {
		t.Errorf("approved pin: %+v", p)
	}
	if got["read"].PendingHash != "h4" {
		t.Error("approving one tool approved another")
	}
	if n, _ := s.ApprovePins(ctx, "a", "", 11); n != 1 {
		t.Errorf("approve all of a: %d", n)
	}
	if n, _ := s.ResetPins(ctx, "b"); n != 1 {
		t.Errorf("reset b: %d", n)
	}
	if n, _ := s.ResetPins(ctx, ""); n != 2 {
		t.Errorf("reset all: %d", n)
	}

	// Several pins in one call, as a server's first tool list writes them.
	many := []pin.Pin{{Identity: "id-c", Tool: "x", Server: "c", Hash: "1"}, {Identity: "id-c", Tool: "y", Server: "c", Hash: "2"}, {Identity: "id-d", Tool: "x", Server: "d", Hash: "3"}}
	if err := s.PutPin(ctx, many...); err != nil {
		t.Fatal(err)
	}
	if all, err := s.AllPins(ctx, ""); err != nil || len(all) != 3 || all[1].Tool != "y" || all[2].Hash != "3" {
		t.Errorf("after writing three at once: %+v, %v", all, err)
	}
}

// TestPinsCache reads pins through one handle while another handle, and
// SQL that bypasses Weir's statements (a Weir of an older version), write
// them: every read sees every write, and reads with no write between them
// do not read the table again.
func TestPinsCache(t *testing.T) { forEachBackend(t, testPinsCache) }

func testPinsCache(t *testing.T, open opener) {
	ctx := context.Background()
	reader := open(t)
	writer := reader.reopen(t)
	cache := func() *pinCache {
		switch s := reader.State.(type) {
		case *SQLite:
			return &s.pins
		case *Postgres:
			return &s.pins
		}
		t.Fatalf("no pin cache in %T", reader.State)
		return nil
	}()
	// read checks what reader sees of id-a's tool read, and that it read
	// the table iff want says so.
	read := func(step, wantHash, wantWhy string, wantLoad bool) {
		t.Helper()
		before := cache.loads
		got, err := reader.Pins(ctx, "id-a")
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if p := got["read"]; p.Hash != wantHash || p.PendingWhy != wantWhy {
			t.Errorf("%s: pin %+v, want hash %q, pending why %q", step, p, wantHash, wantWhy)
		}
		if loaded := cache.loads != before; loaded != wantLoad {
			t.Errorf("%s: read the pins table %v, want %v", step, loaded, wantLoad)
		}
	}
	read("empty store", "", "", true)
	read("nothing written", "", "", false)

	if err := writer.PutPin(ctx, pin.Pin{Identity: "id-a", Tool: "read", Server: "a", Hash: "h1", FirstSeen: 1, Updated: 1}); err != nil {
		t.Fatal(err)
	}
	read("another handle's PutPin", "h1", "", true)
	read("nothing written since", "h1", "", false)

	if err := writer.PutPin(ctx, pin.Pin{Identity: "id-a", Tool: "read", Server: "a", Hash: "h1", PendingHash: "h2", PendingDef: []byte(`{}`), PendingWhy: "changed", FirstSeen: 2, Updated: 2}); err != nil {
		t.Fatal(err)
	}
	read("an upsert", "h1", "changed", true)

	if n, err := writer.ApprovePins(ctx, "a", "", 3); err != nil || n != 1 {
		t.Fatalf("approve: %d, %v", n, err)
	}
	read("another handle's approval", "h2", "", true)

	var n int
	writer.queryRow(t, `UPDATE pins SET pending_why = 'by hand' WHERE tool = 'read' RETURNING 1`, nil, &n)
	read("a bare UPDATE", "h2", "by hand", true)

	// A write to another server's pins moves the counter too: AllPins,
	// which shadowing reads, holds every server's.
	if err := writer.PutPin(ctx, pin.Pin{Identity: "id-b", Tool: "x", Server: "b", Hash: "h9"}); err != nil {
		t.Fatal(err)
	}
	if all, err := reader.AllPins(ctx, ""); err != nil || len(all) != 2 || all[1].Server != "b" {
		t.Errorf("all pins after another server's write: %+v, %v", all, err)
	}
	if b, err := reader.AllPins(ctx, "b"); err != nil || len(b) != 1 || b[0].Tool != "x" {
		t.Errorf("server b's pins: %+v, %v", b, err)
	}

	// What a caller does with what it was given never reaches the cache.
	got, _ := reader.Pins(ctx, "id-a")
	delete(got, "read")
	all, _ := reader.AllPins(ctx, "")
	all[0].Hash = "tampered"
	read("after callers changed their copies", "h2", "by hand", false)

	if n, err := writer.ResetPins(ctx, ""); err != nil || n != 2 {
		t.Fatalf("reset: %d, %v", n, err)
	}
	read("another handle's reset", "", "", true)
}
