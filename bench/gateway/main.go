// Command gateway measures Weir's HTTP fronts under load, side by side in
// one run: the same client workload, many concurrent go-sdk Streamable HTTP
// sessions each calling one simple tool over and over, against
//
//	direct             the go-sdk conformance everything-server itself
//	serve              weir serve --upstream EVERYTHING (one server behind Weir)
//	gateway            weir gateway with EVERYTHING as its one HTTP server
//	gateway-pg         the same, its state in PostgreSQL (store: {url})
//	gateway-2x-sqlite  two gateway processes sharing one WEIR_HOME (one state.db)
//	gateway-2x-pg      two gateway processes, a WEIR_HOME each and one key,
//	                   sharing one PostgreSQL database (replicas)
//
// Sessions are spread over a target's replicas round-robin, as a load
// balancer with session affinity would. It reports calls per second, the
// latency of each call at p50/p90/p99, what Weir adds against the direct
// run, every call's fate (answered with a result, answered with an error,
// or lost: never answered), and the peak RSS and CPU per call of each weir
// process (and of the PostgreSQL cluster).
//
//	go run ./bench/gateway                      # bench/results/gateway.json
//	go run ./bench/gateway -sessions 4 -calls 5 -o x.json
//
// Every number comes from one run on one machine; the targets run one
// after the other, each after a short warm-up, with the same everything-
// server behind all of them. The PostgreSQL targets need the server
// binaries (internal/store/pgtest starts a throwaway cluster on loopback);
// without them they are skipped, and the results say so.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/weir-sec/weir/bench/internal/mdblock"
	"github.com/weir-sec/weir/bench/internal/sysinfo"
)

// File is what bench/results/gateway.json holds.
type File struct {
	Meta    Meta      `json:"meta"`
	Method  Method    `json:"method"`
	Targets []*Result `json:"targets"`
	// Skipped are the targets this run could not measure, and why.
	Skipped []Skipped `json:"skipped,omitempty"`
}

// Skipped is a target left out of a run.
type Skipped struct {
	Target string `json:"target"`
	Reason string `json:"reason"`
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
	GoSDK       string          `json:"go_sdk"`
	Weir        string          `json:"weir"`
	Command     string          `json:"command"`
	// PostgreSQL is the version the PostgreSQL targets ran against.
	PostgreSQL string `json:"postgresql,omitempty"`
	// Load averages (1, 5, 15 minutes) before and after: the machine may
	// be shared.
	LoadBefore  []float64 `json:"load_before"`
	LoadAfter   []float64 `json:"load_after"`
	WallSeconds float64   `json:"wall_seconds"`
}

// Method records the workload.
type Method struct {
	Sessions           int               `json:"sessions"`
	CallsPerSession    int               `json:"calls_per_session"`
	DurationCapSeconds float64           `json:"duration_cap_seconds"`
	CallTimeoutSeconds float64           `json:"call_timeout_seconds"`
	WarmupCalls        int               `json:"warmup_calls"`
	Client             string            `json:"client"`
	Server             string            `json:"server"`
	Request            string            `json:"request"`
	Store              string            `json:"store"`
	Targets            map[string]string `json:"targets"`
	Definitions        map[string]string `json:"definitions"`
}

// Result is one target's run.
type Result struct {
	Target         string `json:"target"`
	Sessions       int    `json:"sessions"`
	SessionsOpened int    `json:"sessions_opened"`
	// SessionErrors are sessions whose initialize failed; their calls were
	// never sent.
	SessionErrors int  `json:"session_errors"`
	CallsPlanned  int  `json:"calls_planned"`
	CallsSent     int  `json:"calls_sent"`
	Answered      int  `json:"answered"`
	OK            int  `json:"ok"`
	Errors        int  `json:"errors"`
	Lost          int  `json:"lost"`
	Capped        bool `json:"capped"`
	// Seconds is from the first session's start to the last answer.
	Seconds     float64 `json:"seconds"`
	CallsPerSec float64 `json:"calls_per_sec"`
	// Latency is of answered tools/call requests, Initialize of the
	// session handshakes (initialize + notifications/initialized).
	Latency    Percentiles `json:"latency_us"`
	Initialize Percentiles `json:"initialize_us"`
	// AddedVsDirect is this target's percentile minus direct's.
	AddedVsDirect *Added `json:"added_vs_direct_us,omitempty"`
	// The weir processes (none for direct): the sum over the replicas,
	// each of which is in Replicas.
	WeirPeakRSSMB      float64    `json:"weir_peak_rss_mb,omitempty"`
	WeirCPUUsPerCall   float64    `json:"weir_cpu_us_per_call,omitempty"`
	Replicas           []*Replica `json:"replicas,omitempty"`
	ServerCPUUsPerCall float64    `json:"server_cpu_us_per_call"`
	// StoreCPUUsPerCall is the PostgreSQL cluster's, for its targets.
	StoreCPUUsPerCall float64  `json:"store_cpu_us_per_call,omitempty"`
	ErrorSamples      []string `json:"error_samples,omitempty"`
}

