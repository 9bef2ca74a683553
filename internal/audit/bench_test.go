package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// args20 is a tools/call arguments object with 20 fields of mixed types.
func args20() json.RawMessage {
	var b bytes.Buffer
	b.WriteString("{")
	for i := range 20 {
		if i > 0 {
			b.WriteString(",")
		}
		switch i % 4 {
		case 0:
			fmt.Fprintf(&b, `"field%d":"value number %d with some text in it"`, i, i)
		case 1:
			fmt.Fprintf(&b, `"field%d":%d`, i, i*1000)
		case 2:
			fmt.Fprintf(&b, `"field%d":["a%d","b%d"]`, i, i, i)
		default:
			fmt.Fprintf(&b, `"field%d":{"x":true,"y":null}`, i)
		}
	}
	b.WriteString("}")
	return b.Bytes()
}

func benchRecord(b *testing.B) *Record {
	shape, hashes, err := Shape(args20(), testKeyed)
	if err != nil {
		b.Fatal(err)
	}
	r := testRecord(1)
	r.Shape, r.Hashes = shape, hashes
	return r
}

// BenchmarkAppend measures one Append (lock, read the tail, encode, hash,
// write, unlock) of a record whose shape has 20 fields, to a growing log.
func BenchmarkAppend(b *testing.B) {
	path := filepath.Join(b.TempDir(), "audit.log")
	l, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	tmpl := benchRecord(b)
	r := new(Record)
	*r = *tmpl
	if err := l.Append(r); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(mustMarshal(b, r)) + 1))
	b.ReportAllocs()
	for b.Loop() {
		*r = *tmpl
		if err := l.Append(r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendParallel is BenchmarkAppend from GOMAXPROCS goroutines
// sharing one Log.
func BenchmarkAppendParallel(b *testing.B) {
	path := filepath.Join(b.TempDir(), "audit.log")
	l, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	tmpl := benchRecord(b)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		r := new(Record)
		for pb.Next() {
			*r = *tmpl
			if err := l.Append(r); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkShape(b *testing.B) {
	args := args20()
	b.SetBytes(int64(len(args)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Shape(args, testKeyed); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerify(b *testing.B) {
	path := filepath.Join(b.TempDir(), "audit.log")
	l, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	tmpl := benchRecord(b)
	for range 10000 {
		r := *tmpl
		if err := l.Append(&r); err != nil {
			b.Fatal(err)
		}
	}
	l.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Verify(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}

func mustMarshal(b *testing.B, r *Record) []byte {
	out, err := json.Marshal(r)
	if err != nil {
		b.Fatal(err)
	}
	return out
}

// BenchmarkShapeUnkeyed is BenchmarkShape without hashing, to separate
// Shape's own cost from the keyed hash's.
func BenchmarkShapeUnkeyed(b *testing.B) {
	args := args20()
	b.SetBytes(int64(len(args)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Shape(args, nil); err != nil {
			b.Fatal(err)
		}
	}
}
