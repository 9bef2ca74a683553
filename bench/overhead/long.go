package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/weir-sec/weir/bench/internal/sysinfo"
	"github.com/weir-sec/weir/bench/overhead/internal/prose"
)

// LongSession is the long-session run: one weir run proxy fed many
// private results, then proxies that join its session.
type LongSession struct {
	Meta   Meta   `json:"meta"`
	Server string `json:"server"`
	// Policy is the policy file both proxies run with.
	Policy      string `json:"policy"`
	ResultBytes int    `json:"result_bytes"`
	// Idle is the proxy after initialize and tools/list, before any
	// result.
	Idle Memory `json:"idle"`
	// Checkpoints, in order of results fed.
	Checkpoints []*LongCheckpoint `json:"checkpoints"`
	Join        *JoinResult       `json:"join"`
	// Fleet is proxies idle side by side, as a client that starts every
	// server it is configured with runs them.
	Fleet *Fleet `json:"fleet"`
}

// Fleet is Proxies weir run proxies on one home and session, each in
// front of its own echo server (names echo1…echoN), all after initialize
// and tools/list. A page of the binary that every proxy maps is in memory
// once: PSS divides it among them, USS leaves it out.
type Fleet struct {
	Proxies int `json:"proxies"`
	// Per proxy, medians over the fleet, in MB.
	RSSMB float64 `json:"rss_mb"`
	PSSMB float64 `json:"pss_mb"`
	USSMB float64 `json:"uss_mb"`
	// TotalPSSMB is the fleet's memory in all (the sum of its PSS),
	// TotalRSSMB what adding up each proxy's RSS would claim.
	TotalPSSMB float64 `json:"total_pss_mb"`
	TotalRSSMB float64 `json:"total_rss_mb"`
}

// Memory is a process's resident set, now and at its peak, in MB.
type Memory struct {
	RSSMB float64 `json:"rss_mb"`
	HWMMB float64 `json:"hwm_mb"`
	// AnonMB and FileMB split RSSMB: anonymous memory (heap, stacks) and
	// file-backed pages (the binary's, shared by every weir process).
	AnonMB float64 `json:"anon_mb"`
	FileMB float64 `json:"file_mb"`
}

// LongCheckpoint is the proxy and its state file after Results results.
type LongCheckpoint struct {
	Results   int     `json:"results"`
	PrivateMB float64 `json:"private_mb"`
	Memory
	// StateDBMB and StateWALMB: WEIR_HOME/state.db and state.db-wal.
	StateDBMB  float64 `json:"state_db_mb"`
	StateWALMB float64 `json:"state_wal_mb"`
	// Seconds since the first result was asked for.
	Seconds float64 `json:"seconds"`
	// PerResultUS is the median round trip of the results fed since the
	// previous checkpoint.
	PerResultUS float64 `json:"per_result_p50_us"`
}

// JoinResult is a second proxy that joins the long session and judges
// one sink call, over Samples fresh starts.
type JoinResult struct {
	Samples int `json:"samples"`
	// FromStart: from just before the process is started to the answer of
	// its first tools/call (initialize included); FromRequest: from the
	// tools/call request to its answer. Medians and maxima over the
	// samples, in ms.
	FromStartMS      float64 `json:"from_start_p50_ms"`
	FromStartMaxMS   float64 `json:"from_start_max_ms"`
	FromRequestMS    float64 `json:"from_request_p50_ms"`
	FromRequestMaxMS float64 `json:"from_request_max_ms"`
	// Memory is the joining proxy with the largest RSS right after the
	// decision (HWMMB: the largest peak).
	Memory
	// Rule is the rule that blocked the call (every sample must block).
	Rule string `json:"rule"`
}

// LongPlan is the long-session workload.
type LongPlan struct {
	ResultBytes int   `json:"result_bytes"`
	Checkpoints []int `json:"checkpoints"`
	Joins       int   `json:"joins"`
	// Fleet is how many idle proxies run side by side.
	Fleet int `json:"fleet"`
}

// longPolicy labels the echo server's echo tool private and its send
// tool a sink, so every result is private data the session must keep
// fingerprints of and the joining proxy's call is judged against it.
const longPolicy = `version: 1
tools:
  - {match: "echo:echo", labels: [private]}
  - {match: "echo:send", labels: [sink]}
session:
  max_bytes: 32MiB
`

var ruleRE = regexp.MustCompile(`\(rule ([a-z0-9_.-]+)\)`)

