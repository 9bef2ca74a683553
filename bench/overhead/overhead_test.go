package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weir-sec/weir/bench/internal/sysinfo"
)

// TestQuickRun runs the whole benchmark with --quick and checks the
// results file: every server, size, path and concurrency is there, the
// record says where and how it was made, and every measured number is
// positive. Added latencies are differences of percentiles, which at a
// quick run's few samples can be negative within noise; of those only
// Weir's added median against the Go echo server (hundreds of µs) is
// required to be positive.
//
// WEIR_BENCH_WEIR=PATH uses a prebuilt weir. server-everything is measured
// when the npm peers are installed (`make deps`); WEIR_E2E_REQUIRE=1 makes
// their absence a failure.
func TestQuickRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts eight servers and proxies")
	}
	servers := []string{"go-echo", "server-everything"}
	root, err := sysinfo.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	_, nodeErr := exec.LookPath("node")
	_, pkgErr := os.Stat(filepath.Join(root, "testdata/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js"))
	if nodeErr != nil || pkgErr != nil {
		if os.Getenv("WEIR_E2E_REQUIRE") == "1" {
			t.Fatalf("server-everything not installed (run `make deps`): %v %v", nodeErr, pkgErr)
		}
		t.Logf("server-everything not installed, measuring go-echo only: %v %v", nodeErr, pkgErr)
		servers = servers[:1]
	}
	out := filepath.Join(t.TempDir(), "overhead.json")
	args := []string{"--quick", "-o", out}
	if err := run(options{out: out, quick: true, weir: os.Getenv("WEIR_BENCH_WEIR"), servers: servers, args: args}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}

	// Structure: the file decodes into File with no unknown fields …
	var f File
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("results do not decode: %v", err)
	}
	m := f.Meta
	for name, v := range map[string]string{"date": m.Date, "commit": m.Commit, "cpu": m.Machine.CPU, "os": m.Machine.OS, "go": m.Go, "weir": m.Weir} {
		if v == "" || v == "unknown" {
			t.Errorf("meta %s is %q", name, v)
		}
	}
	if m.Command != "go run ./bench/overhead --quick -o "+out || !m.Quick {
		t.Errorf("meta command %q, quick %v", m.Command, m.Quick)
	}
	if len(servers) == 2 && !strings.HasPrefix(m.Node, "v") {
		t.Errorf("meta node %q", m.Node)
	}
	if len(m.LoadBefore) != 3 || len(m.LoadAfter) != 3 {
		t.Errorf("load averages %v %v", m.LoadBefore, m.LoadAfter)
	}
	// … with every server, size, path and concurrency.
	var got []string
	for _, s := range f.Servers {
		got = append(got, s.Server)
		var sizes []string
		for _, l := range s.Latency {
			sizes = append(sizes, l.Size)
			if l.Samples != 30 && l.Samples != 15 && l.Samples != 5 {
				t.Errorf("%s %s: %d samples", s.Server, l.Size, l.Samples)
			}
			checkKeys(t, s.Server+" "+l.Size+" paths", l.Paths, paths)
			checkKeys(t, s.Server+" "+l.Size+" added_vs_direct", l.AddedVsDirect, paths[1:])
			checkKeys(t, s.Server+" "+l.Size+" added_vs_relay", l.AddedVsRelay, paths[2:])
			checkKeys(t, s.Server+" "+l.Size+" proxy_cpu", l.ProxyCPU, paths[1:])
			checkKeys(t, s.Server+" "+l.Size+" quiet_after_answer", l.Settle, paths)
			// Added is the path's time less direct's, not the other way
			// (a sign test would fail on the noise of a quick run).
			for _, p := range paths[1:] {
				if got, want := l.AddedVsDirect[p].P50, sysinfo.Round(l.Paths[p].P50-l.Paths["direct"].P50, 1); got != want || l.Paths[p].P50 <= 0 {
					t.Errorf("%s %s: %s added p50 %v µs, want %v (p50 %v)", s.Server, l.Size, p, got, want, l.Paths[p].P50)
				}
			}
		}
		if !slices.Equal(sizes, []string{"1KB", "64KB", "1MB"}) {
			t.Errorf("%s: sizes %v", s.Server, sizes)
		}
		var conc []int
		for _, tp := range s.Throughput {
			conc = append(conc, tp.Concurrency)
			checkKeys(t, s.Server+" throughput", tp.Paths, paths)
		}
		if !slices.Equal(conc, []int{1, 8, 64}) {
			t.Errorf("%s: concurrency %v", s.Server, conc)
		}
		checkKeys(t, s.Server+" peak_rss", s.PeakRSS, paths[1:])
	}
	if !slices.Equal(got, servers) {
		t.Errorf("servers %v, want %v", got, servers)
	}
	checkLong(t, f.LongSession, f.Method.LongSession)
	checkList(t, f.ToolsList)

	// Every number positive, outside the percentile differences.
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	positive(t, "", doc)
}

