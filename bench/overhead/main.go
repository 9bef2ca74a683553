// Command overhead measures what Weir adds to MCP tool calls, side by side
// in one run: the same client workload (raw newline-delimited JSON-RPC over
// stdio pipes) against
//
//	direct        the server itself
//	relay         a bare relay in front of it (bench/overhead/relay: a byte
//	              pump, the physical floor for one extra hop)
//	weir-default  weir run with the built-in default policy
//	weir-strict   weir run --policy with `preset: strict`
//
// for two servers: a Go echo server (bench/overhead/echo, almost no server
// time of its own) and the real @modelcontextprotocol/server-everything
// (node, from testdata/npm; its echo tool). It reports the added latency
// per tools/call at p50/p95/p99 for 1 KB, 64 KB and 1 MB results (paths
// alternate call by call in one loop, so every path sees the same machine),
// sustained calls per second with 1, 8 and 64 requests in flight
// (pipelined over the one connection), and the proxies' peak RSS.
//
//	go run ./bench/overhead                 # full run, bench/results/overhead.json
//	go run ./bench/overhead --quick -o x.json
//
// See README.md for the method and the sample counts.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/weir-sec/weir/bench/internal/sysinfo"
)

// File is what bench/results/overhead.json holds.
type File struct {
	Meta    Meta            `json:"meta"`
	Method  Method          `json:"method"`
	Servers []*ServerResult `json:"servers"`
	// LongSession and ToolsList carry their own meta: `--only long,list`
	// re-measures them into a file whose latency part is older.
	LongSession *LongSession `json:"long_session,omitempty"`
	ToolsList   *ToolsList   `json:"tools_list,omitempty"`
}

// Meta says where, when and how the numbers were made.
type Meta struct {
	Date   string `json:"date"`
	Commit string `json:"commit"`
	// Uncommitted lists changes to the code weir is built from (cmd,
	// internal, go.mod, go.sum) in the working tree at the time.
	Uncommitted []string        `json:"uncommitted,omitempty"`
	Machine     sysinfo.Machine `json:"machine"`
	Go          string          `json:"go"`
	Node        string          `json:"node,omitempty"`
	Weir        string          `json:"weir"`
	Command     string          `json:"command"`
	Quick       bool            `json:"quick"`
	// Load averages (1, 5, 15 minutes) before and after: the machine may
	// be shared.
	LoadBefore  []float64 `json:"load_before"`
	LoadAfter   []float64 `json:"load_after"`
	WallSeconds float64   `json:"wall_seconds"`
}

// Method records the workload and the sample counts.
type Method struct {
	Paths       map[string]string `json:"paths"`
	Latency     []SizePlan        `json:"latency"`
	Throughput  ThroughputPlan    `json:"throughput"`
	LongSession LongPlan          `json:"long_session"`
	ToolsList   ListPlan          `json:"tools_list"`
	Definitions map[string]string `json:"definitions"`
}

// SizePlan is one result size of the latency loop.
type SizePlan struct {
	Size       string `json:"size"`
	Bytes      int    `json:"bytes"`
	Iterations int    `json:"iterations"`
	Warmup     int    `json:"warmup"`
}

// ThroughputPlan is the throughput workload.
type ThroughputPlan struct {
	ResultBytes     int     `json:"result_bytes"`
	Concurrency     []int   `json:"concurrency"`
	Rounds          int     `json:"rounds"`
	SecondsPerRound float64 `json:"seconds_per_round"`
	WarmupSeconds   float64 `json:"warmup_seconds"`
}

// ServerResult is every measurement against one server.
type ServerResult struct {
	Server  string `json:"server"`
	Command string `json:"command"`
	Request string `json:"request"`
	// Latency has one entry per result size.
	Latency []*LatencyResult `json:"latency"`
	// Throughput has one entry per concurrency.
	Throughput []*ThroughputResult `json:"throughput"`
	// PeakRSS is each proxy's VmHWM at the end of the run (direct has no
	// proxy).
	PeakRSS map[string]RSS `json:"peak_rss"`
}