// Replica is one weir process of a target.
type Replica struct {
	Sessions     int     `json:"sessions"`
	CallsSent    int     `json:"calls_sent"`
	Answered     int     `json:"answered"`
	Lost         int     `json:"lost"`
	PeakRSSMB    float64 `json:"peak_rss_mb"`
	CPUUsPerCall float64 `json:"cpu_us_per_call"`
}

// Percentiles are microseconds, nearest-rank.
type Percentiles struct {
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// Added is a difference of percentiles, microseconds.
type Added struct {
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
}

var targetDoc = map[string]string{
	"direct":            "the client talks to the everything-server's Streamable HTTP endpoint (stateful, -stateless=false)",
	"serve":             "weir serve --upstream EVERYTHING --name everything --rate 1e6, fresh WEIR_HOME, no WEIR_SESSION (each HTTP session its own taint session); the built-in default policy",
	"gateway":           "one weir gateway --config C, C = {rate: 1e6, servers: {ev: {url: EVERYTHING}}}, fresh WEIR_HOME, no WEIR_SESSION, state in $WEIR_HOME/state.db (SQLite); the tool is called as ev__test_simple_text",
	"gateway-pg":        "one weir gateway as for gateway, C with store: {url: postgres://postgres@127.0.0.1:PORT/DB?sslmode=disable} added: state in a fresh PostgreSQL database (see store), the pool at pgx's defaults; fresh WEIR_HOME (key and audit log)",
	"gateway-2x-sqlite": "two weir gateway processes, the C of gateway, each on its own loopback port, one fresh WEIR_HOME shared by both (one state.db, one key, one audit log); the second started once the first was healthy; session i talks to replica i mod 2",
	"gateway-2x-pg":     "two weir gateway processes, the C of gateway-pg (one fresh PostgreSQL database), each on its own loopback port with a fresh WEIR_HOME of its own (as on two machines) holding the same 32-byte key file ($WEIR_HOME/key, written before they start); session i talks to replica i mod 2",
}

var definitions = map[string]string{
	"workload":         "`sessions` goroutines start together; each opens its own session (one go-sdk client, its own Mcp-Session-Id and standalone SSE stream), sends `calls_per_session` tools/call one after another, then closes the session (DELETE). All sessions share one http.Client with keep-alive.",
	"duration_cap":     "No session sends a call after duration_cap_seconds from the start of the target's run; capped is true when some planned call was never sent because of it. Calls already sent are waited for.",
	"answered":         "ok + errors. ok: a result without isError. errors: a JSON-RPC error or an isError result (the answer came, it said no).",
	"lost":             "A call sent that got no JSON-RPC answer: its call_timeout_seconds passed, or the transport failed (connection reset, a non-MCP HTTP status such as 429). Must be 0.",
	"calls_per_sec":    "answered / seconds, seconds from the start of the target's run to its last answer (handshakes included).",
	"latency_us":       "From just before CallTool to its return, for answered calls, nearest-rank percentiles over every call of every session.",
	"added_vs_direct":  "Target percentile minus the direct run's (p50 − p50, p99 − p99), not a percentile of differences.",
	"weir_peak_rss_mb": "VmHWM of the weir process from /proc/PID/status after its run: its peak resident set since it started. For a target of two replicas, the sum of their peaks; replicas[].peak_rss_mb has each.",
	"cpu_us_per_call":  "User + system CPU time (/proc/PID/stat, clock ticks) the process used during the target's run, divided by calls sent; server_cpu_us_per_call is the everything-server's, weir_cpu_us_per_call weir's (every replica's CPU over every call), replicas[].cpu_us_per_call each replica's over the calls sent to it, store_cpu_us_per_call the PostgreSQL cluster's (the postmaster and every backend, exited ones included) for the PostgreSQL targets.",
	"replicas":         "A target of n replicas: session i (of sessions) talks only to replica i mod n, as behind a load balancer with session affinity; warm-up runs one session on each replica.",
	"rate":             "Weir's per-tenant rate limit is raised to 1e6 requests/s for the run, so the numbers are of Weir's capacity, not its default limit of 100/s.",
}

func main() {
	o := options{}
	flag.StringVar(&o.out, "o", "bench/results/gateway.json", "results file")
	flag.IntVar(&o.sessions, "sessions", 64, "concurrent client sessions per target")
	flag.IntVar(&o.calls, "calls", 200, "tools/call requests per session")
	flag.DurationVar(&o.cap, "duration", 15*time.Second, "per target: no call is sent after this long (the run is capped)")
	flag.DurationVar(&o.callTimeout, "call-timeout", 30*time.Second, "a call not answered within this is lost")
	flag.StringVar(&o.weir, "weir", "", "prebuilt weir binary (default: go build ./cmd/weir into a temporary folder)")
	flag.StringVar(&o.readme, "readme", "", "also rewrite the bench:gateway block of this Markdown file (README.md)")
	flag.StringVar(&o.everything, "everything", "", "prebuilt go-sdk everything-server (default: go build it into a temporary folder)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: go run ./bench/gateway [-o FILE] [-sessions N] [-calls N] [-duration D]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 || o.sessions < 1 || o.calls < 1 || o.cap <= 0 || o.callTimeout <= 0 {
		flag.Usage()
		os.Exit(2)
	}
	o.args = os.Args[1:]
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	f, err := run(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gateway:", err)
		os.Exit(1)
	}
	table(os.Stdout, f)
	if o.readme != "" {
		if err := mdblock.Replace(o.readme, "<!-- bench:gateway:start (generated by go run ./bench/gateway --readme README.md; do not edit) -->", "<!-- bench:gateway:end -->", markdown(f)); err != nil {
			fmt.Fprintln(os.Stderr, "gateway:", err)
			os.Exit(1)
		}
	}
	for _, t := range f.Targets {
		if t.Lost > 0 {
			fmt.Fprintf(os.Stderr, "gateway: %s lost %d answers\n", t.Target, t.Lost)
			os.Exit(1)
		}
	}
}

type options struct {
	readme      string
	out         string
	sessions    int
	calls       int
	cap         time.Duration
	callTimeout time.Duration
	weir        string
	everything  string
	args        []string // for the record
}

const warmupCalls = 20

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "gateway: "+format+"\n", args...)
}

