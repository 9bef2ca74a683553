package engine

import (
	"encoding/json"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/weir-sec/weir/internal/flow"
)

// BenchmarkLongSession applies n private results of 4 KB of random
// English words (about 500 prints each) to a mirror bounded as the
// presets bound it, and reports the heap it then takes, what the mirror
// counts as its own (index-MB), and how many results came before the
// first eviction (0: none). The README quotes it:
//
//	go test -run XXX -bench BenchmarkLongSession -benchtime 1x ./internal/engine/
func BenchmarkLongSession(b *testing.B) {
	h := hasher(b)
	words := strings.Fields("the of and to in is was for on that with as by at from it an are were be this which or had not but what all when we there can more if no out so up about into than them only some could time these two may then first any like now such make over even most after also did many before must through back years where much way well down should because each just those people how too little state good very world still own see work long get here between both life being under never day same another know while last might great old year off come since against go came right used take three report meeting river garden window morning budget project station market letter summer quarter team")
	for _, n := range []int{1000, 5000, 20000} {
		b.Run(strconv.Itoa(n)+"-results", func(b *testing.B) {
			for b.Loop() {
				r := rand.New(rand.NewPCG(1, 2))
				s := &flow.Session{MaxBytes: 32 << 20}
				first := 0
				for i := 1; i <= n; i++ {
					var t strings.Builder
					for t.Len() < 4096 {
						t.WriteString(words[r.IntN(len(words))])
						t.WriteByte(' ')
					}
					raw, _ := json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": t.String()}}})
					o, err := Observe(h, Result{Server: "files", Tool: "read_text_file", Labels: flow.Private, Raw: raw, At: int64(i)})
					if err != nil {
						b.Fatal(err)
					}
					s.Apply(int64(i), o)
					if first == 0 && s.Evicted {
						first = i
					}
				}
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "heap-MB")
				b.ReportMetric(float64(s.Bytes())/(1<<20), "index-MB")
				b.ReportMetric(float64(first), "first-eviction")
				runtime.KeepAlive(s)
			}
		})
	}
}

// BenchmarkDecideManySources decides a call in a session that has read
// n results of a few tools: a long session's every call. Its cost must
// not grow with n beyond a pass over the sources (it once did a policy
// lookup per source and sorted the names of all of them: 2.9 ms a call at
// 20,000 results, most of a long session's proxy CPU).
func BenchmarkDecideManySources(b *testing.B) {
	h := hasher(b)
	pol := mustPolicy(b, "version: 1\n")
	for _, n := range []int{1000, 20000} {
		s := &flow.Session{MaxBytes: 32 << 20}
		for i := 1; i <= n; i++ {
			tool := [...]string{"files/read_text_file", "mail/read_inbox", "web/fetch"}[i%3]
			labels := [...]flow.Labels{flow.Private, flow.Private | flow.Untrusted, flow.Untrusted}[i%3]
			s.Apply(int64(i), &flow.Observation{Tool: tool, Labels: labels, Prints: []uint64{uint64(i)*0x9e3779b97f4a7c15 | 1}})
		}
		for _, c := range []struct {
			name string
			call Call
		}{
			{"read", Call{Server: "files", Tool: "read_text_file", Labels: ToolLabels{Labels: flow.Private}, Args: args("path", "notes.md")}},
			{"send", Call{Server: "mail", Tool: "send_email", Labels: ToolLabels{Labels: flow.Sink}, Args: args("to", "bob@example.com", "body", "see you at noon")}},
		} {
			b.Run(strconv.Itoa(n)+"-sources/"+c.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					decide(pol, h, s, c.call)
				}
			})
		}
	}
}
