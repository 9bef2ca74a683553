package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Summary describes a verified chain.
type Summary struct {
	Records int    // records that verified
	First   string // Time of the first record
	Last    string // Time of the last verified record
	Head    string // Hash of the last verified record: anchor it elsewhere to detect truncation
	Torn    []int  // line numbers of torn lines (see VerifyError.Torn)
	// TornTail counts the torn lines that end the log (the last TornTail
	// of Torn, usually one) with no record after them. A torn last line
	// cannot be told apart from a log truncated mid-line, so Head should
	// then be checked against an anchor.
	TornTail int
}

// VerifyError names the line where a log stops verifying.
type VerifyError struct {
	Line   int    // 1-based line number in the file
	Seq    int64  // the sequence number the record on that line should carry
	Reason string // what is wrong, for a person to read
	// Torn is set when the only damage is torn lines: records cut short
	// mid-line, as a crash during a write leaves them. Every complete record
	// verifies and the chain runs unbroken past the torn lines; Line is the
	// first of them (all are in Summary.Torn).
	Torn bool
}

func (e *VerifyError) Error() string {
	return fmt.Sprintf("audit log line %d (seq %d): %s", e.Line, e.Seq, e.Reason)
}

// Verify reads a whole log and walks its chain. Every line must be a record
// in canonical form whose Seq is one more than the previous record's (1 for
// the first), whose Prev is the previous record's Hash (Genesis for the
// first), and whose Hash is the SHA-256 of its canonical encoding with Hash
// "". The Summary covers the records that verified before the first failure.
//
// A line that breaks the chain (bad JSON, a seq gap, a prev or hash mismatch,
// a non-canonical encoding) stops the walk: Verify returns a *VerifyError for
// it. A torn line (JSON cut short, as an interrupted write leaves it) does
// not stop the walk when the next record chains from the last record before
// it, because that is exactly what Append does after a crash; Verify then
// goes on, and returns a *VerifyError with Torn set for the first torn line
// only if nothing else fails. A torn line that the next record does not chain
// past is a record cut short after the fact, and is reported as breaking the
// chain. A torn last line cannot be told apart from a truncated one and is
// reported as torn, and counted in Summary.TornTail.
//
// Errors reading r are returned wrapped, not as a *VerifyError.
func Verify(r io.Reader) (Summary, error) {
	var (
		sum       Summary
		expSeq    int64 = 1
		prev            = Genesis
		tornLine  int   // the torn line not yet chained past, 0 if none
		tornSeq   int64 // the seq the first recovered torn line stood for
		firstTorn int64
	)
	br := bufio.NewReaderSize(r, 64<<10)
	for lineNo := 1; ; lineNo++ {
		line, long, err := readLine(br)
		if err == io.EOF {
			break
		}
		if err != nil {
			return sum, fmt.Errorf("audit: verify: read line %d: %w", lineNo, err)
		}
		bad := func(reason string) (Summary, error) {
			return sum, &VerifyError{Line: lineNo, Seq: expSeq, Reason: reason}
		}
		if long {
			return bad("line is longer than " + strconv.Itoa(MaxLine) + " bytes")
		}
		var rec Record
		if err := json.Unmarshal(line, &rec); err != nil {
			if len(line) == 0 {
				return bad("empty line")
			}
			if isTorn(line) {
				if tornLine == 0 {
					tornLine, tornSeq = lineNo, expSeq
				}
				if len(sum.Torn) == 0 {
					firstTorn = expSeq
				}
				sum.Torn = append(sum.Torn, lineNo)
				continue
			}
			return bad("bad JSON: " + err.Error())
		}

		var broken string
		switch {
		case rec.Seq != expSeq:
			broken = fmt.Sprintf("seq gap: want seq %d, found %d (a record was deleted, inserted or moved here)", expSeq, rec.Seq)
		case rec.Prev != prev:
			broken = fmt.Sprintf("prev mismatch: prev is %s but the previous record's hash is %s (a record was forged, replaced or inserted here)", short(rec.Prev), short(prev))
		}
		if broken != "" && tornLine != 0 {
			return sum, &VerifyError{Line: tornLine, Seq: tornSeq,
				Reason: "record cut short mid-line, and the next record does not chain past it: " + broken}
		}
		if broken != "" {
			return bad(broken)
		}
		tornLine = 0

		_, canon, h, err := canonical(&rec)
		if err != nil {
			return bad(err.Error())
		}
		if rec.Hash != h {
			return bad(fmt.Sprintf("hash mismatch: recorded %s, computed %s (the record was edited)", short(rec.Hash), short(h)))
		}
		if !bytes.Equal(line, canon) {
			return bad("not in canonical form: the bytes differ from the record's encoding (the line was edited)")
		}

		if sum.Records == 0 {
			sum.First = rec.Time
		}
		sum.Records++
		sum.Last = rec.Time
		sum.Head = rec.Hash
		expSeq++
		prev = rec.Hash
	}
	if len(sum.Torn) == 0 {
		return sum, nil
	}
	if tornLine != 0 {
		for _, n := range sum.Torn {
			if n >= tornLine {
				sum.TornTail++
			}
		}
	}
	e := &VerifyError{Line: sum.Torn[0], Seq: firstTorn, Torn: true}
	switch {
	case tornLine == sum.Torn[0]:
		e.Reason = "the last record is cut short mid-line: a write was interrupted (a crash?), or the log was truncated"
	case sum.TornTail > 0:
		e.Reason = fmt.Sprintf("record cut short mid-line: a write was interrupted (a crash?); the chain resumes after it and all %d complete records verify, but the last line (%d) is cut short too: a crash, or the log was truncated", sum.Records, sum.Torn[len(sum.Torn)-1])
	default:
		e.Reason = fmt.Sprintf("record cut short mid-line: a write was interrupted (a crash?); the chain resumes after it and all %d complete records verify", sum.Records)
	}
	return sum, e
}

// readLine reads one line without its newline. A last line without a
// newline is returned as is; io.EOF means no more lines. A line longer than
// MaxLine is consumed and reported as long, without its bytes.
func readLine(br *bufio.Reader) (line []byte, long bool, err error) {
	for {
		frag, err := br.ReadSlice('\n')
		if len(line)+len(frag) > MaxLine+1 {
			long = true
			line = nil
		} else if !long {
			line = append(line, frag...)
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF:
			if len(line) == 0 && !long {
				return nil, false, io.EOF
			}
			return line, long, nil
		case err != nil:
			return nil, false, err
		}
		if !long {
			line = line[:len(line)-1]
		}
		return line, long, nil
	}
}

// isTorn reports whether line is a JSON value cut short: the start of a
// value with no syntax error before its bytes run out.
func isTorn(line []byte) bool {
	var v json.RawMessage
	err := json.NewDecoder(bytes.NewReader(line)).Decode(&v)
	return errors.Is(err, io.ErrUnexpectedEOF)
}

// short abbreviates a hash for messages.
func short(h string) string {
	if h == "" {
		return `""`
	}
	if len(h) > 12 {
		return h[:12] + "…"
	}
	return h
}
