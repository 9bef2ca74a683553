package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestTinyRun runs the whole benchmark tiny (4 sessions × 5 calls per
// target) and checks the results file: it decodes with no unknown field,
// has every target in order with every call answered and none lost, and
// the record says where and how it was made.
//
// WEIR_BENCH_WEIR=PATH uses a prebuilt weir.
func TestTinyRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds weir and the everything-server and runs three targets")
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
	if f.Method.Sessions != 4 || f.Method.CallsPerSession != 5 || len(f.Method.Targets) != 3 || len(f.Method.Definitions) == 0 {
		t.Errorf("method %+v", f.Method)
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
	}
	if !slices.Equal(names, []string{"direct", "serve", "gateway"}) {
		t.Errorf("targets %v", names)
	}
}