func run(ctx context.Context, o options) (*File, error) {
	start := time.Now()
	root, err := sysinfo.RepoRoot()
	if err != nil {
		return nil, err
	}
	// Bounded: each of the six targets takes at most its cap, the call
	// timeout and the time to start; a minute on top covers the builds.
	ctx, cancel := context.WithTimeout(ctx, 6*(o.cap+o.callTimeout+30*time.Second)+time.Minute)
	defer cancel()

	f := &File{Method: Method{
		Sessions: o.sessions, CallsPerSession: o.calls, DurationCapSeconds: o.cap.Seconds(), CallTimeoutSeconds: o.callTimeout.Seconds(),
		WarmupCalls: warmupCalls,
		Client:      "go-sdk mcp.Client + StreamableClientTransport, protocol 2025-11-25",
		Server:      "github.com/modelcontextprotocol/go-sdk/conformance/everything-server -http ADDR -stateless=false",
		Request:     `tools/call test_simple_text {}: the result is one text content, "This is a simple text response for testing."`,
		Store:       storeDoc,
		Targets:     targetDoc, Definitions: definitions,
	}}
	f.Meta = Meta{
		Date:       start.UTC().Format(time.RFC3339),
		Machine:    sysinfo.This(),
		Go:         runtime.Version(),
		GoSDK:      goSDKVersion(),
		Command:    strings.Join(append([]string{"go run ./bench/gateway"}, o.args...), " "),
		LoadBefore: sysinfo.LoadAvg(),
	}
	f.Meta.Commit, f.Meta.Uncommitted = sysinfo.Commit(root)

	tmp, err := os.MkdirTemp("", "weir-bench-gateway-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	weirBin, everythingBin, err := build(root, tmp, o)
	if err != nil {
		return nil, err
	}
	f.Meta.Weir = strings.TrimSpace(sysinfo.Output(weirBin, "version"))

	var (
		procs []*daemon
		pg    *pgCluster
	)
	defer func() { // the gateways first, so none outlives its store
		for _, p := range procs {
			p.stop()
		}
		if pg != nil {
			pg.stop()
		}
	}()
	evAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	ev, err := startDaemon(ctx, tmp, "everything-server", nil, everythingBin, "-http", evAddr, "-stateless=false")
	if err != nil {
		return nil, err
	}
	procs = append(procs, ev)
	if err := waitTCP(ctx, ev, evAddr); err != nil {
		return nil, err
	}
	evURL := "http://" + evAddr + "/mcp"

	weirEnv := func(home string) []string {
		return []string{"WEIR_HOME=" + home, "WEIR_SESSION=", "WEIR_TOKENS=", "NO_COLOR=1", "WEIR_STORE_URL="}
	}
	// startWeir starts one weir daemon on a free loopback port and waits
	// until it is healthy, so that replicas sharing a home do not race to
	// create its key and state file.
	startWeir := func(name, home string, args ...string) (*daemon, string, error) {
		addr, err := freeAddr()
		if err != nil {
			return nil, "", err
		}
		d, err := startDaemon(ctx, tmp, name, weirEnv(home), append(append([]string{weirBin}, args...), "--listen", addr)...)
		if err != nil {
			return nil, "", err
		}
		procs = append(procs, d)
		if err := waitHealthy(ctx, d, addr); err != nil {
			return nil, "", err
		}
		return d, "http://" + addr + "/mcp", nil
	}
	gatewayConfig := func(name, storeURL string) (string, error) {
		cfg := fmt.Sprintf("rate: 1000000\nservers:\n  ev: {url: %q}\n", evURL)
		if storeURL != "" {
			cfg = fmt.Sprintf("store: {url: %q}\n", storeURL) + cfg
		}
		path := filepath.Join(tmp, name+".yaml")
		return path, os.WriteFile(path, []byte(cfg), 0o600)
	}
	// replicas starts n gateways on cfg; homes[i] is replica i's.
	replicas := func(t *target, cfg string, homes ...string) error {
		for i, home := range homes {
			name := "weir-" + t.name
			if len(homes) > 1 {
				name += "-" + strconv.Itoa(i+1)
			}
			d, url, err := startWeir(name, home, "gateway", "--config", cfg)
			if err != nil {
				return err
			}
			t.urls, t.weirs = append(t.urls, url), append(t.weirs, d)
		}
		return nil
	}

	serve, serveURL, err := startWeir("weir-serve", filepath.Join(tmp, "home-serve"), "serve",
		"--upstream", evURL, "--name", "everything", "--rate", "1000000")
	if err != nil {
		return nil, err
	}
	targets := []*target{
		{name: "direct", urls: []string{evURL}, tool: "test_simple_text"},
		{name: "serve", urls: []string{serveURL}, tool: "test_simple_text", weirs: []*daemon{serve}},
	}
	sqliteCfg, err := gatewayConfig("gateway", "")
	if err != nil {
		return nil, err
	}
	gw := &target{name: "gateway", tool: "ev__test_simple_text"}
	if err := replicas(gw, sqliteCfg, filepath.Join(tmp, "home-gateway")); err != nil {
		return nil, err
	}
	targets = append(targets, gw)

	if reason := pgMissing(); reason != "" {
		for _, name := range []string{"gateway-pg", "gateway-2x-pg"} {
			f.Skipped = append(f.Skipped, Skipped{Target: name, Reason: reason})
		}
		progress("skipping the PostgreSQL targets: %s", reason)
	} else {
		progress("starting a PostgreSQL cluster")
		if pg, err = startPG(ctx, 2); err != nil {
			return nil, err
		}
		f.Meta.PostgreSQL = pg.version
		pgCfg, err := gatewayConfig("gateway-pg", pg.urls[0])
		if err != nil {
			return nil, err
		}
		t := &target{name: "gateway-pg", tool: "ev__test_simple_text", pg: pg}
		if err := replicas(t, pgCfg, filepath.Join(tmp, "home-gateway-pg")); err != nil {
			return nil, err
		}
		targets = append(targets, t)
	}

	two := &target{name: "gateway-2x-sqlite", tool: "ev__test_simple_text"}
	home := filepath.Join(tmp, "home-gateway-2x-sqlite")
	if err := replicas(two, sqliteCfg, home, home); err != nil {
		return nil, err
	}
	targets = append(targets, two)

	if pg != nil {
		cfg, err := gatewayConfig("gateway-2x-pg", pg.urls[1])
		if err != nil {
			return nil, err
		}
		homes := []string{filepath.Join(tmp, "home-gateway-2x-pg-1"), filepath.Join(tmp, "home-gateway-2x-pg-2")}
		if err := shareKey(homes...); err != nil {
			return nil, err
		}
		t := &target{name: "gateway-2x-pg", tool: "ev__test_simple_text", pg: pg}
		if err := replicas(t, cfg, homes...); err != nil {
			return nil, err
		}
		targets = append(targets, t)
	}

	for _, t := range targets {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		r, err := measure(ctx, o, t, ev)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.name, err)
		}
		f.Targets = append(f.Targets, r)
	}
	direct := f.Targets[0]
	for _, r := range f.Targets[1:] {
		r.AddedVsDirect = &Added{P50: sysinfo.Round(r.Latency.P50-direct.Latency.P50, 0), P99: sysinfo.Round(r.Latency.P99-direct.Latency.P99, 0)}
	}

	f.Meta.LoadAfter = sysinfo.LoadAvg()
	f.Meta.WallSeconds = sysinfo.Round(time.Since(start).Seconds(), 1)
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(o.out), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(o.out, append(data, '\n'), 0o644); err != nil {
		return nil, err
	}
	progress("wrote %s in %.0fs", o.out, time.Since(start).Seconds())
	return f, nil
}

