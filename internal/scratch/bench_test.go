package scratch

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/weir-sec/weir/internal/flow"
)

// benchPayload is a tools/call result of about size bytes: GitHub-issue
// rows (numbers, short strings, a timestamp, a nested user, a label array
// and a body of prose), as structuredContent.
func benchPayload(size int) json.RawMessage {
	var b strings.Builder
	b.WriteString(`{"structuredContent":{"total_count":0,"items":[`)
	for i := 0; b.Len() < size-600; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"number":%d,"title":"Crash when opening file %d with unicode name","state":%q,"comments":%d,"created_at":"2025-%02d-%02dT%02d:14:00Z","user":{"login":"user%d","id":%d,"site_admin":false},"labels":[{"name":"bug"},{"name":"p%d"}],"score":%g,"body":"Steps to reproduce: open the file, press save, and watch the editor stop responding. Expected the file to save. Seen on version 1.%d."}`,
			i+1, i, []string{"open", "closed"}[i%2], i%23, i%12+1, i%28+1, i%24, i%97, 5000+i%97, i%4, float64(i%1000)/7, i%40)
	}
	b.WriteString(`]}}`)
	return json.RawMessage(b.String())
}

// BenchmarkMaterialise1MB is the time to store 1 MiB of rows.
func BenchmarkMaterialise1MB(b *testing.B) {
	payload := benchPayload(1 << 20)
	db := openDB(b, Options{MaxPayloadBytes: 2 << 20, MaxTables: 4})
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	for b.Loop() {
		if _, ok, err := db.Materialise(context.Background(), "bench", flow.Private, payload); !ok {
			b.Fatal(err)
		}
	}
}

// BenchmarkQueryGroupBy is a typical aggregate over a 1 MiB table.
func BenchmarkQueryGroupBy(b *testing.B) {
	db := openDB(b, Options{MaxPayloadBytes: 2 << 20})
	h := mustStore(b, db, flow.Private, benchPayload(1<<20))
	sql := "SELECT user_login, count(*), median(comments), avg(score) FROM " + h.Table + " GROUP BY 1 ORDER BY 2 DESC LIMIT 10"
	for b.Loop() {
		if _, err := db.Query(context.Background(), sql); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMemoryPerMB stores 16 tables of 1 MiB and reports the memory
// they hold per byte of payload: Go heap in use (after a GC) plus SQLite's
// page cache, which lives outside the Go heap. The goal is at most 5.
func BenchmarkMemoryPerMB(b *testing.B) {
	payload := benchPayload(1 << 20)
	const tables = 16
	for b.Loop() {
		db, err := Open(Options{MaxPayloadBytes: 2 << 20})
		if err != nil {
			b.Fatal(err)
		}
		heap0, cache0 := memoryNow(b, db)
		var ms0, ms1 runtime.MemStats
		runtime.ReadMemStats(&ms0)
		for range tables {
			if _, ok, err := db.Materialise(context.Background(), "bench", 0, payload); !ok {
				b.Fatal(err)
			}
		}
		runtime.ReadMemStats(&ms1)
		heap1, cache1 := memoryNow(b, db)
		total := float64(tables * len(payload))
		b.ReportMetric(float64(heap1-heap0)/total, "heap/payload")
		b.ReportMetric(float64(cache1-cache0)/total, "sqlite/payload")
		b.ReportMetric(float64(heap1-heap0+cache1-cache0)/total, "held/payload")
		b.ReportMetric(float64(ms1.TotalAlloc-ms0.TotalAlloc)/total, "allocated/payload")
		db.Close()
	}
}

func memoryNow(b *testing.B, db *DB) (heap, cache int64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	s, err := db.Stats()
	if err != nil {
		b.Fatal(err)
	}
	return int64(ms.HeapInuse), s.CacheBytes
}