// checkLong: every checkpoint in order, the state file written, and every
// joining proxy blocked by the exfiltration rule (it quotes the newest
// private result).
func checkLong(t *testing.T, l *LongSession, lp LongPlan) {
	t.Helper()
	if l == nil || l.Join == nil {
		t.Fatal("no long_session in the results")
	}
	var at []int
	for _, c := range l.Checkpoints {
		at = append(at, c.Results)
		if c.StateDBMB+c.StateWALMB <= 0 {
			t.Errorf("after %d results no state file", c.Results)
		}
		if c.HWMMB < c.RSSMB {
			t.Errorf("after %d results peak RSS %v below RSS %v", c.Results, c.HWMMB, c.RSSMB)
		}
	}
	if !slices.Equal(at, lp.Checkpoints) {
		t.Errorf("checkpoints %v, want %v", at, lp.Checkpoints)
	}
	j := l.Join
	if j.Samples != lp.Joins || j.Rule != "flow.exfiltration" {
		t.Errorf("join: %d samples, rule %q; want %d, flow.exfiltration", j.Samples, j.Rule, lp.Joins)
	}
	if j.FromStartMS < j.FromRequestMS || j.FromStartMaxMS < j.FromStartMS {
		t.Errorf("join: from start %v (max %v) ms, from the request %v ms", j.FromStartMS, j.FromStartMaxMS, j.FromRequestMS)
	}
	if l.Meta.Date == "" || l.Meta.Commit == "" || len(l.Meta.LoadAfter) != 3 {
		t.Errorf("long_session meta %+v", l.Meta)
	}
	// a shared page counts in part in each proxy's PSS, and not at all in
	// its USS: USS ≤ PSS ≤ RSS, and the fleet's PSS is its proxies'
	f := l.Fleet
	if f == nil || f.Proxies != lp.Fleet {
		t.Fatalf("fleet %+v, want %d proxies", f, lp.Fleet)
	}
	if f.USSMB <= 0 || f.USSMB > f.PSSMB || f.PSSMB > f.RSSMB || f.TotalPSSMB > f.TotalRSSMB || f.TotalPSSMB < f.PSSMB {
		t.Errorf("fleet %+v: want 0 < USS ≤ PSS ≤ RSS per proxy and PSS ≤ RSS in all", f)
	}
}

// checkList: the whole catalogue listed on every path, each path timed.
func checkList(t *testing.T, l *ToolsList) {
	t.Helper()
	if l == nil {
		t.Fatal("no tools_list in the results")
	}
	if l.Tools < 50 || l.ListBytes < 10000 {
		t.Errorf("tools_list: %d tools, %d bytes: not a large catalogue", l.Tools, l.ListBytes)
	}
	checkKeys(t, "first_listing", l.First, []string{"direct", "relay", "weir-default"})
	checkKeys(t, "repeated_listing", l.Repeated, []string{"direct", "relay", "weir-default"})
	for p, n := range l.ToolsSeen {
		if n != l.Tools {
			t.Errorf("%s listed %d tools of %d", p, n, l.Tools)
		}
	}
}

// TestOnlyKeepsOtherParts: --only list rewrites the tools/list part of an
// existing file and keeps the rest as it was; --only without latency and
// no file to keep it from is refused.
func TestOnlyKeepsOtherParts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers and proxies")
	}
	out := filepath.Join(t.TempDir(), "overhead.json")
	if err := run(options{out: out, quick: true, parts: []string{"long"}}); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("--only long with no file: %v", err)
	}
	old := File{Meta: Meta{Date: "2020-01-01T00:00:00Z", Commit: "abc"}, Servers: []*ServerResult{{Server: "kept"}},
		LongSession: &LongSession{Server: "kept-long", Join: &JoinResult{Rule: "r"}}}
	data, _ := json.Marshal(old)
	if err := os.WriteFile(out, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(options{out: out, quick: true, weir: os.Getenv("WEIR_BENCH_WEIR"), parts: []string{"list"}, args: []string{"--only", "list"}}); err != nil {
		t.Fatal(err)
	}
	f, err := readResults(out)
	if err != nil {
		t.Fatal(err)
	}
	if f.Meta.Commit != "abc" || len(f.Servers) != 1 || f.Servers[0].Server != "kept" || f.LongSession == nil || f.LongSession.Server != "kept-long" {
		t.Errorf("the parts not measured changed: meta %+v, servers %v, long %+v", f.Meta, f.Servers, f.LongSession)
	}
	checkList(t, f.ToolsList)
	if f.ToolsList.Meta.Command != "go run ./bench/overhead --only list" || f.Method.ToolsList.Starts != 2 {
		t.Errorf("tools_list meta %+v, plan %+v", f.ToolsList.Meta, f.Method.ToolsList)
	}
}

func checkKeys[V any](t *testing.T, what string, m map[string]V, want []string) {
	t.Helper()
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, want) {
		t.Errorf("%s: keys %v, want %v", what, keys, want)
	}
}

func positive(t *testing.T, path string, v any) {
	t.Helper()
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			// State file sizes may be zero (rows still in the WAL, or the
			// WAL checkpointed); checkLong checks their sum.
			if k == "added_vs_direct" || k == "added_vs_relay" || k == "state_db_mb" || k == "state_wal_mb" {
				continue
			}
			positive(t, path+"."+k, x)
		}
	case []any:
		for _, x := range v {
			positive(t, path+"[]", x)
		}
	case float64:
		if !(v > 0) {
			t.Errorf("%s = %v, want > 0", path, v)
		}
	}
}