// longSession feeds one proxy lp.Checkpoints[last] private results of
// lp.ResultBytes, each a different text, one call at a time, reading its
// memory and state file at each checkpoint; then starts lp.Joins proxies,
// one after another, on the same home and session while the first still
// runs, and times each one's first decision: a send whose body quotes the
// last result.
func longSession(bin binaries, tmp string, lp LongPlan) (*LongSession, error) {
	home := filepath.Join(tmp, "long-home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, err
	}
	pol := filepath.Join(tmp, "long.yaml")
	if err := os.WriteFile(pol, []byte(longPolicy), 0o600); err != nil {
		return nil, err
	}
	env := append(cleanEnv(), "WEIR_HOME="+home, "WEIR_SESSION=bench-overhead-long", "WEIR_LOG=error")
	argv := []string{bin.weir, "run", "--name", "echo", "--policy", pol, "--", bin.echo}
	res := &LongSession{Server: "go-echo", Policy: longPolicy, ResultBytes: lp.ResultBytes}
	// the fleet first, on a home of its own, before the long session
	// fills the page cache and the machine's memory
	f, err := fleet(bin, filepath.Join(tmp, "fleet-home"), pol, lp.Fleet)
	if err != nil {
		return nil, err
	}
	res.Fleet = f
	progress("long session: starting weir run")
	c, err := dial("long weir", env, argv...)
	if err != nil {
		return nil, err
	}
	defer c.close()
	c.settle()
	if res.Idle, err = memory(c.pid()); err != nil {
		return nil, err
	}
	start := time.Now()
	var round []time.Duration
	n := 0
	for _, cp := range lp.Checkpoints {
		progress("long session: results %d to %d", n+1, cp)
		for n < cp {
			n++
			params := `{"name":"echo","arguments":{"size":` + strconv.Itoa(lp.ResultBytes) + `,"seed":` + strconv.Itoa(n) + `}}`
			ch, t0, err := c.start("tools/call", params)
			if err != nil {
				return nil, err
			}
			r, err := c.wait(ch, 60*time.Second)
			if err != nil {
				return nil, fmt.Errorf("result %d: %w", n, err)
			}
			round = append(round, r.at.Sub(t0))
			if n == 1 {
				if text, err := resultText(r.line); err != nil || text != prose.Seeded(1, lp.ResultBytes) {
					return nil, fmt.Errorf("long session: the first result is not the echo text (%d bytes, %v)", len(text), err)
				}
			}
			// One call at a time, each on a quiet proxy, as an agent
			// reads: the memory read at a checkpoint is the session's,
			// not a backlog of results still being scanned.
			c.settle()
		}
		m, err := memory(c.pid())
		if err != nil {
			return nil, err
		}
		db, wal := fileMB(filepath.Join(home, "state.db")), fileMB(filepath.Join(home, "state.db-wal"))
		res.Checkpoints = append(res.Checkpoints, &LongCheckpoint{Results: n,
			PrivateMB: sysinfo.Round(float64(n*lp.ResultBytes)/(1<<20), 1), Memory: m,
			StateDBMB: db, StateWALMB: wal, Seconds: sysinfo.Round(time.Since(start).Seconds(), 1),
			PerResultUS: percentiles(round).P50})
		round = round[:0]
		progress("long session: %d results: RSS %.1f MB (peak %.1f), state.db %.1f MB + wal %.1f MB", n, m.RSSMB, m.HWMMB, db, wal)
	}
	if res.Join, err = join(env, argv, lp); err != nil {
		return nil, err
	}
	progress("long session: joining proxy's first decision %.1f ms from start, %.1f ms from the request, RSS %.1f MB",
		res.Join.FromStartMS, res.Join.FromRequestMS, res.Join.RSSMB)
	return res, nil
}

