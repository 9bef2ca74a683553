// Command scratch measures the scratch database (issue 13): the memory a
// materialised table holds per byte of the JSON payload it came from (goal
// at most 5×; mcp-sluice measured 18–29×) and the time to materialise
// 1 MiB, and prints the results as JSON.
//
//	go run ./bench/scratch                       # 16 tables of 1 MiB, 20 timed runs, to bench/results/scratch.json
//	go run ./bench/scratch --readme README.md    # and the README's scratch block
//	go run ./bench/scratch -tables 64 -out -     # more tables, results to stdout
//
// Memory is counted three ways, all after a GC: the Go heap in use, SQLite's
// own count of its page cache (SQLITE_DBSTATUS_CACHE_USED; with an
// in-memory database every table lives there, outside the Go heap), and
// the process's resident set, which also holds what the allocators have
// not given back. Allocated is everything Go allocated while
// materialising, most of it garbage at once.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/weir-sec/weir/bench/internal/mdblock"
	"github.com/weir-sec/weir/internal/flow"
	"github.com/weir-sec/weir/internal/scratch"
)

// Results is what the program prints.
type Results struct {
	Date     string   `json:"date"`
	Go       string   `json:"go"`
	CPUs     int      `json:"cpus"`
	Commands []string `json:"commands"`

	PayloadBytes int `json:"payload_bytes"`
	Rows         int `json:"rows"`
	Tables       int `json:"tables"`

	// Per byte of payload, with Tables tables held at once.
	HeapPerPayload      float64 `json:"heap_per_payload"`
	SQLitePerPayload    float64 `json:"sqlite_per_payload"`
	HeldPerPayload      float64 `json:"held_per_payload"`
	RSSPerPayload       float64 `json:"rss_per_payload"`
	AllocatedPerPayload float64 `json:"allocated_per_payload"`
	BytesCounted        float64 `json:"session_bytes_per_payload"` // what MaxSessionBytes counts

	MaterialiseMs Spread  `json:"materialise_ms"`
	MBPerSecond   float64 `json:"mb_per_second"`
	QueryMs       Spread  `json:"group_by_query_ms"`
}

// Spread is the minimum, median and maximum of timed runs.
type Spread struct {
	Min    float64 `json:"min"`
	Median float64 `json:"median"`
	Max    float64 `json:"max"`
}

func main() {
	tables := flag.Int("tables", 16, "tables held at once for the memory measurement")
	size := flag.Int("size", 1<<20, "payload bytes per table")
	runs := flag.Int("runs", 20, "timed materialisations")
	out := flag.String("out", "bench/results/scratch.json", `results file ("-": stdout)`)
	readme := flag.String("readme", "", "README whose scratch block to regenerate (empty: none)")
	flag.Parse()
	r, err := measure(*tables, *size, *runs)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench/scratch:", err)
		os.Exit(1)
	}
	r.Commands = []string{strings.TrimSpace("go run ./bench/scratch " + strings.Join(os.Args[1:], " "))}
	data, _ := json.MarshalIndent(r, "", "  ")
	data = append(data, '\n')
	if *out == "-" {
		os.Stdout.Write(data)
	} else if err := os.WriteFile(*out, data, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "bench/scratch:", err)
		os.Exit(1)
	}
	if *readme != "" {
		if err := mdblock.Replace(*readme, readmeStart, readmeEnd, readmeBlock(r, *out)); err != nil {
			fmt.Fprintln(os.Stderr, "bench/scratch:", err)
			os.Exit(1)
		}
	}
}

const (
	readmeStart = "<!-- scratch:start -->"
	readmeEnd   = "<!-- scratch:end -->"
)

// readmeBlock is the README's account of a run, every number from r.
func readmeBlock(r Results, file string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| %d tables of a %.1f MiB payload (%d rows) held at once | per payload byte |\n|---|--:|\n", r.Tables, float64(r.PayloadBytes)/(1<<20), r.Rows)
	fmt.Fprintf(&b, "| SQLite page cache (where the tables live) | %.2f× |\n", r.SQLitePerPayload)
	fmt.Fprintf(&b, "| Go heap still in use | %.2f× |\n", r.HeapPerPayload)
	fmt.Fprintf(&b, "| held in all (heap + page cache) | **%.2f×** |\n", r.HeldPerPayload)
	fmt.Fprintf(&b, "| process resident set | %.2f× |\n", r.RSSPerPayload)
	fmt.Fprintf(&b, "| counted against max_session_bytes | %.2f× |\n\n", r.BytesCounted)
	fmt.Fprintf(&b, "Materialising one payload: median %.1f ms (min %.1f, max %.1f; %.1f MB/s); a GROUP BY over it: median %.2f ms. ",
		r.MaterialiseMs.Median, r.MaterialiseMs.Min, r.MaterialiseMs.Max, r.MBPerSecond, r.QueryMs.Median)
	fmt.Fprintf(&b, "%s, %s, %d CPUs, `%s` ([%s](%s)).\n", r.Date[:10], r.Go, r.CPUs, r.Commands[0], file, file)
	return b.String()
}