// LatencyResult is one result size.
type LatencyResult struct {
	Size    string `json:"size"`
	Bytes   int    `json:"bytes"`
	Samples int    `json:"samples"`
	// Paths: each path's own latency per call.
	Paths map[string]Percentiles `json:"paths"`
	// AddedVsDirect: path − direct, percentile by percentile.
	AddedVsDirect map[string]Percentiles `json:"added_vs_direct"`
	// AddedVsRelay: path − relay, percentile by percentile.
	AddedVsRelay map[string]Percentiles `json:"added_vs_relay"`
	// ProxyCPU: CPU time (user + system, every thread) the proxy process
	// spent per call during the loop.
	ProxyCPU map[string]float64 `json:"proxy_cpu_us_per_call"`
	// Settle: after each answer, how long until the path's processes
	// were quiet again (see definitions).
	Settle map[string]Percentiles `json:"quiet_after_answer"`
}

// Percentiles are microseconds.
type Percentiles struct {
	P50 float64 `json:"p50_us"`
	P95 float64 `json:"p95_us"`
	P99 float64 `json:"p99_us"`
}

// ThroughputResult is one concurrency.
type ThroughputResult struct {
	Concurrency int             `json:"concurrency"`
	ResultBytes int             `json:"result_bytes"`
	Paths       map[string]Rate `json:"paths"`
}

// Rate is sustained throughput on one path, with the latency of calls
// under that load.
type Rate struct {
	Calls       int     `json:"calls"`
	Seconds     float64 `json:"seconds"`
	CallsPerSec float64 `json:"calls_per_sec"`
	P50         float64 `json:"p50_us"`
	P99         float64 `json:"p99_us"`
}

// RSS is a process's peak resident set size.
type RSS struct {
	MB      float64 `json:"peak_mb"`
	Samples int     `json:"samples"`
}

// The paths, in the order of the tables.
var paths = []string{"direct", "relay", "weir-default", "weir-strict"}

var pathDoc = map[string]string{
	"direct":       "the client talks to the server's stdio directly",
	"relay":        "bench/overhead/relay: starts the server and copies bytes both ways (read/write, 64 KiB buffer), parsing nothing: the floor for one extra hop",
	"weir-default": "weir run --name NAME -- SERVER, no policy file: the built-in default preset",
	"weir-strict":  "weir run --name NAME --policy P -- SERVER, P = `version: 1` + `preset: strict`",
}

var definitions = map[string]string{
	"latency":               "From just before a tools/call request is written to the client's pipe to when the last byte of its answer is read. Each iteration calls every path once, one call at a time, starting from a different path each iteration, and each call waits for the previous one's processes to be quiet (see quiet_after_answer); percentiles are nearest-rank over the iterations.",
	"quiet_after_answer":    "After each answer, the time until the path's processes (the one started and its children: the proxy and its server, or the server) together used less than 50 µs of CPU in a 500 µs poll, that last poll included (so at least about 0.5 ms; at most 2 s). Work a proxy does after forwarding the answer (weir run scans a result for injections after forwarding it) shows here and in proxy_cpu_us_per_call, not in latency.",
	"added_vs_direct":       "Path percentile minus the direct path's percentile of the same loop (so p99 − p99, not a percentile of per-call differences). Can be negative at a tail when the difference is within noise.",
	"added_vs_relay":        "Path percentile minus the bare relay's: what Weir costs beyond the unavoidable extra hop.",
	"proxy_cpu_us_per_call": "CPU time of the proxy process (all threads, from /proc/PID/task/*/schedstat) during the latency loop, divided by its calls.",
	"throughput":            "N client goroutines each keep one tools/call in flight over the one connection (ids pipelined), for `rounds` rounds of `seconds_per_round`, the paths taking turns round by round after a warm-up; calls_per_sec = calls answered / seconds. p50/p99 are the latencies of those calls under that load.",
	"long_session":          "One weir run proxy in front of the Go echo server, with a policy that labels its echo tool private and its send tool a sink, is fed results of result_bytes (each a different text), one call at a time, each on a quiet proxy; at each checkpoint its VmRSS and VmHWM (/proc/PID/status) and the sizes of WEIR_HOME's state.db and state.db-wal are read. Then `joins` proxies, one after another, start on the same WEIR_HOME and WEIR_SESSION while the first still runs, and each sends initialize and one send whose body quotes 1 KB of the newest result: from_start is from just before the process is started to that call's answer, from_request from the call's request to its answer.",
	"tools_list":            "The Go echo server lists a real catalogue (testdata/catalogues) as its tools/list answer. first_listing: the first tools/list after initialize of a freshly started path (weir with a new WEIR_HOME, so every definition is checked and pinned on first use), `starts` starts per path, paths in rotating order; repeated_listing: later tools/list calls on one connection per path, paths alternating, each on quiet processes. Ratios are weir-default's p50 over direct's.",
	"peak_rss":              "VmHWM of the proxy process (weir run or the relay, not the server) from /proc/PID/status after all latency and throughput work on that server: its peak resident set over the whole run.",
}