// build makes the binaries the run needs that were not given.
func build(root, dir string, o options) (weir, everything string, err error) {
	weir, everything = o.weir, o.everything
	for _, b := range []struct {
		path *string
		name string
		pkg  string
	}{
		{&weir, "weir", "./cmd/weir"},
		{&everything, "everything-server", "github.com/modelcontextprotocol/go-sdk/conformance/everything-server"},
	} {
		if *b.path != "" {
			if abs, err := filepath.Abs(*b.path); err == nil {
				*b.path = abs
			}
			continue
		}
		*b.path = filepath.Join(dir, b.name)
		progress("go build -o %s %s", b.name, b.pkg)
		cmd := exec.Command("go", "build", "-o", *b.path, b.pkg)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", "", fmt.Errorf("go build %s: %v\n%s", b.pkg, err, out)
		}
	}
	return weir, everything, nil
}

type target struct {
	name string
	// urls are the replicas' endpoints: session i talks to urls[i%len].
	urls  []string
	tool  string
	weirs []*daemon  // one per url; none for direct
	pg    *pgCluster // the store of the PostgreSQL targets
}

// outcome is one session's tally.
type outcome struct {
	opened    bool
	initTook  time.Duration
	sent      int
	ok        int
	errs      int
	lost      int
	latencies []time.Duration
	samples   []string
	capped    bool
}

