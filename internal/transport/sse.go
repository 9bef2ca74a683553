package transport

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
)

// An event is one server-sent event as Streamable HTTP uses them: the data
// is one JSON-RPC message (or empty, for the priming event a server sends
// so that a client can resume), the id names its place in its stream.
type event struct {
	ID    string
	Name  string
	Data  []byte
	Retry time.Duration // the server's reconnection delay, if it set one
}

// errEventTooLarge is returned by sseReader.Next for an event whose data
// exceeds the limit; the event has been consumed.
var errEventTooLarge = errors.New("server-sent event too large")

// sseReader reads server-sent events (the text/event-stream format of the
// HTML standard) with a bound on each event's data.
type sseReader struct {
	r   *bufio.Reader
	max int
	// lastID is the stream's last event id, which persists across events
	// that do not set one.
	lastID string
	cut    bool // the last line was longer than could be kept
}

func newSSEReader(r io.Reader, max int) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// Next returns the next event that carries data or an id. At the end of
// the stream it returns io.EOF (an event cut off by the end is dropped, as
// the format requires).
func (s *sseReader) Next() (event, error) {
	var (
		ev       event
		data     bytes.Buffer
		hasData  bool
		tooLarge bool
		hasID    bool
	)
	for {
		line, err := s.line()
		if err != nil {
			return event{}, err
		}
		if len(line) == 0 { // end of event
			if tooLarge {
				return event{}, errEventTooLarge
			}
			if !hasData && !hasID {
				ev = event{}
				continue
			}
			ev.ID = s.lastID
			ev.Data = data.Bytes()
			return ev, nil
		}
		if line[0] == ':' { // comment, often a keep-alive
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "data":
			if hasData {
				data.WriteByte('\n')
			}
			hasData = true
			if s.cut || s.max > 0 && data.Len()+len(value) > s.max {
				tooLarge = true
				data.Reset()
				continue
			}
			if !tooLarge {
				data.Write(value)
			}
		case "id":
			if !bytes.ContainsRune(value, 0) {
				s.lastID, hasID = string(value), true
			}
		case "event":
			ev.Name = string(value)
		case "retry":
			if ms, err := strconv.Atoi(string(value)); err == nil && ms >= 0 {
				ev.Retry = time.Duration(ms) * time.Millisecond
			}
		}
	}
}

// line returns one line without its end (CRLF, LF or CR; a lone CR is
// rare enough in practice to be read as part of the line). A line longer
// than the data limit is consumed whole but kept only in part, and
// s.cut says so.
func (s *sseReader) line() ([]byte, error) {
	var buf []byte
	s.cut = false
	keep := s.max + 64
	for {
		chunk, err := s.r.ReadSlice('\n')
		switch {
		case s.max <= 0 || len(buf)+len(chunk) <= keep:
			buf = append(buf, chunk...)
		case len(buf) < keep:
			buf = append(buf, chunk[:keep-len(buf)]...)
			s.cut = true
		default:
			s.cut = true
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			// An unterminated last line ends the stream mid-event.
			return nil, err
		}
		return bytes.TrimRight(buf, "\r\n"), nil
	}
}

// writeEvent writes one message event with the given id (none when
// empty). A message a server wrote over several lines goes out as several
// data lines, which the reader joins again.
func writeEvent(w io.Writer, id string, data []byte) error {
	var b bytes.Buffer
	b.Grow(len(data) + len(id) + 32)
	if id != "" {
		fmt.Fprintf(&b, "id: %s\n", id)
	}
	b.WriteString("event: message\n")
	for {
		line, rest, more := bytes.Cut(data, []byte("\n"))
		b.WriteString("data: ")
		b.Write(bytes.TrimSuffix(line, []byte("\r")))
		b.WriteByte('\n')
		if !more {
			break
		}
		data = rest
	}
	b.WriteByte('\n')
	_, err := w.Write(b.Bytes())
	return err
}
