// Package audit keeps Weir's decision log: one JSON Lines file,
// $WEIR_HOME/audit.log, with one [Record] per decision, each carrying the
// hash of the one before it, so that an edited, inserted, reordered or
// deleted record is detected by `weir audit verify`.
//
// # How it fits
//
// Every proxy's relay opens the log with [Open] and, for each decision the
// engine returns, fills a Record (time, session, server, event, tool,
// labels, verdict, rule, reason, sources, argument shape and keyed hashes)
// and calls [Log.Append]. Several `weir run` processes of one or more
// clients append to the same file at once: each append takes an exclusive
// advisory lock on the file (flock(2) on Unix, LockFileEx on Windows), reads
// the last record's seq and hash from the file's tail (never the whole
// file), and writes one line. The CLI reads the log: `weir audit tail` with
// [Tail] and [Follow] (or [FollowAfter]), `weir audit verify` with [Verify]
// and [VerifyFiles], `weir audit report` with [NewReport] and
// [Report.WriteHTML], `weir audit export` with [Export] (JSON Lines as they
// are, or OCSF events: [OCSF]).
//
// # No values
//
// The log holds labels, shapes and keyed hashes, never argument values or
// result text (DESIGN rule 2). [Shape] turns a call's arguments into their
// shape ({"to":"string(17)","cc":["string(9)"]}) and a map from each
// string's JSON path to a keyed hash of it, so a later record or a replay
// can tell that two calls carried the same value without the log holding
// it. Record.Reason must be built only from tool names, labels, argument
// paths and encodings.
//
// # The chain
//
// Record n has Seq n (1-based) and Prev set to record n-1's Hash; the first
// record's Prev is [Genesis], 64 zeros. Hash is computed like this, and an
// external verifier can re-derive it the same way:
//
//  1. Set Hash to "" and encode the record with Go's encoding/json
//     (json.Marshal): fields in the order of the Record struct, empty
//     omitempty fields left out, map keys sorted, no insignificant
//     whitespace, <, > and & escaped as \u003c, \u003e, \u0026. Since Hash
//     is the last field, the encoding ends in `,"hash":""}`. (Append first
//     replaces invalid UTF-8 in strings by U+FFFD, as decoding would, so
//     that decoding a line and encoding it again gives the same bytes.)
//  2. Hash is the lower-case hex SHA-256 of those bytes.
//  3. The line written is that encoding with the hash filled in, plus "\n".
//
// [Verify] also requires each line to be exactly that encoding, so any byte
// edit shows, even one that decodes to the same record (an added field, a
// reordered key, different whitespace or escapes). This makes an external
// check simple and independent of JSON libraries: for each line, remove the
// 64 hex digits of the final "hash" value, SHA-256 the rest, compare with
// the removed digits, and compare "prev" with the previous line's hash.
//
// # What Verify says
//
// Verify reports the first line that breaks the chain as a *[VerifyError]
// with its line number: bad JSON, a seq gap (a record deleted, inserted or
// moved), a prev mismatch (a record replaced or forged), a hash mismatch (a
// record edited), or a non-canonical line. `weir audit verify` prints that
// line number and reason and exits with status 1: the log has been tampered
// with, or damaged, at that line.
//
// A torn line is a record cut short mid-line, as a crash during a write
// leaves it. Append does not stop at one: it ends the torn line and chains
// the next record from the last complete record before it. Verify walks past
// a torn line when the next record chains past it that way, and if nothing
// else is wrong returns its Summary of all complete records together with a
// *VerifyError whose Torn field is set, naming the first torn line. For that
// case `weir audit verify` says that the chain is intact, gives the record
// count and head as usual, warns with the torn line's number that a write
// was cut short (usually by a crash; the decision it recorded is lost), and
// exits with a status of its own, 3, so scripts can tell damage from
// tampering. When the torn line is the last line ([Summary].TornTail), it
// adds that this cannot be told apart from truncation and that the head
// should be checked against an anchor (below).
//
// An empty log (0 bytes: [Open] creates the file, so a proxy that has not
// decided anything yet leaves one) verifies with no records, and the
// command says so and exits 0; a log that does not exist exits 2, like one
// that cannot be read.
//
// # Rotation
//
// With [MaxSize], a write that would grow the file past the size rotates
// the log first: the full file keeps its records under the name
// audit.log.N, N the seq of its first record, and the write starts a new
// audit.log whose first record chains from the full file's last (Seq goes
// on, Prev is that record's Hash). [Files] lists a log's files in chain
// order. The rotation happens under the full file's lock, and the new file
// is written beside the log and renamed over it, so there is a log at the
// path at every instant and no process can start a chain from Genesis in a
// gap; every Append checks, once it holds the lock, that its file is still
// the one at the path, and follows the log to the new file when it is not,
// so processes with no MaxSize of their own (and older ones) never write
// to a rotated file. Rotated files are never deleted or renamed again.
// [VerifyFiles] walks the files as one chain; [Tail], [Follow] and
// [ReadFiles] read across them.
//
// # Chains in a state store
//
// A gateway's replicas on several machines share a PostgreSQL state store
// and keep their records there instead, one chain per tenant ([Tenant] of
// the record's session), each row a record's line exactly as above: [Chain]
// does Append's chaining for such a store, and a chain written out row by
// row is a log file, byte for byte, that [Verify] and [ExportReader] read.
//
// # Limits
//
// A hash chain on its own cannot detect truncation: deleting the newest
// records leaves a shorter chain that verifies. The chain is not keyed
// either: whoever can write the file can rewrite it from any point and
// recompute every hash after it. [Summary].Head, the hash of the last
// record, is what an operator anchors elsewhere (a ticket, another machine,
// a signed note); a log in which no verified record carries an anchored
// head has lost or rewritten records since the anchor was taken.
//
// Append does not fsync: a record is in the operating system's cache when
// Append returns, which survives a crash of the process but not a power
// loss. [Log.Sync] flushes on demand. (A rotation syncs the new file before
// renaming it into place.)
//
// A rotation that fails (on Windows, renaming over a file other processes
// hold open can) loses nothing: the records go to the full file, Append
// returns a [*RotateError] saying so, and the next Append tries again.
package audit
