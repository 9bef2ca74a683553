package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// rawClient speaks newline-delimited JSON-RPC to a process with no SDK in
// between, so what is timed is the transport and whatever sits in it.
type rawClient struct {
	p   *peer
	ids int
}

func newRawClient(b testing.TB, env []string, argv ...string) *rawClient {
	c := &rawClient{p: startPeer(b, env, argv...)}
	c.call(b, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}`)
	c.p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.call(b, "tools/list", `{}`)
	return c
}

func (c *rawClient) call(b testing.TB, method, params string) []byte {
	c.ids++
	id := strconv.Itoa(c.ids)
	c.p.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":` + params + `}`)
	for {
		select {
		case l, ok := <-c.p.lines:
			if !ok {
				b.Fatalf("peer exited; stderr:\n%s", c.p.stderr.String())
			}
			if strings.HasPrefix(string(l), `{"jsonrpc":"2.0","id":`+id+`,`) {
				return l
			}
		case <-time.After(20 * time.Second):
			b.Fatalf("no answer to %s", method)
		}
	}
}

func percentile(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)*p/100]
}

// BenchmarkAddedLatency measures what weir run adds to a tools/call with a
// 4 KB argument and a 4 KB result, against a Go echo server (the fake
// server: a floor with almost no server time of its own). Direct and
// proxied calls alternate in one loop, so both see the same machine. The
// sink case labels echo as a sink in a session that has read 1 MB of
// private text, so the full decision (store sync, decode, fingerprint,
// lookup) is on the path.
func BenchmarkAddedLatency(b *testing.B) {
	body := mustJSON(prose(42, 4096))
	params := `{"name":"echo","arguments":{"body":` + string(body) + `}}`
	for _, sink := range []bool{false, true} {
		name := "allow-4KB"
		if sink {
			name = "sink-4KB-vs-1MB-private"
		}
		b.Run(name, func(b *testing.B) {
			e := newWeirEnv(b)
			env := e.environ("WEIR_E2E_FAKE=normal", "WEIR_LOG=error", "WEIR_CPUPROFILE="+os.Getenv("WEIR_BENCH_CPUPROFILE"), "GOMAXPROCS="+os.Getenv("WEIR_BENCH_GOMAXPROCS"), "GOGC="+os.Getenv("WEIR_BENCH_GOGC"))
			var flags []string
			if sink {
				pol := filepath.Join(b.TempDir(), "policy.yaml")
				os.WriteFile(pol, []byte("version: 1\ntools:\n  - {match: \"fake:echo\", labels: [sink]}\n  - {match: \"fake:prose\", labels: [private]}\n"), 0o600)
				flags = []string{"--policy", pol}
			}
			direct := newRawClient(b, env, fake()...)
			bare := newRawClient(b, append(env, "WEIR_E2E_RELAY=1"), append(fake(), fake()...)...)
			proxied := newRawClient(b, env, e.wrap("fake", fake(), flags...)...)
			if sink {
				for i := range 16 {
					proxied.call(b, "tools/call", fmt.Sprintf(`{"name":"prose","arguments":{"n":65536,"seed":%d}}`, 1000+i))
				}
			}
			for range 200 { // warm up every path
				direct.call(b, "tools/call", params)
				bare.call(b, "tools/call", params)
				proxied.call(b, "tools/call", params)
			}
			var dl, rl, pl []time.Duration
			cpu0, rcpu0 := cpuTime(b, proxied.p.cmd.Process.Pid), cpuTime(b, bare.p.cmd.Process.Pid)
			b.ResetTimer()
			for b.Loop() {
				t0 := time.Now()
				direct.call(b, "tools/call", params)
				t1 := time.Now()
				bare.call(b, "tools/call", params)
				t2 := time.Now()
				out := proxied.call(b, "tools/call", params)
				t3 := time.Now()
				dl, rl, pl = append(dl, t1.Sub(t0)), append(rl, t2.Sub(t1)), append(pl, t3.Sub(t2))
				if strings.Contains(string(out), `"isError":true`) {
					b.Fatalf("benign call blocked: %s", out)
				}
			}
			b.StopTimer()
			cpu := cpuTime(b, proxied.p.cmd.Process.Pid) - cpu0
			rcpu := cpuTime(b, bare.p.cmd.Process.Pid) - rcpu0
			b.ReportMetric(float64(rcpu.Microseconds())/float64(len(rl)), "relay-cpu-µs/call")
			us := func(d time.Duration) float64 { return float64(d.Microseconds()) }
			b.ReportMetric(us(cpu)/float64(len(pl)), "weir-cpu-µs/call")
			b.ReportMetric(us(percentile(dl, 50)), "direct-p50-µs")
			b.ReportMetric(us(percentile(rl, 50)), "relay-p50-µs")
			b.ReportMetric(us(percentile(pl, 50)), "weir-p50-µs")
			b.ReportMetric(us(percentile(pl, 50)-percentile(dl, 50)), "added-p50-µs")
			b.ReportMetric(us(percentile(pl, 99)-percentile(dl, 99)), "added-p99-µs")
			b.ReportMetric(us(percentile(rl, 50)-percentile(dl, 50)), "relay-added-p50-µs")
		})
	}
}

// BenchmarkSessionMemory reads 10 MB of private results through weir run
// (ten 1 MB results) and reports the proxy's peak resident memory.
func BenchmarkSessionMemory(b *testing.B) {
	for b.Loop() {
		e := newWeirEnv(b)
		pol := filepath.Join(b.TempDir(), "policy.yaml")
		os.WriteFile(pol, []byte("version: 1\ntools:\n  - {match: \"fake:prose\", labels: [private]}\n"), 0o600)
		c := newRawClient(b, e.environ("WEIR_E2E_FAKE=normal", "WEIR_LOG=error", "GOGC="+os.Getenv("WEIR_BENCH_GOGC")), e.wrap("fake", fake(), "--policy", pol)...)
		base := rssKB(b, c.p.cmd.Process.Pid, "VmHWM")
		for i := range 10 {
			c.call(b, "tools/call", fmt.Sprintf(`{"name":"prose","arguments":{"n":1048576,"seed":%d}}`, i))
		}
		peak := rssKB(b, c.p.cmd.Process.Pid, "VmHWM")
		b.ReportMetric(float64(base)/1024, "start-RSS-MB")
		b.ReportMetric(float64(peak)/1024, "peak-RSS-MB")
		c.p.close()
	}
}

// rssKB reads a memory field (VmHWM: peak resident set) of a process.
func rssKB(b testing.TB, pid int, field string) int {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Skipf("no /proc on this system: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			n, _ := strconv.Atoi(strings.Fields(rest)[0])
			return n
		}
	}
	b.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

var _ = json.Valid

// cpuTime is a process's user+system CPU time so far, from /proc.
func cpuTime(b testing.TB, pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	utime, _ := strconv.Atoi(fields[11])
	stime, _ := strconv.Atoi(fields[12])
	return time.Duration(utime+stime) * (time.Second / 100) // USER_HZ
}
