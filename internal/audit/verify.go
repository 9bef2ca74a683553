package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
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
	File   string // the file, when several were walked (VerifyFiles); "" for Verify
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
	if e.File != "" {
		return fmt.Sprintf("%s line %d (seq %d): %s", e.File, e.Line, e.Seq, e.Reason)
	}
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
// Errors reading r are returned wrapped, not as a *VerifyError. A log that
// has been rotated is verified with [VerifyFiles].
func Verify(r io.Reader) (Summary, error) {
	v := newVerifier([]string{""}, FromGenesis)
	if err := v.walk(0, r); err != nil {
		return v.sums[0].Summary, err
	}
	err := v.finish()
	return v.sums[0].Summary, err
}

// ChainStart says where a walk over files expects the chain to begin.
type ChainStart int

const (
	// FromGenesis: the first record is record 1, chained from Genesis, as
	// in every log that still holds its first file.
	FromGenesis ChainStart = iota
	// FromFirstRecord: the first record may be any record, as in a walk
	// that starts at a rotated file, or at the active file, of a log whose
	// older files were archived. Its link (FileSummary.FirstSeq and
	// FirstPrev) is taken as given: check it against the head of the file
	// before it, or against an anchor. (A first record numbered 1 must
	// still chain from Genesis.)
	FromFirstRecord
)

// FileSummary describes the records of one file of a chain walked by
// VerifyFiles.
type FileSummary struct {
	Path string
	Summary
	// FirstSeq and FirstPrev are the Seq and Prev of the file's first
	// record: where it joins the file before it (0 and "" if the file has
	// no record).
	FirstSeq  int64
	FirstPrev string
}

// VerifyFiles walks one chain kept in several files, in the order given
// (oldest first, as [Files] lists a rotated log's), as one log: each file's
// first record must chain from the last record of the file before it, so a
// file left out, repeated, reordered or swapped breaks the chain at that
// file's first line. It reads each file as Verify reads one log, and
// returns a summary for each file walked (the one that breaks included,
// with the records before the break). A *VerifyError names the file (as
// given) and the line.
//
// A torn line at the end of one file, chained past by the next file's
// first record, is a crash the log recovered from, as in the middle of one
// file; only the last file can end in a torn tail.
func VerifyFiles(paths []string, start ChainStart) ([]FileSummary, error) {
	if len(paths) == 0 {
		return nil, errors.New("audit: verify: no files")
	}
	v := newVerifier(paths, start)
	for i, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return v.sums[:i], fmt.Errorf("audit: verify: %w", err)
		}
		err = v.walk(i, f)
		f.Close()
		if err != nil {
			return v.sums[:i+1], err
		}
	}
	return v.sums, v.finish()
}

// pos is a line of one of the files a verifier walks.
type pos struct{ file, line int }

func (p pos) before(q pos) bool { return p.file < q.file || p.file == q.file && p.line < q.line }

// verifier walks one chain across one or more files.
type verifier struct {
	names   []string // "" for a lone reader: messages then give line numbers alone
	sums    []FileSummary
	start   ChainStart
	started bool // a record has verified, or the chain's start is fixed
	expSeq  int64
	prev    string
	records int // across files

	torn      []pos // every torn line
	tornAt    pos   // the torn line not yet chained past, if pending
	pending   bool
	tornSeq   int64 // the seq the pending torn line stood for
	firstTorn int64 // the seq the first torn line stood for
}

func newVerifier(names []string, start ChainStart) *verifier {
	v := &verifier{names: names, start: start, expSeq: 1, prev: Genesis, sums: make([]FileSummary, len(names))}
	for i, n := range names {
		v.sums[i].Path = n
	}
	if start == FromGenesis {
		v.started = true
	}
	return v
}

// at names a line for a message: its number, or its file and number.
func (v *verifier) at(p pos) string {
	if v.names[p.file] == "" {
		return strconv.Itoa(p.line)
	}
	return fmt.Sprintf("%s line %d", v.names[p.file], p.line)
}

func (v *verifier) fail(p pos, seq int64, reason string) *VerifyError {
	return &VerifyError{File: v.names[p.file], Line: p.line, Seq: seq, Reason: reason}
}

