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
}
