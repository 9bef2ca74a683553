package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/weir-sec/weir/bench/internal/sysinfo"
	"github.com/weir-sec/weir/bench/overhead/internal/prose"
)

// server is one MCP server the paths are measured against.
type server struct {
	name, weirName   string
	argv             []string
	command, request string
	// params is the tools/call params for a result of n bytes.
	params func(n int) string
}

// binaries are the programs built for the run.
type binaries struct{ weir, relay, echo string }

// build compiles weir (unless a prebuilt one is given), the relay and the
// echo server, once, into dir.
func build(root, dir, weir string) (binaries, error) {
	b := binaries{weir: weir, relay: filepath.Join(dir, "relay"), echo: filepath.Join(dir, "echo")}
	if b.weir == "" {
		b.weir = filepath.Join(dir, "weir")
	} else if abs, err := filepath.Abs(b.weir); err == nil {
		b.weir = abs
	}
	for _, t := range [][2]string{{b.weir, "./cmd/weir"}, {b.relay, "./bench/overhead/relay"}, {b.echo, "./bench/overhead/echo"}} {
		if t[0] == weir {
			continue
		}
		progress("go build -o %s %s", filepath.Base(t[0]), t[1])
		cmd := exec.Command("go", "build", "-o", t[0], t[1])
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			return b, fmt.Errorf("go build %s: %v\n%s", t[1], err, out)
		}
	}
	return b, nil
}

func proseText(n int) string { return prose.Text(n) }

// measureServer starts the four paths in front of one server and measures
// latency, throughput and memory.
func measureServer(sv server, bin binaries, strictPolicy, tmp string, m Method) (*ServerResult, error) {
	res := &ServerResult{Server: sv.name, Command: sv.command, Request: sv.request, PeakRSS: map[string]RSS{}}
	conns := map[string]*conn{}
	defer func() {
		for _, c := range conns {
			c.close()
		}
	}()
	base := cleanEnv()
	for _, p := range paths {
		env := base
		var argv []string
		switch p {
		case "direct":
			argv = sv.argv
		case "relay":
			argv = append([]string{bin.relay}, sv.argv...)
		case "weir-default", "weir-strict":
			home := filepath.Join(tmp, sv.name+"-"+p)
			if err := os.MkdirAll(home, 0o700); err != nil {
				return nil, err
			}
			env = append(slices.Clone(base), "WEIR_HOME="+home, "WEIR_SESSION=bench-overhead-"+p, "WEIR_LOG=error")
			argv = []string{bin.weir, "run", "--name", sv.weirName}
			if p == "weir-strict" {
				argv = append(argv, "--policy", strictPolicy)
			}
			argv = append(append(argv, "--"), sv.argv...)
		}
		progress("%s: starting %s", sv.name, p)
		c, err := dial(sv.name+" "+p, env, argv...)
		if err != nil {
			return nil, err
		}
		conns[p] = c
	}
	for _, sp := range m.Latency {
		l, err := latency(sv, conns, sp)
		if err != nil {
			return nil, err
		}
		res.Latency = append(res.Latency, l)
	}
	for _, n := range m.Throughput.Concurrency {
		t, err := throughput(sv, conns, m.Throughput, n)
		if err != nil {
			return nil, err
		}
		res.Throughput = append(res.Throughput, t)
	}
	for _, p := range paths[1:] {
		kb, err := sysinfo.VmHWM(conns[p].pid())
		if err != nil {
			return nil, err
		}
		res.PeakRSS[p] = RSS{MB: sysinfo.Round(float64(kb)/1024, 1), Samples: 1}
	}
	return res, nil
}

