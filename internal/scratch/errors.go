package scratch

import "errors"

// Sentinel errors. Query's errors wrap one of them; test with errors.Is.
// Their text (Error's Msg) is product copy: the relay shows it to the model
// as the weir_query result, so it says what happened and what to do.
var (
	// ErrRefused: the statement is not one read-only SELECT over this
	// session's tables (the statement gate or the authorizer said no).
	ErrRefused = errors.New("scratch: statement refused")
	// ErrEvicted: the statement names a table evicted to stay within the
	// session's limits.
	ErrEvicted = errors.New("scratch: table evicted")
	// ErrUnknownTable: the statement names a table handle this session never
	// made, or one from another session.
	ErrUnknownTable = errors.New("scratch: unknown table")
	// ErrTimeout: the query ran past QueryTimeout and was interrupted.
	ErrTimeout = errors.New("scratch: query timed out")
	// ErrMemory: the query grew the process past MaxQueryMemory and was
	// interrupted.
	ErrMemory = errors.New("scratch: query used too much memory")
	// ErrSQL: SQLite rejected or failed the statement (a syntax error, an
	// unknown column, a value over the length limit, …).
	ErrSQL = errors.New("scratch: query failed")
	// ErrClosed: the database was closed.
	ErrClosed = errors.New("scratch: database closed")
)

// Error is the error Query returns: Msg is the sentence for the model,
// Kind the sentinel it matches, Err the underlying cause if any.
type Error struct {
	Kind error
	Msg  string
	Err  error
}

func (e *Error) Error() string { return e.Msg }

// Unwrap lets errors.Is match both the sentinel and the cause.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

func refused(msg string) error { return &Error{Kind: ErrRefused, Msg: msg} }
