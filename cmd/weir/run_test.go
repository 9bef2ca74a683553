package main

import (
	"context"
	"database/sql"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/weir-sec/weir/internal/flow"
	"github.com/weir-sec/weir/internal/store"
)

// --header-env carries a variable's value exactly: nothing in it expands.
func TestHeadersFromEnv(t *testing.T) {
	env := map[string]string{"TOK": "Bearer p$ss ${OTHER} $$", "OTHER": "no"}
	getenv := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	h := http.Header{}
	if err := headersFromEnv(h, []string{"Authorization=TOK", "x-api-key = TOK"}, getenv); err != nil {
		t.Fatal(err)
	}
	if got := h.Get("Authorization"); got != env["TOK"] {
		t.Errorf("Authorization = %q, want %q", got, env["TOK"])
	}
	if got := h.Get("X-Api-Key"); got != env["TOK"] {
		t.Errorf("X-Api-Key = %q", got)
	}
	for _, bad := range []string{"Authorization", "=TOK", "Authorization=", "Bad Name=TOK", "Authorization=MISSING", "Accept=TOK"} {
		if err := headersFromEnv(http.Header{}, []string{bad}, getenv); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestMaintainPrunesOnSchedule: a proxy that runs all day prunes sessions
// past state.retention_days while it runs, not only when it starts.
func TestMaintainPrunesOnSchedule(t *testing.T) {
	home := t.TempDir()
	t.Setenv("WEIR_HOME", home)
	t.Setenv(store.URLEnv, "")
	old := pruneEvery
	pruneEvery = 10 * time.Millisecond
	t.Cleanup(func() { pruneEvery = old })
	ctx := context.Background()
	e, err := openEnv(ctx, "", "")
	if err != nil {
		t.Fatal(err)
	}
	defer e.close()
	if _, err := e.store.Append(ctx, "env:old", &flow.Observation{Tool: "notes/read", Labels: flow.Private, Prints: []uint64{1, 2, 3}}); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", filepath.Join(home, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE sessions SET last_seen = ? WHERE session = 'env:old'`, time.Now().AddDate(0, 0, -400).UnixMilli()); err != nil {
		t.Fatal(err)
	}
	stop := e.maintain(ctx)
	defer stop()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var tool string
		if err := db.QueryRow(`SELECT tool FROM observations WHERE session = 'env:old' ORDER BY seq DESC LIMIT 1`).Scan(&tool); err != nil {
			t.Fatal(err)
		}
		if tool == flow.PrunedTool {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("a session past retention was not pruned while the proxy ran")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