// measure runs the workload against one target.
func measure(ctx context.Context, o options, t *target, server *daemon) (*Result, error) {
	hc := &http.Client{Transport: &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        4 * o.sessions,
		MaxIdleConnsPerHost: 4 * o.sessions,
		IdleConnTimeout:     30 * time.Second,
	}}
	defer hc.CloseIdleConnections()
	client := mcp.NewClient(&mcp.Implementation{Name: "weir-bench-gateway", Version: "1.0.0"}, nil)

	// Warm-up: one session on each replica, not counted.
	progress("%s: warm-up (%d calls on each of %d)", t.name, warmupCalls, len(t.urls))
	for _, url := range t.urls {
		if w := session(ctx, client, hc, url, t.tool, warmupCalls, time.Now().Add(o.cap), o.callTimeout); !w.opened || w.ok != warmupCalls {
			return nil, fmt.Errorf("warm-up against %s failed: opened %v, %d of %d calls ok: %v", url, w.opened, w.ok, warmupCalls, w.samples)
		}
	}

	progress("%s: %d sessions × %d calls over %d (cap %s)", t.name, o.sessions, o.calls, len(t.urls), o.cap)
	serverCPU0 := cpuTicks(server.pid())
	weirCPU0 := make([]time.Duration, len(t.weirs))
	for i, w := range t.weirs {
		weirCPU0[i] = cpuTicks(w.pid())
	}
	var storeCPU0 time.Duration
	if t.pg != nil {
		storeCPU0 = t.pg.cpu()
	}
	start := time.Now()
	stopAt := start.Add(o.cap)
	outs := make([]outcome, o.sessions)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		answered int
		last     = start
	)
	done := make(chan struct{})
	go func() { // progress every 2s
		tick := time.NewTicker(2 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				mu.Lock()
				n := answered
				mu.Unlock()
				progress("%s: %d/%d answered, %.0f/s", t.name, n, o.sessions*o.calls, float64(n)/time.Since(start).Seconds())
			}
		}
	}()
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i] = sessionCounting(ctx, client, hc, t.urls[i%len(t.urls)], t.tool, o.calls, stopAt, o.callTimeout, func() {
				mu.Lock()
				answered++
				last = time.Now()
				mu.Unlock()
			})
		}()
	}
	wg.Wait()
	close(done)
	elapsed := last.Sub(start)
	if elapsed <= 0 {
		elapsed = time.Since(start)
	}
	// Read before any other target's load: the figures are this run's.
	var storeCPU time.Duration
	if t.pg != nil {
		storeCPU = t.pg.cpu() - storeCPU0
	}
	weirCPU := make([]time.Duration, len(t.weirs))
	for i, w := range t.weirs {
		weirCPU[i] = cpuTicks(w.pid()) - weirCPU0[i]
	}
	serverCPU := cpuTicks(server.pid()) - serverCPU0

	r := &Result{Target: t.name, Sessions: o.sessions, CallsPlanned: o.sessions * o.calls, Seconds: sysinfo.Round(elapsed.Seconds(), 3)}
	for range t.weirs {
		r.Replicas = append(r.Replicas, &Replica{})
	}
	var lat, inits []time.Duration
	for i, s := range outs {
		if s.opened {
			r.SessionsOpened++
			inits = append(inits, s.initTook)
		} else {
			r.SessionErrors++
		}
		r.CallsSent += s.sent
		r.OK += s.ok
		r.Errors += s.errs
		r.Lost += s.lost
		r.Capped = r.Capped || s.capped
		lat = append(lat, s.latencies...)
		for _, m := range s.samples {
			if len(r.ErrorSamples) < 5 && !slices.Contains(r.ErrorSamples, m) {
				r.ErrorSamples = append(r.ErrorSamples, m)
			}
		}
		if len(r.Replicas) > 0 {
			rep := r.Replicas[i%len(r.Replicas)]
			rep.Sessions++
			rep.CallsSent += s.sent
			rep.Answered += s.ok + s.errs
			rep.Lost += s.lost
		}
	}
	r.Answered = r.OK + r.Errors
	r.CallsPerSec = sysinfo.Round(float64(r.Answered)/elapsed.Seconds(), 1)
	r.Latency = percentiles(lat)
	r.Initialize = percentiles(inits)
	r.ServerCPUUsPerCall = perCall(serverCPU, r.CallsSent)
	r.StoreCPUUsPerCall = perCall(storeCPU, r.CallsSent)
	var rss float64
	var allCPU time.Duration
	for i, w := range t.weirs {
		kb, err := sysinfo.VmHWM(w.pid())
		if err != nil {
			return nil, err
		}
		rep := r.Replicas[i]
		rep.PeakRSSMB = sysinfo.Round(float64(kb)/1024, 1)
		rep.CPUUsPerCall = perCall(weirCPU[i], rep.CallsSent)
		rss += float64(kb) / 1024
		allCPU += weirCPU[i]
	}
	if len(t.weirs) > 0 {
		r.WeirPeakRSSMB = sysinfo.Round(rss, 1)
		r.WeirCPUUsPerCall = perCall(allCPU, r.CallsSent)
	}
	progress("%s: %d ok, %d errors, %d lost, %.0f calls/s, p50 %.2f ms, p99 %.2f ms",
		t.name, r.OK, r.Errors, r.Lost, r.CallsPerSec, r.Latency.P50/1000, r.Latency.P99/1000)
	return r, nil
}