// walk reads file i, the next file of the chain.
func (v *verifier) walk(i int, r io.Reader) error {
	sum := &v.sums[i]
	br := bufio.NewReaderSize(r, 64<<10)
	for lineNo := 1; ; lineNo++ {
		here := pos{i, lineNo}
		line, long, err := readLine(br)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			where := "line " + strconv.Itoa(lineNo)
			if v.names[i] != "" {
				where = v.names[i] + " " + where
			}
			return fmt.Errorf("audit: verify: read %s: %w", where, err)
		}
		if long {
			return v.fail(here, v.expSeq, "line is longer than "+strconv.Itoa(MaxLine)+" bytes")
		}
		var rec Record
		if err := json.Unmarshal(line, &rec); err != nil {
			if len(line) == 0 {
				return v.fail(here, v.expSeq, "empty line")
			}
			if isTorn(line) {
				if !v.pending {
					v.tornAt, v.tornSeq, v.pending = here, v.expSeq, true
				}
				if len(v.torn) == 0 {
					v.firstTorn = v.expSeq
				}
				v.torn = append(v.torn, here)
				sum.Torn = append(sum.Torn, lineNo)
				continue
			}
			return v.fail(here, v.expSeq, "bad JSON: "+err.Error())
		}
		if !v.started {
			// A walk from a record of the chain's middle: it sets the link
			// the rest must follow (record 1 still chains from Genesis). A
			// torn line before it cannot be judged.
			v.started, v.pending = true, false
			if rec.Seq != 1 {
				v.expSeq, v.prev = rec.Seq, rec.Prev
			}
			if len(v.torn) > 0 {
				v.firstTorn = rec.Seq
			}
		}
		if sum.FirstSeq == 0 {
			sum.FirstSeq, sum.FirstPrev = rec.Seq, rec.Prev
		}

		var broken string
		switch {
		case rec.Seq != v.expSeq:
			broken = fmt.Sprintf("seq gap: want seq %d, found %d (a record was deleted, inserted or moved here)", v.expSeq, rec.Seq)
		case rec.Prev != v.prev:
			broken = fmt.Sprintf("prev mismatch: prev is %s but the previous record's hash is %s (a record was forged, replaced or inserted here)", short(rec.Prev), short(v.prev))
		}
		if broken != "" && v.pending {
			return v.fail(v.tornAt, v.tornSeq, "record cut short mid-line, and the next record does not chain past it: "+broken)
		}
		if broken != "" {
			return v.fail(here, v.expSeq, broken)
		}
		v.pending = false

		_, canon, h, err := canonical(&rec)
		if err != nil {
			return v.fail(here, v.expSeq, err.Error())
		}
		if rec.Hash != h {
			return v.fail(here, v.expSeq, fmt.Sprintf("hash mismatch: recorded %s, computed %s (the record was edited)", short(rec.Hash), short(h)))
		}
		if !bytes.Equal(line, canon) {
			return v.fail(here, v.expSeq, "not in canonical form: the bytes differ from the record's encoding (the line was edited)")
		}

		if sum.Records == 0 {
			sum.First = rec.Time
		}
		sum.Records++
		sum.Last = rec.Time
		sum.Head = rec.Hash
		v.records++
		v.expSeq++
		v.prev = rec.Hash
	}
}

// finish reports the torn lines of a walk that found nothing else wrong.
func (v *verifier) finish() error {
	if len(v.torn) == 0 {
		return nil
	}
	tail := 0
	if v.pending {
		for _, p := range v.torn {
			if !p.before(v.tornAt) {
				v.sums[p.file].TornTail++
				tail++
			}
		}
	}
	first, last := v.torn[0], v.torn[len(v.torn)-1]
	e := v.fail(first, v.firstTorn, "")
	e.Torn = true
	switch {
	case v.pending && v.tornAt == first:
		e.Reason = "the last record is cut short mid-line: a write was interrupted (a crash?), or the log was truncated"
	case tail > 0:
		e.Reason = fmt.Sprintf("record cut short mid-line: a write was interrupted (a crash?); the chain resumes after it and all %d complete records verify, but the last line (%s) is cut short too: a crash, or the log was truncated", v.records, v.at(last))
	default:
		e.Reason = fmt.Sprintf("record cut short mid-line: a write was interrupted (a crash?); the chain resumes after it and all %d complete records verify", v.records)
	}
	return e
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