// latency runs the alternating loop for one result size.
func latency(sv server, conns map[string]*conn, sp SizePlan) (*LatencyResult, error) {
	params := sv.params(sp.Bytes)
	timeout := 60 * time.Second
	// Warm up, and check once per path that the result is the whole text.
	for _, p := range paths {
		ch, _, err := conns[p].start("tools/call", params)
		if err != nil {
			return nil, err
		}
		r, err := conns[p].wait(ch, timeout)
		if err != nil {
			return nil, err
		}
		text, err := resultText(r.line)
		if err != nil || len(text) != sp.Bytes {
			return nil, fmt.Errorf("%s: %s result has %d bytes of text, want %d (%v)", p, sp.Size, len(text), sp.Bytes, err)
		}
	}
	progress("%s: latency %s, %d warm-up + %d iterations × %d paths", sv.name, sp.Size, sp.Warmup, sp.Iterations, len(paths))
	for range sp.Warmup {
		for _, p := range paths {
			if _, err := conns[p].call("tools/call", params, timeout); err != nil {
				return nil, err
			}
			conns[p].settle()
		}
	}
	samples, settled := map[string][]time.Duration{}, map[string][]time.Duration{}
	cpu0 := map[string]time.Duration{}
	for _, p := range paths[1:] {
		cpu0[p] = cpuTime(conns[p].pid())
	}
	for i := range sp.Iterations {
		for k := range paths {
			p := paths[(i+k)%len(paths)]
			d, err := conns[p].call("tools/call", params, timeout)
			if err != nil {
				return nil, err
			}
			samples[p] = append(samples[p], d)
			// Weir forwards a result before its detectors finish with
			// it; on two cores that work would land on the next path's
			// call. Each call starts on a quiet machine instead.
			settled[p] = append(settled[p], conns[p].settle())
		}
	}
	l := &LatencyResult{Size: sp.Size, Bytes: sp.Bytes, Samples: sp.Iterations,
		Paths: map[string]Percentiles{}, AddedVsDirect: map[string]Percentiles{}, AddedVsRelay: map[string]Percentiles{}, ProxyCPU: map[string]float64{},
		Settle: map[string]Percentiles{}}
	for _, p := range paths {
		l.Paths[p] = percentiles(samples[p])
		l.Settle[p] = percentiles(settled[p])
	}
	for _, p := range paths[1:] {
		l.AddedVsDirect[p] = l.Paths[p].minus(l.Paths["direct"])
		l.ProxyCPU[p] = sysinfo.Round(float64((cpuTime(conns[p].pid())-cpu0[p]).Nanoseconds())/1e3/float64(sp.Iterations), 1)
	}
	for _, p := range paths[2:] {
		l.AddedVsRelay[p] = l.Paths[p].minus(l.Paths["relay"])
	}
	return l, nil
}

// throughput measures sustained calls per second with n calls in flight.
// The paths take turns, round by round.
func throughput(sv server, conns map[string]*conn, tp ThroughputPlan, n int) (*ThroughputResult, error) {
	params := sv.params(tp.ResultBytes)
	progress("%s: throughput, %d in flight, %d × %.1fs per path", sv.name, n, tp.Rounds, tp.SecondsPerRound)
	t := &ThroughputResult{Concurrency: n, ResultBytes: tp.ResultBytes, Paths: map[string]Rate{}}
	lat := map[string][]time.Duration{}
	secs := map[string]time.Duration{}
	for _, p := range paths {
		if _, err := load(conns[p], params, n, seconds(tp.WarmupSeconds)); err != nil {
			return nil, err
		}
	}
	for r := range tp.Rounds {
		for k := range paths {
			p := paths[(r+k)%len(paths)]
			t0 := time.Now()
			d, err := load(conns[p], params, n, seconds(tp.SecondsPerRound))
			if err != nil {
				return nil, err
			}
			secs[p] += time.Since(t0)
			lat[p] = append(lat[p], d...)
		}
	}
	for _, p := range paths {
		pc := percentiles(lat[p])
		t.Paths[p] = Rate{Calls: len(lat[p]), Seconds: sysinfo.Round(secs[p].Seconds(), 3),
			CallsPerSec: sysinfo.Round(float64(len(lat[p]))/secs[p].Seconds(), 1), P50: pc.P50, P99: pc.P99}
	}
	return t, nil
}

// load keeps n calls in flight on c for about d (each of n goroutines
// issues its next call as soon as its last one is answered; the last calls
// are waited for) and returns every call's latency.
func load(c *conn, params string, n int, d time.Duration) ([]time.Duration, error) {
	deadline := time.Now().Add(d)
	var (
		mu   sync.Mutex
		all  []time.Duration
		ferr error
		wg   sync.WaitGroup
	)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for time.Now().Before(deadline) {
				dur, err := c.call("tools/call", params, 60*time.Second)
				if err != nil {
					mu.Lock()
					ferr = err
					mu.Unlock()
					return
				}
				mine = append(mine, dur)
			}
			mu.Lock()
			all = append(all, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return all, ferr
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// percentiles are nearest-rank percentiles in microseconds.
func percentiles(d []time.Duration) Percentiles {
	s := slices.Clone(d)
	slices.Sort(s)
	at := func(p int) float64 {
		if len(s) == 0 {
			return 0
		}
		i := (len(s)*p + 99) / 100 // ceil(n·p/100)
		return sysinfo.Round(float64(s[max(i-1, 0)].Nanoseconds())/1e3, 1)
	}
	return Percentiles{P50: at(50), P95: at(95), P99: at(99)}
}

func (a Percentiles) minus(b Percentiles) Percentiles {
	return Percentiles{P50: sysinfo.Round(a.P50-b.P50, 1), P95: sysinfo.Round(a.P95-b.P95, 1), P99: sysinfo.Round(a.P99-b.P99, 1)}
}

// cleanEnv is this process's environment without Weir's own variables, so
// a WEIR_HOME, session or policy of the caller never leaks into a proxy.
// The profiling variables pass, so that a run can be profiled
// (WEIR_CPUPROFILE, WEIR_MEMPROFILE: one file per weir process).
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "WEIR_") || strings.HasPrefix(kv, "WEIR_CPUPROFILE=") || strings.HasPrefix(kv, "WEIR_MEMPROFILE=") {
			env = append(env, kv)
		}
	}
	return env
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s overhead: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}
