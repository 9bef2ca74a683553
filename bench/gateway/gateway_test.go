package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weir-sec/weir/internal/store/pgtest"
)

// TestTinyRun runs the whole benchmark tiny (4 sessions × 5 calls per
// target) and checks the results file: it decodes with no unknown field,
// has every target in order with every call answered and none lost, the
// two-replica targets spread the sessions over both replicas, and the
// record says where and how it was made. Without PostgreSQL the results
// must name its two targets as skipped; with WEIR_E2E_REQUIRE=1 that is a
// failure instead.
//
// WEIR_BENCH_WEIR=PATH uses a prebuilt weir.
func TestTinyRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds weir and the everything-server and runs six targets")
	}
	pg := pgtest.Bin() != ""
	if !pg && pgtest.Required() {
		t.Fatal("PostgreSQL server binaries are not installed; the PostgreSQL targets cannot run (WEIR_E2E_REQUIRE=1)")
	}
	out := filepath.Join(t.TempDir(), "gateway.json")
	args := []string{"-sessions", "4", "-calls", "5", "-o", out}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	o := options{out: out, sessions: 4, calls: 5, cap: 30 * time.Second, callTimeout: 30 * time.Second, weir: os.Getenv("WEIR_BENCH_WEIR"), args: args}
	if _, err := run(ctx, o); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var f File
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("results do not decode: %v", err)
	}
	m := f.Meta
	for name, v := range map[string]string{"date": m.Date, "commit": m.Commit, "cpu": m.Machine.CPU, "os": m.Machine.OS, "go": m.Go, "go_sdk": m.GoSDK, "weir": m.Weir} {
		if v == "" || v == "unknown" {
			t.Errorf("meta %s is %q", name, v)
		}
	}
	if m.Command != "go run ./bench/gateway -sessions 4 -calls 5 -o "+out {
		t.Errorf("meta command %q", m.Command)
	}
	if len(m.LoadBefore) != 3 || len(m.LoadAfter) != 3 || m.WallSeconds <= 0 {
		t.Errorf("load averages %v %v, wall %v", m.LoadBefore, m.LoadAfter, m.WallSeconds)
	}
	if f.Method.Sessions != 4 || f.Method.CallsPerSession != 5 || len(f.Method.Targets) != 6 || len(f.Method.Definitions) == 0 || f.Method.Store == "" {
		t.Errorf("method %+v", f.Method)
	}
	if pg != (m.PostgreSQL != "") {
		t.Errorf("PostgreSQL installed %v, meta postgresql %q", pg, m.PostgreSQL)
	}
	var names []string
	for _, r := range f.Targets {
		names = append(names, r.Target)
		if r.Sessions != 4 || r.SessionsOpened != 4 || r.SessionErrors != 0 {
			t.Errorf("%s: sessions %d, opened %d, failed %d", r.Target, r.Sessions, r.SessionsOpened, r.SessionErrors)
		}
		if r.CallsPlanned != 20 || r.CallsSent != 20 || r.Answered != 20 || r.OK != 20 || r.Errors != 0 || r.Lost != 0 || r.Capped {
			t.Errorf("%s: planned %d, sent %d, answered %d (ok %d, errors %d), lost %d, capped %v; samples %q",
				r.Target, r.CallsPlanned, r.CallsSent, r.Answered, r.OK, r.Errors, r.Lost, r.Capped, r.ErrorSamples)
		}
		if r.Seconds <= 0 || r.CallsPerSec <= 0 || r.Latency.P50 <= 0 || r.Latency.P50 > r.Latency.P99 || r.Latency.P99 > r.Latency.Max || r.Initialize.P50 <= 0 {
			t.Errorf("%s: seconds %v, calls/s %v, latency %+v, initialize %+v", r.Target, r.Seconds, r.CallsPerSec, r.Latency, r.Initialize)
		}
		weir := r.Target != "direct"
		if (r.AddedVsDirect != nil) != weir || (r.WeirPeakRSSMB > 0) != weir {
			t.Errorf("%s: added %+v, weir peak RSS %v MB", r.Target, r.AddedVsDirect, r.WeirPeakRSSMB)
		}
		n := 0
		switch {
		case strings.HasPrefix(r.Target, "gateway-2x-"):
			n = 2
		case weir:
			n = 1
		}
		if len(r.Replicas) != n {
			t.Errorf("%s: %d replicas, want %d", r.Target, len(r.Replicas), n)
			continue
		}
		for i, rep := range r.Replicas {
			if rep.Sessions != 4/n || rep.CallsSent != 20/n || rep.Answered != 20/n || rep.Lost != 0 || rep.PeakRSSMB <= 0 {
				t.Errorf("%s replica %d: %+v", r.Target, i, rep)
			}
		}
	}
	want := []string{"direct", "serve", "gateway", "gateway-pg", "gateway-2x-sqlite", "gateway-2x-pg"}
	var skipped []string
	for _, s := range f.Skipped {
		skipped = append(skipped, s.Target)
		if !strings.Contains(s.Reason, "PostgreSQL") {
			t.Errorf("%s skipped for %q", s.Target, s.Reason)
		}
	}
	if !pg {
		want = []string{"direct", "serve", "gateway", "gateway-2x-sqlite"}
		if !slices.Equal(skipped, []string{"gateway-pg", "gateway-2x-pg"}) {
			t.Errorf("without PostgreSQL, skipped %v", skipped)
		}
	} else if len(skipped) > 0 {
		t.Errorf("with PostgreSQL installed, skipped %v", skipped)
	}
	if !slices.Equal(names, want) {
		t.Errorf("targets %v, want %v", names, want)
	}
}
