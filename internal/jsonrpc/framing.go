package jsonrpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
)

// DefaultMaxMessage is the default limit on one message, in bytes.
const DefaultMaxMessage = 16 << 20

// ErrTooLarge is wrapped by the *OversizeError that Reader.Next returns for
// a line over the limit.
var ErrTooLarge = errors.New("message too large")

// OversizeError reports a line longer than the reader's limit. The line has
// been consumed; ID and Method are recovered from it when they appear as
// top-level members, so a request can still get its one answer.
type OversizeError struct {
	Size   int64  // bytes in the line, without the newline
	Limit  int    // the reader's limit
	ID     []byte // raw JSON of the top-level "id", or nil
	Method string // top-level "method", or ""
}

func (e *OversizeError) Error() string {
	return fmt.Sprintf("message of %d bytes exceeds the limit of %d bytes", e.Size, e.Limit)
}

func (e *OversizeError) Unwrap() error { return ErrTooLarge }

// Reader reads newline-delimited messages.
type Reader struct {
	br  *bufio.Reader
	max int
	buf []byte
}

// NewReader returns a Reader that refuses lines longer than max bytes.
func NewReader(r io.Reader, max int) *Reader {
	if max <= 0 {
		max = DefaultMaxMessage
	}
	return &Reader{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

// Next returns the next non-blank line without its line ending. The slice is
// valid until the next call. At the end of the stream it returns io.EOF (a
// final line without a newline is returned first). A line over the limit is
// consumed and reported as an *OversizeError; the stream stays usable.
func (r *Reader) Next() ([]byte, error) {
	for {
		line, err := r.line()
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(line)) > 0 {
			return line, nil
		}
	}
}

func (r *Reader) line() ([]byte, error) {
	r.buf = r.buf[:0]
	for {
		chunk, err := r.br.ReadSlice('\n')
		if len(r.buf)+len(chunk) > r.max+2 { // +2 tolerates a CRLF ending
			return nil, r.discard(chunk, err)
		}
		r.buf = append(r.buf, chunk...)
		switch {
		case err == nil, errors.Is(err, io.EOF) && len(r.buf) > 0:
			line := trimEOL(r.buf)
			if len(line) > r.max {
				var sc envelopeScanner
				sc.feed(line)
				return nil, &OversizeError{Size: int64(len(line)), Limit: r.max, ID: sc.id(), Method: sc.method()}
			}
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return nil, err
		}
	}
}

// discard consumes the rest of an oversized line, scanning it for its
// envelope so the caller can answer it.
func (r *Reader) discard(chunk []byte, err error) error {
	var sc envelopeScanner
	size := int64(len(r.buf))
	sc.feed(r.buf)
	for {
		size += int64(len(chunk))
		sc.feed(chunk)
		if err == nil || !errors.Is(err, bufio.ErrBufferFull) {
			break
		}
		chunk, err = r.br.ReadSlice('\n')
	}
	r.buf = r.buf[:0]
	if err == nil {
		size-- // the newline
	} else if !errors.Is(err, io.EOF) {
		return err
	}
	return &OversizeError{Size: size, Limit: r.max, ID: sc.id(), Method: sc.method()}
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte{'\n'})
	return bytes.TrimSuffix(b, []byte{'\r'})
}

// Writer writes whole lines; concurrent WriteLine calls never interleave.
type Writer struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
}

// NewWriter returns a Writer on w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// WriteLine writes msg followed by a newline in a single Write.
func (w *Writer) WriteLine(msg []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(append(w.buf[:0], msg...), '\n')
	_, err := w.w.Write(w.buf)
	if cap(w.buf) > 1<<20 {
		w.buf = nil // do not pin a huge buffer after one big message
	}
	return err
}