// perCall is CPU time per call in microseconds, 0 when no call was sent.
func perCall(cpu time.Duration, calls int) float64 {
	if calls == 0 {
		return 0
	}
	return sysinfo.Round(float64(cpu)/float64(time.Microsecond)/float64(calls), 1)
}

func session(ctx context.Context, client *mcp.Client, hc *http.Client, url, tool string, calls int, stopAt time.Time, callTimeout time.Duration) outcome {
	return sessionCounting(ctx, client, hc, url, tool, calls, stopAt, callTimeout, func() {})
}

// sessionCounting opens one session, sends calls tools/call one after
// another (none after stopAt) and closes it; answered is called after
// each answer.
func sessionCounting(ctx context.Context, client *mcp.Client, hc *http.Client, url, tool string, calls int, stopAt time.Time, callTimeout time.Duration, answered func()) outcome {
	var o outcome
	note := func(err error) {
		if len(o.samples) < 3 {
			o.samples = append(o.samples, err.Error())
		}
	}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	began := time.Now()
	cs, err := client.Connect(cctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	cancel()
	if err != nil {
		note(fmt.Errorf("initialize: %w", err))
		return o
	}
	o.opened, o.initTook = true, time.Since(began)
	defer cs.Close()
	params := &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}}
	o.latencies = make([]time.Duration, 0, calls)
	for i := 0; i < calls; i++ {
		if time.Now().After(stopAt) || ctx.Err() != nil {
			o.capped = true
			break
		}
		o.sent++
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		began := time.Now()
		res, err := cs.CallTool(cctx, params)
		took := time.Since(began)
		cancel()
		var wire *jsonrpc.Error
		switch {
		case err == nil && !res.IsError:
			o.ok++
		case err == nil:
			o.errs++
			note(errors.New("isError result: " + resultText(res)))
		// The go-sdk fails the calls of a broken connection with an
		// error that wraps a JSON-RPC one it made itself: no answer came.
		case errors.As(err, &wire) && !errors.Is(err, mcp.ErrConnectionClosed):
			o.errs++
			note(err)
		default:
			o.lost++
			note(err)
			continue
		}
		o.latencies = append(o.latencies, took)
		answered()
	}
	return o
}