func main() {
	out := flag.String("o", "bench/results/overhead.json", "results file")
	quick := flag.Bool("quick", false, "a few calls per measurement, for tests (the numbers mean little)")
	weir := flag.String("weir", "", "prebuilt weir binary (default: go build ./cmd/weir into a temporary folder)")
	servers := flag.String("servers", "go-echo,server-everything", "servers to measure, comma-separated")
	keep := flag.Bool("keep", false, "keep the temporary folder (weir homes, state files) and print its path")
	only := flag.String("only", "latency,long,list", "parts to measure, comma-separated: latency (latency, throughput and peak RSS per server), long (the long session), list (tools/list of a large catalogue); parts not measured are kept from the existing results file")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: go run ./bench/overhead [-o FILE] [--quick] [--weir PATH] [--servers LIST] [--only PARTS]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	o := options{out: *out, quick: *quick, weir: *weir, args: os.Args[1:], parts: list(*only), keep: *keep}
	o.servers = list(*servers)
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "overhead:", err)
		os.Exit(1)
	}
}

type options struct {
	out     string
	quick   bool
	weir    string
	servers []string
	parts   []string // latency, long, list
	keep    bool
	args    []string // for the record
}

func list(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

var allParts = []string{"latency", "long", "list"}

// plan returns the sample counts. The full run takes about four minutes
// on a 2-core machine; see README.md.
func plan(quick bool) Method {
	m := Method{Paths: pathDoc, Definitions: definitions}
	if quick {
		m.Latency = []SizePlan{{"1KB", 1 << 10, 30, 5}, {"64KB", 64 << 10, 15, 3}, {"1MB", 1 << 20, 5, 1}}
		m.Throughput = ThroughputPlan{ResultBytes: 1 << 10, Concurrency: []int{1, 8, 64}, Rounds: 1, SecondsPerRound: 0.2, WarmupSeconds: 0.05}
		m.LongSession = LongPlan{ResultBytes: 4 << 10, Checkpoints: []int{50, 200}, Joins: 1, Fleet: 2}
		m.ToolsList = ListPlan{Catalogue: listCatalogue, Starts: 2, Iterations: 5, Warmup: 1}
		return m
	}
	m.LongSession = LongPlan{ResultBytes: 4 << 10, Checkpoints: []int{1000, 5000, 20000}, Joins: 5, Fleet: 10}
	m.ToolsList = ListPlan{Catalogue: listCatalogue, Starts: 10, Iterations: 200, Warmup: 20}
	m.Latency = []SizePlan{{"1KB", 1 << 10, 2000, 200}, {"64KB", 64 << 10, 600, 60}, {"1MB", 1 << 20, 120, 12}}
	m.Throughput = ThroughputPlan{ResultBytes: 1 << 10, Concurrency: []int{1, 8, 64}, Rounds: 3, SecondsPerRound: 1, WarmupSeconds: 0.3}
	return m
}

// listCatalogue is the largest real catalogue in testdata/catalogues.
const listCatalogue = "testdata/catalogues/gitlab.json"

func run(o options) error {
	start := time.Now()
	root, err := sysinfo.RepoRoot()
	if err != nil {
		return err
	}
	for _, s := range o.servers {
		if s != "go-echo" && s != "server-everything" {
			return fmt.Errorf("--servers: unknown server %q; want go-echo or server-everything", s)
		}
	}
	if len(o.parts) == 0 {
		o.parts = allParts
	}
	for _, p := range o.parts {
		if !slices.Contains(allParts, p) {
			return fmt.Errorf("--only: unknown part %q; want %s", p, strings.Join(allParts, ", "))
		}
	}
	// Parts not measured now are kept from the file this run rewrites.
	f, err := readResults(o.out)
	if err != nil {
		return err
	}
	if f == nil {
		if !slices.Contains(o.parts, "latency") {
			return fmt.Errorf("--only %s keeps the latency part of %s, which does not exist; measure latency too", strings.Join(o.parts, ","), o.out)
		}
		f = &File{}
	}
	p := plan(o.quick)
	f.Method.Paths, f.Method.Definitions = p.Paths, p.Definitions

	tmp, err := os.MkdirTemp("", "weir-bench-overhead-")
	if err != nil {
		return err
	}
	if o.keep {
		defer fmt.Fprintln(os.Stderr, "kept", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	bin, err := build(root, tmp, o.weir)
	if err != nil {
		return err
	}
	meta := func(t time.Time) Meta {
		m := Meta{
			Date:       t.UTC().Format(time.RFC3339),
			Machine:    sysinfo.This(),
			Go:         runtime.Version(),
			Weir:       strings.TrimSpace(sysinfo.Output(bin.weir, "version")),
			Command:    strings.Join(append([]string{"go run ./bench/overhead"}, o.args...), " "),
			Quick:      o.quick,
			LoadBefore: sysinfo.LoadAvg(),
		}
		m.Commit, m.Uncommitted = sysinfo.Commit(root)
		return m
	}
	done := func(m *Meta, t time.Time) {
		m.LoadAfter = sysinfo.LoadAvg()
		m.WallSeconds = sysinfo.Round(time.Since(t).Seconds(), 1)
	}
	if slices.Contains(o.parts, "latency") {
		t := time.Now()
		f.Meta = meta(start)
		f.Method.Latency, f.Method.Throughput = p.Latency, p.Throughput
		if f.Servers, err = measureServers(o, root, bin, tmp, f); err != nil {
			return err
		}
		done(&f.Meta, t)
	}
	if slices.Contains(o.parts, "long") {
		t := time.Now()
		m := meta(t)
		l, err := longSession(bin, tmp, p.LongSession)
		if err != nil {
			return fmt.Errorf("long session: %w", err)
		}
		done(&m, t)
		l.Meta, f.LongSession, f.Method.LongSession = m, l, p.LongSession
	}
	if slices.Contains(o.parts, "list") {
		t := time.Now()
		m := meta(t)
		l, err := toolsList(root, bin, tmp, p.ToolsList)
		if err != nil {
			return fmt.Errorf("tools/list: %w", err)
		}
		done(&m, t)
		l.Meta, f.ToolsList, f.Method.ToolsList = m, l, p.ToolsList
	}
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(o.out), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(o.out, append(data, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "wrote %s in %.0fs\n", o.out, time.Since(start).Seconds())
	summary(f)
	return nil
}

// readResults reads an existing results file, nil if there is none.
func readResults(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var f File
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &f, nil
}

// measureServers is the latency part: latency, throughput and peak RSS
// of every path against each server.
func measureServers(o options, root string, bin binaries, tmp string, f *File) ([]*ServerResult, error) {
	var everything []string
	f.Meta.Node = ""
	if slices.Contains(o.servers, "server-everything") {
		node, err := exec.LookPath("node")
		if err != nil {
			return nil, fmt.Errorf("server-everything needs node: %v (or pass --servers go-echo)", err)
		}
		js := filepath.Join(root, "testdata/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
		if _, err := os.Stat(js); err != nil {
			return nil, fmt.Errorf("server-everything is not installed (run `make deps`): %v", err)
		}
		everything = []string{node, js}
		f.Meta.Node = strings.TrimSpace(sysinfo.Output(node, "--version"))
	}
	strict := filepath.Join(tmp, "strict.yaml")
	if err := os.WriteFile(strict, []byte("version: 1\npreset: strict\n"), 0o600); err != nil {
		return nil, err
	}
	var out []*ServerResult
	for _, s := range o.servers {
		var sv server
		switch s {
		case "go-echo":
			sv = server{name: s, weirName: "echo", argv: []string{bin.echo},
				command: "bench/overhead/echo (go build)",
				request: `tools/call echo {"size": N}: a small request; the result's text is N bytes of ASCII prose`,
				params:  func(n int) string { return fmt.Sprintf(`{"name":"echo","arguments":{"size":%d}}`, n) }}
		case "server-everything":
			sv = server{name: s, weirName: "everything", argv: everything,
				command: "node testdata/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js (stdio)",
				request: `tools/call echo {"message": M}, M = N − 6 bytes of ASCII prose: the result's text is "Echo: " + M, N bytes, so request and result are both about N bytes`,
				params: func(n int) string {
					return `{"name":"echo","arguments":{"message":"` + proseText(n-6) + `"}}`
				}}
		}
		r, err := measureServer(sv, bin, strict, tmp, f.Method)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// summary prints the headline numbers on stderr.
func summary(f *File) {
	for _, s := range f.Servers {
		fmt.Fprintf(os.Stderr, "%s: added latency per tools/call, µs (p50 / p99)\n", s.Server)
		for _, l := range s.Latency {
			fmt.Fprintf(os.Stderr, "  %-5s direct %.0f / %.0f", l.Size, l.Paths["direct"].P50, l.Paths["direct"].P99)
			for _, p := range paths[1:] {
				fmt.Fprintf(os.Stderr, "   %s +%.0f / +%.0f", p, l.AddedVsDirect[p].P50, l.AddedVsDirect[p].P99)
			}
			fmt.Fprintln(os.Stderr)
		}
		for _, t := range s.Throughput {
			fmt.Fprintf(os.Stderr, "  calls/s at %2d in flight:", t.Concurrency)
			for _, p := range paths {
				fmt.Fprintf(os.Stderr, "  %s %.0f", p, t.Paths[p].CallsPerSec)
			}
			fmt.Fprintln(os.Stderr)
		}
	}
	if l := f.LongSession; l != nil {
		for _, c := range l.Checkpoints {
			fmt.Fprintf(os.Stderr, "long session: %6d results: RSS %.1f MB (peak %.1f), state.db %.1f MB + wal %.1f MB\n", c.Results, c.RSSMB, c.HWMMB, c.StateDBMB, c.StateWALMB)
		}
		fmt.Fprintf(os.Stderr, "long session: idle RSS %.1f MB; joining proxy's first decision %.1f ms from start, %.1f ms from the request (%s), RSS %.1f MB\n",
			l.Idle.RSSMB, l.Join.FromStartMS, l.Join.FromRequestMS, l.Join.Rule, l.Join.RSSMB)
	}
	if t := f.ToolsList; t != nil {
		fmt.Fprintf(os.Stderr, "tools/list of %d tools, p50 weir-default / direct: first ×%.2f, repeated ×%.2f\n", t.Tools, t.FirstRatio, t.RepeatedRatio)
	}
}
