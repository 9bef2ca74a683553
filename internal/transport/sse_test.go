package transport

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

func TestSSEReader(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []event
	}{
		{"one event", "id: 1\nevent: message\ndata: {\"a\":1}\n\n", []event{{ID: "1", Name: "message", Data: []byte(`{"a":1}`)}}},
		{"data lines joined", "data: {\"a\":\ndata: 1}\n\n", []event{{Data: []byte("{\"a\":\n1}")}}},
		{"CRLF", "id: 7\r\ndata: x\r\n\r\n", []event{{ID: "7", Data: []byte("x")}}},
		{"comments skipped", ": keep-alive\n\ndata: y\n\n", []event{{Data: []byte("y")}}},
		{"id persists", "id: 5\ndata: a\n\ndata: b\n\n", []event{{ID: "5", Data: []byte("a")}, {ID: "5", Data: []byte("b")}}},
		{"priming event", "id: s_0\ndata: \n\n", []event{{ID: "s_0", Data: []byte("")}}},
		{"retry", "retry: 1500\ndata: z\n\n", []event{{Data: []byte("z"), Retry: 1500 * time.Millisecond}}},
		{"no space after colon", "data:q\n\n", []event{{Data: []byte("q")}}},
		{"cut-off event dropped", "data: whole\n\ndata: cut", []event{{Data: []byte("whole")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newSSEReader(strings.NewReader(tt.in), 1<<20)
			var got []event
			for {
				ev, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, ev)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d events %+v, want %d", len(got), got, len(tt.want))
			}
			for i := range got {
				g, w := got[i], tt.want[i]
				if g.ID != w.ID || g.Name != w.Name || !bytes.Equal(g.Data, w.Data) || g.Retry != w.Retry {
					t.Errorf("event %d = %+v (data %q), want %+v (data %q)", i, g, g.Data, w, w.Data)
				}
			}
		})
	}
}

// An event over the limit is reported and consumed; the stream goes on.
func TestSSEReaderOversize(t *testing.T) {
	in := "data: " + strings.Repeat("x", 5000) + "\n\ndata: ok\n\n"
	r := newSSEReader(strings.NewReader(in), 100)
	if _, err := r.Next(); !errors.Is(err, errEventTooLarge) {
		t.Fatalf("first Next = %v, want errEventTooLarge", err)
	}
	ev, err := r.Next()
	if err != nil || string(ev.Data) != "ok" {
		t.Fatalf("second Next = %q, %v; want ok", ev.Data, err)
	}
	// Many small data lines add up past the limit too.
	in = strings.Repeat("data: 0123456789\n", 50) + "\n"
	r = newSSEReader(strings.NewReader(in), 100)
	if _, err := r.Next(); !errors.Is(err, errEventTooLarge) {
		t.Fatalf("many lines: Next = %v, want errEventTooLarge", err)
	}
}

// What writeEvent writes, the reader reads back, whatever the message's
// line breaks.
func TestSSERoundTrip(t *testing.T) {
	for _, msg := range []string{`{"a":1}`, "{\n  \"a\": 1\n}", "{\r\n\"b\":2}", ""} {
		var b bytes.Buffer
		if err := writeEvent(&b, "3_4", []byte(msg)); err != nil {
			t.Fatal(err)
		}
		ev, err := newSSEReader(&b, 1<<20).Next()
		if err != nil {
			t.Fatal(err)
		}
		want := strings.ReplaceAll(msg, "\r\n", "\n")
		if ev.ID != "3_4" || string(ev.Data) != want {
			t.Errorf("round trip of %q = id %q data %q", msg, ev.ID, ev.Data)
		}
	}
}

func FuzzSSEReader(f *testing.F) {
	f.Add([]byte("id: 1\ndata: {}\n\n"))
	f.Add([]byte("data: a\r\ndata: b\r\n\r\n: c\nretry: 9\n\n"))
	f.Add([]byte("data: " + strings.Repeat("y", 300) + "\n\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		r := newSSEReader(bytes.NewReader(in), 128)
		for i := 0; i < 10000; i++ {
			ev, err := r.Next()
			if err != nil {
				if err != io.EOF && !errors.Is(err, errEventTooLarge) {
					t.Fatalf("unexpected error %v", err)
				}
				if err == io.EOF {
					return
				}
				continue
			}
			if len(ev.Data) > 128 {
				t.Fatalf("event of %d bytes passed a 128-byte limit", len(ev.Data))
			}
		}
	})
}