func measure(tables, size, runs int) (Results, error) {
	ctx := context.Background()
	payload, rows := payload(size)
	r := Results{
		Date: time.Now().UTC().Format(time.RFC3339), Go: runtime.Version(), CPUs: runtime.NumCPU(),
		PayloadBytes: len(payload), Rows: rows, Tables: tables,
	}
	opts := scratch.Options{MaxPayloadBytes: 2 * size, MaxTables: tables}

	// Memory held by tables tables.
	db, err := scratch.Open(opts)
	if err != nil {
		return r, err
	}
	heap0, cache0, rss0, err := memory(db)
	if err != nil {
		return r, err
	}
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	for range tables {
		if h, ok, err := db.Materialise(ctx, "bench", flow.Private, payload); !ok {
			return r, fmt.Errorf("not stored: %s (%v)", h.Note, err)
		}
	}
	runtime.ReadMemStats(&ms1)
	heap1, cache1, rss1, err := memory(db)
	if err != nil {
		return r, err
	}
	st, _ := db.Stats()
	total := float64(tables * len(payload))
	r.HeapPerPayload = float64(heap1-heap0) / total
	r.SQLitePerPayload = float64(cache1-cache0) / total
	r.HeldPerPayload = r.HeapPerPayload + r.SQLitePerPayload
	r.RSSPerPayload = float64(rss1-rss0) / total
	r.AllocatedPerPayload = float64(ms1.TotalAlloc-ms0.TotalAlloc) / total
	r.BytesCounted = float64(st.Bytes) / total
	db.Close()

	// Time to materialise one payload, in a session at steady state (the
	// oldest table evicted each time).
	db, err = scratch.Open(scratch.Options{MaxPayloadBytes: 2 * size, MaxTables: 4})
	if err != nil {
		return r, err
	}
	defer db.Close()
	var times []float64
	var table string
	for range runs {
		start := time.Now()
		h, ok, err := db.Materialise(ctx, "bench", flow.Private, payload)
		if !ok {
			return r, fmt.Errorf("not stored: %s (%v)", h.Note, err)
		}
		times = append(times, float64(time.Since(start).Microseconds())/1000)
		table = h.Table
	}
	r.MaterialiseMs = spread(times)
	r.MBPerSecond = float64(len(payload)) / (1 << 20) / (r.MaterialiseMs.Median / 1000)

	times = times[:0]
	sql := "SELECT user_login, count(*), median(comments), avg(score) FROM " + table + " GROUP BY 1 ORDER BY 2 DESC LIMIT 10"
	for range runs {
		start := time.Now()
		if _, err := db.Query(ctx, sql); err != nil {
			return r, err
		}
		times = append(times, float64(time.Since(start).Microseconds())/1000)
	}
	r.QueryMs = spread(times)
	return r, nil
}

func spread(xs []float64) Spread {
	s := slices.Sorted(slices.Values(xs))
	return Spread{Min: s[0], Median: s[len(s)/2], Max: s[len(s)-1]}
}

func memory(db *scratch.DB) (heap, cache, rss int64, err error) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	st, err := db.Stats()
	if err != nil {
		return 0, 0, 0, err
	}
	return int64(ms.HeapInuse), st.CacheBytes, residentBytes(), nil
}

// residentBytes is VmRSS from /proc/self/status, or 0 where there is none.
func residentBytes() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// payload is a tools/call result of about size bytes: GitHub-issue rows
// (numbers, short strings, a timestamp, a nested user, a label array, a
// float and a paragraph of prose) as structuredContent. It is the payload
// of BenchmarkMaterialise1MB in internal/scratch.
func payload(size int) (json.RawMessage, int) {
	var b strings.Builder
	b.WriteString(`{"structuredContent":{"total_count":0,"items":[`)
	n := 0
	for ; b.Len() < size-600; n++ {
		if n > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"number":%d,"title":"Crash when opening file %d with unicode name","state":%q,"comments":%d,"created_at":"2025-%02d-%02dT%02d:14:00Z","user":{"login":"user%d","id":%d,"site_admin":false},"labels":[{"name":"bug"},{"name":"p%d"}],"score":%g,"body":"Steps to reproduce: open the file, press save, and watch the editor stop responding. Expected the file to save. Seen on version 1.%d."}`,
			n+1, n, []string{"open", "closed"}[n%2], n%23, n%12+1, n%28+1, n%24, n%97, 5000+n%97, n%4, float64(n%1000)/7, n%40)
	}
	b.WriteString(`]}}`)
	return json.RawMessage(b.String()), n
}