// envelopeScanner is a streaming scanner that picks the top-level "id" and
// "method" members out of a JSON object without holding the object in
// memory. It tolerates garbage: on anything unexpected it just finds less.
type envelopeScanner struct {
	depth    int
	inString bool
	escaped  bool
	// State for the top level (depth 1) of the object.
	expectKey bool
	key       []byte // key being read, or last key read
	keyDone   bool
	value     []byte // scalar value being captured for id/method
	capturing bool
	gotID     []byte
	gotMethod []byte
	tooLong   bool
}

const maxEnvelopeValue = 512

func (s *envelopeScanner) feed(p []byte) {
	for i := 0; i < len(p); i++ {
		if s.depth > 1 {
			if i = s.skipNested(p, i); i == len(p) {
				return
			}
		}
		s.step(p[i])
	}
}

// skipNested consumes p from i while the scanner is inside a nested value,
// where only quotes, escapes and brackets change its state (see step), and
// returns the index of the first byte it left for step. Most of a message
// is nested, so this keeps oversized and deep lines cheap to scan.
func (s *envelopeScanner) skipNested(p []byte, i int) int {
	for i < len(p) && s.depth > 1 {
		c := p[i]
		i++
		switch {
		case s.escaped:
			s.escaped = false
		case s.inString:
			switch c {
			case '\\':
				s.escaped = true
			case '"':
				s.inString = false
			}
		case c == '"':
			s.inString = true
		case c == '{' || c == '[':
			s.depth++
		case c == '}' || c == ']':
			s.depth--
		}
	}
	return i
}

func (s *envelopeScanner) step(c byte) {
	if s.capturing && s.depth == 1 {
		if len(s.value) < maxEnvelopeValue {
			s.value = append(s.value, c)
		} else {
			s.tooLong = true
		}
	}
	if s.inString {
		switch {
		case s.escaped:
			s.escaped = false
		case c == '\\':
			s.escaped = true
		case c == '"':
			s.inString = false
			if s.depth == 1 && s.expectKey && !s.keyDone {
				s.keyDone = true
				return
			}
			if s.capturing && s.depth == 1 {
				s.finishValue()
			}
			return
		}
		if s.depth == 1 && s.expectKey && !s.keyDone && len(s.key) < maxEnvelopeValue {
			s.key = append(s.key, c)
		}
		return
	}
	switch c {
	case '"':
		s.inString = true
		if s.depth == 1 && s.expectKey {
			s.key = s.key[:0]
			s.keyDone = false
		}
	case '{', '[':
		s.depth++
		if s.depth == 1 && c == '{' {
			s.expectKey = true
		}
		if s.capturing && s.depth == 2 {
			// An object or array id is invalid; stop capturing it.
			s.capturing = false
			s.value = nil
		}
	case '}', ']':
		if s.capturing && s.depth == 1 {
			s.value = s.value[:len(s.value)-1]
			s.finishValue()
		}
		s.depth--
	case ':':
		if s.depth == 1 && s.expectKey && s.keyDone {
			s.expectKey = false
			k := string(s.key)
			if k == "id" || k == "method" {
				s.capturing = true
				s.value = s.value[:0]
			}
		}
	case ',':
		if s.depth == 1 {
			if s.capturing {
				s.value = s.value[:len(s.value)-1]
				s.finishValue()
			}
			s.expectKey = true
			s.keyDone = false
		}
	}
}

func (s *envelopeScanner) finishValue() {
	s.capturing = false
	if s.tooLong {
		s.tooLong = false
		return
	}
	v := bytes.TrimSpace(s.value)
	switch string(s.key) {
	case "id":
		s.gotID = append([]byte(nil), v...)
	case "method":
		s.gotMethod = append([]byte(nil), v...)
	}
}

// id returns the raw id if it is a valid JSON string or number.
func (s *envelopeScanner) id() []byte {
	v := s.gotID
	if len(v) == 0 || !json.Valid(v) {
		return nil
	}
	if v[0] == '"' || v[0] == '-' || (v[0] >= '0' && v[0] <= '9') {
		return v
	}
	return nil
}

func (s *envelopeScanner) method() string {
	v := s.gotMethod
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		return string(v[1 : len(v)-1])
	}
	return ""
}