func resultText(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

func percentiles(d []time.Duration) Percentiles {
	if len(d) == 0 {
		return Percentiles{}
	}
	s := slices.Clone(d)
	slices.Sort(s)
	at := func(p float64) float64 {
		i := int(math.Ceil(p/100*float64(len(s)))) - 1
		i = max(0, min(i, len(s)-1))
		return sysinfo.Round(float64(s[i])/float64(time.Microsecond), 0)
	}
	return Percentiles{P50: at(50), P90: at(90), P99: at(99), Max: at(100)}
}

// table prints the headline numbers.
func table(w io.Writer, f *File) {
	fmt.Fprintf(w, "%d sessions × %d tools/call each (cap %.0fs per target), %s, %d cores\n",
		f.Method.Sessions, f.Method.CallsPerSession, f.Method.DurationCapSeconds, f.Meta.Machine.CPU, f.Meta.Machine.Cores)
	fmt.Fprintf(w, "%-17s %8s %7s %6s %5s %8s %8s %8s %9s %9s %13s %9s %8s\n",
		"target", "answered", "errors", "lost", "capd", "calls/s", "p50 ms", "p99 ms", "+p50 ms", "+p99 ms", "RSS MB", "cpu µs/c", "pg µs/c")
	for _, r := range f.Targets {
		added50, added99, rss, cpu, pg := "—", "—", "—", fmt.Sprintf("%.0f", r.ServerCPUUsPerCall), "—"
		if r.AddedVsDirect != nil {
			added50 = fmt.Sprintf("%+.2f", r.AddedVsDirect.P50/1000)
			added99 = fmt.Sprintf("%+.2f", r.AddedVsDirect.P99/1000)
			rss = replicaRSS(r, "%.1f")
			cpu = fmt.Sprintf("%.0f", r.WeirCPUUsPerCall)
		}
		if r.StoreCPUUsPerCall > 0 {
			pg = fmt.Sprintf("%.0f", r.StoreCPUUsPerCall)
		}
		capped := "no"
		if r.Capped {
			capped = "yes"
		}
		fmt.Fprintf(w, "%-17s %8d %7d %6d %5s %8.0f %8.2f %8.2f %9s %9s %13s %9s %8s\n",
			r.Target, r.Answered, r.Errors, r.Lost, capped, r.CallsPerSec, r.Latency.P50/1000, r.Latency.P99/1000, added50, added99, rss, cpu, pg)
	}
	for _, s := range f.Skipped {
		fmt.Fprintf(w, "%-17s skipped: %s\n", s.Target, s.Reason)
	}
	fmt.Fprintln(w, "(RSS: each weir process's peak; cpu µs/c: the everything-server's for direct, weir's otherwise (all replicas); pg µs/c: the PostgreSQL cluster's)")
}

// replicaRSS is each replica's peak RSS, joined with " + ".
func replicaRSS(r *Result, format string) string {
	var parts []string
	for _, rep := range r.Replicas {
		parts = append(parts, fmt.Sprintf(format, rep.PeakRSSMB))
	}
	return strings.Join(parts, " + ")
}

// markdown is the README's table of the run.
func markdown(f *File) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d concurrent sessions × %d `tools/call` each over Streamable HTTP on loopback, %s, %d cores, %s (`go run ./bench/gateway`, commit %s; latency under full load, so mostly queueing",
		f.Method.Sessions, f.Method.CallsPerSession, f.Meta.Machine.CPU, f.Meta.Machine.Cores, f.Meta.Date, f.Meta.Commit)
	if f.Meta.PostgreSQL != "" {
		fmt.Fprintf(&b, "; %s on the same machine, without fsync", f.Meta.PostgreSQL)
	}
	b.WriteString("):\n\n")
	b.WriteString("| target | answered | errors | lost | calls/s | p50 | p99 | added p50 | added p99 | weir peak RSS | CPU per call |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, r := range f.Targets {
		added50, added99, rss, cpu := "—", "—", "—", fmt.Sprintf("%.0f µs (server)", r.ServerCPUUsPerCall)
		if r.AddedVsDirect != nil {
			added50 = fmt.Sprintf("%+.1f ms", r.AddedVsDirect.P50/1000)
			added99 = fmt.Sprintf("%+.1f ms", r.AddedVsDirect.P99/1000)
			rss = replicaRSS(r, "%.0f") + " MB"
			cpu = fmt.Sprintf("%.0f µs (weir)", r.WeirCPUUsPerCall)
		}
		if r.StoreCPUUsPerCall > 0 {
			cpu += fmt.Sprintf(" + %.0f µs (PostgreSQL)", r.StoreCPUUsPerCall)
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %.0f | %.1f ms | %.1f ms | %s | %s | %s | %s |\n",
			r.Target, r.Answered, r.Errors, r.Lost, r.CallsPerSec, r.Latency.P50/1000, r.Latency.P99/1000, added50, added99, rss, cpu)
	}
	for _, s := range f.Skipped {
		fmt.Fprintf(&b, "| %s | skipped: %s |||||||||\n", s.Target, s.Reason)
	}
	b.WriteString("\n`gateway`: one replica, SQLite; `-pg`: its state in PostgreSQL; `-2x-sqlite`: two processes on one `WEIR_HOME`; `-2x-pg`: two replicas, a home each, one key, one database. Sessions go to the replicas round-robin; RSS is per replica, CPU per call is all replicas' together.\n")
	return b.String()
}

