package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/weir-sec/weir/bench/internal/sysinfo"
)

// ToolsList is the cost of tools/list with a large real catalogue.
type ToolsList struct {
	Meta Meta `json:"meta"`
	// Catalogue is the testdata/catalogues file the echo server lists.
	Catalogue string `json:"catalogue"`
	Tools     int    `json:"tools"`
	// ListBytes is the size of the direct path's tools/list answer.
	ListBytes int `json:"list_bytes"`
	// First: the first tools/list of a fresh process (a new WEIR_HOME for
	// weir, so every definition is pinned on first use), over Starts
	// fresh starts per path; Repeated: later listings on one connection
	// per path, Iterations of them.
	Starts     int                    `json:"starts"`
	Iterations int                    `json:"iterations"`
	First      map[string]Percentiles `json:"first_listing"`
	Repeated   map[string]Percentiles `json:"repeated_listing"`
	// Ratio is weir-default's p50 over direct's, for the first and the
	// repeated listing (the goal: at most 2).
	FirstRatio    float64 `json:"first_p50_vs_direct"`
	RepeatedRatio float64 `json:"repeated_p50_vs_direct"`
	// ToolsSeen is how many tools each path's answer listed (a withheld
	// definition would lower weir's).
	ToolsSeen map[string]int `json:"tools_seen"`
}

// ListPlan is the tools/list workload.
type ListPlan struct {
	Catalogue  string `json:"catalogue"`
	Starts     int    `json:"starts"`
	Iterations int    `json:"iterations"`
	Warmup     int    `json:"warmup"`
}

// The paths of the tools/list measurement.
var listPaths = []string{"direct", "relay", "weir-default"}

// toolsList measures the first and the repeated tools/list of the
// catalogue through each path, paths alternating in rotating order.
func toolsList(root string, bin binaries, tmp string, lp ListPlan) (*ToolsList, error) {
	cat := filepath.Join(root, lp.Catalogue)
	var file struct {
		Tools []json.RawMessage `json:"tools"`
	}
	data, err := os.ReadFile(cat)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, &file); err != nil {
		return nil, fmt.Errorf("%s: %w", lp.Catalogue, err)
	}
	res := &ToolsList{Catalogue: lp.Catalogue, Tools: len(file.Tools), Starts: lp.Starts, Iterations: lp.Iterations,
		First: map[string]Percentiles{}, Repeated: map[string]Percentiles{}, ToolsSeen: map[string]int{}}
	server := []string{bin.echo, "-catalogue", cat}
	homes := 0
	open := func(p string) (*conn, error) {
		env := cleanEnv()
		var argv []string
		switch p {
		case "direct":
			argv = server
		case "relay":
			argv = append([]string{bin.relay}, server...)
		default:
			homes++
			home := filepath.Join(tmp, fmt.Sprintf("list-home-%d", homes))
			if err := os.MkdirAll(home, 0o700); err != nil {
				return nil, err
			}
			env = append(env, "WEIR_HOME="+home, "WEIR_SESSION=bench-overhead-list", "WEIR_LOG=error")
			argv = append([]string{bin.weir, "run", "--name", "catalogue", "--"}, server...)
		}
		c, err := launch("list "+p, env, argv...)
		if err != nil {
			return nil, err
		}
		if err := c.handshake(); err != nil {
			c.close()
			return nil, err
		}
		return c, nil
	}
	list := func(c *conn) (time.Duration, int, error) {
		ch, t0, err := c.start("tools/list", `{}`)
		if err != nil {
			return 0, 0, err
		}
		r, err := c.wait(ch, 60*time.Second)
		if err != nil {
			return 0, 0, err
		}
		var m struct {
			Result struct {
				Tools []json.RawMessage `json:"tools"`
			} `json:"result"`
		}
		if err := json.Unmarshal(r.line, &m); err != nil {
			return 0, 0, fmt.Errorf("%s: tools/list answer: %w", c.name, err)
		}
		return r.at.Sub(t0), len(m.Result.Tools), nil
	}

	progress("tools/list: %s (%d tools), first listing of %d fresh starts per path", lp.Catalogue, res.Tools, lp.Starts)
	first := map[string][]time.Duration{}
	for i := range lp.Starts {
		for k := range listPaths {
			p := listPaths[(i+k)%len(listPaths)]
			c, err := open(p)
			if err != nil {
				return nil, err
			}
			c.procs = append([]int{c.pid()}, children(c.pid())...)
			c.settle()
			d, n, err := list(c)
			c.close()
			if err != nil {
				return nil, err
			}
			first[p] = append(first[p], d)
			res.ToolsSeen[p] = n
		}
	}
	progress("tools/list: %d repeated listings per path after %d warm-up", lp.Iterations, lp.Warmup)
	conns := map[string]*conn{}
	defer func() {
		for _, c := range conns {
			c.close()
		}
	}()
	for _, p := range listPaths {
		c, err := open(p)
		if err != nil {
			return nil, err
		}
		conns[p] = c
		c.procs = append([]int{c.pid()}, children(c.pid())...)
		if _, _, err := list(c); err != nil {
			return nil, err
		}
		c.settle()
	}
	repeated := map[string][]time.Duration{}
	for i := range lp.Warmup + lp.Iterations {
		for k := range listPaths {
			p := listPaths[(i+k)%len(listPaths)]
			d, n, err := list(conns[p])
			if err != nil {
				return nil, err
			}
			if n != res.ToolsSeen[p] {
				return nil, fmt.Errorf("%s: a repeated tools/list has %d tools, the first had %d", p, n, res.ToolsSeen[p])
			}
			conns[p].settle()
			if i >= lp.Warmup {
				repeated[p] = append(repeated[p], d)
			}
		}
	}
	for _, p := range listPaths {
		res.First[p], res.Repeated[p] = percentiles(first[p]), percentiles(repeated[p])
	}
	if res.ToolsSeen["direct"] != res.Tools {
		return nil, fmt.Errorf("direct tools/list has %d tools, the catalogue %d", res.ToolsSeen["direct"], res.Tools)
	}
	// The direct answer's size, for the record.
	c, err := open("direct")
	if err != nil {
		return nil, err
	}
	ch, _, err := c.start("tools/list", `{}`)
	if err == nil {
		var r reply
		if r, err = c.wait(ch, 60*time.Second); err == nil {
			res.ListBytes = len(r.line)
		}
	}
	c.close()
	if err != nil {
		return nil, err
	}
	ratio := func(m map[string]Percentiles) float64 {
		return sysinfo.Round(m["weir-default"].P50/m["direct"].P50, 2)
	}
	res.FirstRatio, res.RepeatedRatio = ratio(res.First), ratio(res.Repeated)
	progress("tools/list: first p50 direct %.0f µs, weir %.0f µs (×%.2f); repeated p50 direct %.0f µs, weir %.0f µs (×%.2f)",
		res.First["direct"].P50, res.First["weir-default"].P50, res.FirstRatio,
		res.Repeated["direct"].P50, res.Repeated["weir-default"].P50, res.RepeatedRatio)
	return res, nil
}