// join starts lp.Joins proxies on the long session, one at a time, and
// times each one's first decision.
func join(env, argv []string, lp LongPlan) (*JoinResult, error) {
	last := prose.Seeded(uint64(lp.Checkpoints[len(lp.Checkpoints)-1]), lp.ResultBytes)
	// A body that quotes a kilobyte of the newest private result: an
	// attributable leak, whatever the session has evicted.
	body := last[len(last)/4 : len(last)/4+1024]
	params := `{"name":"send","arguments":{"to":"someone@example.com","body":"` + body + `"}}`
	j := &JoinResult{Samples: lp.Joins}
	var fromStart, fromReq []time.Duration
	for i := range lp.Joins {
		progress("long session: joining proxy %d of %d", i+1, lp.Joins)
		t0 := time.Now()
		c, err := launch("long join", env, argv...)
		if err != nil {
			return nil, err
		}
		err = func() error {
			defer c.close()
			if err := c.handshake(); err != nil {
				return err
			}
			ch, t1, err := c.start("tools/call", params)
			if err != nil {
				return err
			}
			r, err := c.waitAny(ch, 60*time.Second)
			if err != nil {
				return err
			}
			fromStart, fromReq = append(fromStart, r.at.Sub(t0)), append(fromReq, r.at.Sub(t1))
			text, _ := resultText(r.line)
			if check(r.line) == nil {
				return fmt.Errorf("the joining proxy allowed a send quoting the session's private data: %.300s", r.line)
			}
			var rule string
			if m := ruleRE.FindStringSubmatch(text); m != nil {
				rule = m[1]
			}
			if rule == "" {
				return fmt.Errorf("the joining proxy's block names no rule: %.300s", text)
			}
			if j.Rule != "" && j.Rule != rule {
				return fmt.Errorf("joining proxies blocked by %s and %s", j.Rule, rule)
			}
			j.Rule = rule
			m, err := memory(c.pid())
			if err != nil {
				return err
			}
			if m.RSSMB > j.RSSMB {
				j.Memory = m
			}
			j.HWMMB = max(j.HWMMB, m.HWMMB)
			return nil
		}()
		if err != nil {
			return nil, fmt.Errorf("joining proxy: %w", err)
		}
	}
	ms := func(d []time.Duration, at int) float64 {
		s := slices.Clone(d)
		slices.Sort(s)
		i := (len(s)*at + 99) / 100
		return sysinfo.Round(float64(s[max(i-1, 0)].Microseconds())/1e3, 1)
	}
	j.FromStartMS, j.FromStartMaxMS = ms(fromStart, 50), ms(fromStart, 100)
	j.FromRequestMS, j.FromRequestMaxMS = ms(fromReq, 50), ms(fromReq, 100)
	return j, nil
}

// fleet starts n idle proxies side by side and reads what each holds.
func fleet(bin binaries, home, pol string, n int) (*Fleet, error) {
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, err
	}
	env := append(cleanEnv(), "WEIR_HOME="+home, "WEIR_SESSION=bench-overhead-fleet", "WEIR_LOG=error")
	progress("long session: %d idle proxies side by side", n)
	var conns []*conn
	defer func() {
		for _, c := range conns {
			c.close()
		}
	}()
	for i := range n {
		c, err := dial("fleet weir", env, bin.weir, "run", "--name", "echo"+strconv.Itoa(i+1), "--policy", pol, "--", bin.echo)
		if err != nil {
			return nil, err
		}
		conns = append(conns, c)
	}
	for _, c := range conns {
		c.settle()
	}
	f := &Fleet{Proxies: n}
	var rss, pss, uss []float64
	for _, c := range conns {
		r, _, err := sysinfo.Memory(c.pid())
		if err != nil {
			return nil, err
		}
		p, u, err := sysinfo.Shares(c.pid())
		if err != nil {
			return nil, err
		}
		mb := float64(1 << 10)
		rss, pss, uss = append(rss, float64(r)/mb), append(pss, float64(p)/mb), append(uss, float64(u)/mb)
		f.TotalRSSMB += float64(r) / mb
		f.TotalPSSMB += float64(p) / mb
	}
	med := func(v []float64) float64 {
		slices.Sort(v)
		return sysinfo.Round(v[len(v)/2], 1)
	}
	f.RSSMB, f.PSSMB, f.USSMB = med(rss), med(pss), med(uss)
	f.TotalRSSMB, f.TotalPSSMB = sysinfo.Round(f.TotalRSSMB, 1), sysinfo.Round(f.TotalPSSMB, 1)
	progress("long session: %d idle proxies: each RSS %.1f MB, PSS %.1f MB, USS %.1f MB; together %.1f MB (RSS summed: %.1f MB)",
		n, f.RSSMB, f.PSSMB, f.USSMB, f.TotalPSSMB, f.TotalRSSMB)
	return f, nil
}

func memory(pid int) (Memory, error) {
	rss, hwm, err := sysinfo.Memory(pid)
	if err != nil {
		return Memory{}, err
	}
	anon, file, err := sysinfo.Resident(pid)
	if err != nil {
		return Memory{}, err
	}
	mb := func(kb int) float64 { return sysinfo.Round(float64(kb)/1024, 1) }
	return Memory{RSSMB: mb(rss), HWMMB: mb(hwm), AnonMB: mb(anon), FileMB: mb(file)}, nil
}

// fileMB is a file's size in MB, 0 if it does not exist.
func fileMB(path string) float64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return sysinfo.Round(float64(st.Size())/(1<<20), 2)
}