// daemon is a long-running child process with its output in a file.
type daemon struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

func startDaemon(ctx context.Context, dir, name string, env []string, argv ...string) (*daemon, error) {
	log := filepath.Join(dir, name+".log")
	out, err := os.Create(log)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		out.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	d := &daemon{name: name, cmd: cmd, log: log, done: make(chan struct{})}
	go func() {
		cmd.Wait()
		out.Close()
		close(d.done)
	}()
	return d, nil
}

func (d *daemon) pid() int { return d.cmd.Process.Pid }

// stop interrupts the process, then kills it if it lingers.
func (d *daemon) stop() {
	d.cmd.Process.Signal(os.Interrupt)
	select {
	case <-d.done:
	case <-time.After(5 * time.Second):
		d.cmd.Process.Kill()
		<-d.done
	}
}

// tail is the end of the process's output, for an error message.
func (d *daemon) tail() string {
	data, _ := os.ReadFile(d.log)
	if len(data) > 4000 {
		data = data[len(data)-4000:]
	}
	return string(data)
}

func waitTCP(ctx context.Context, d *daemon, addr string) error {
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if err := waitOrExit(ctx, d, deadline); err != nil {
			return err
		}
	}
}

func waitHealthy(ctx context.Context, d *daemon, addr string) error {
	hc := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := hc.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if err := waitOrExit(ctx, d, deadline); err != nil {
			return err
		}
	}
}

func waitOrExit(ctx context.Context, d *daemon, deadline time.Time) error {
	select {
	case <-d.done:
		return fmt.Errorf("%s exited before it was ready; output:\n%s", d.name, d.tail())
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(50 * time.Millisecond):
	}
	if time.Now().After(deadline) {
		return fmt.Errorf("%s was not ready in time; output:\n%s", d.name, d.tail())
	}
	return nil
}

// freeAddr is a loopback address nothing listens on just now.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func goSDKVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/modelcontextprotocol/go-sdk" {
				return d.Version
			}
		}
	}
	return "unknown"
}

// USER_HZ on Linux: the unit of /proc/PID/stat's times.
const hz = 100

// statFields are /proc/PID/stat's fields after the command name: state
// is [0], ppid [1], utime [11], stime [12], cutime [13], cstime [14].
func statFields(pid int) []string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(s[i+1:])
}

// cpuTicks is a process's user + system CPU time from /proc/PID/stat
// (every thread, exited ones included), at clock-tick resolution.
func cpuTicks(pid int) time.Duration {
	f := statFields(pid)
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / hz
}
