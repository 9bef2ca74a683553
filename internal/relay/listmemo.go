package relay

import (
	"bytes"
	"context"
	"hash/maphash"
	"time"

	"github.com/weir-sec/weir/internal/audit"
	"github.com/weir-sec/weir/internal/jsonrpc"
	"github.com/weir-sec/weir/internal/policy"
	"github.com/weir-sec/weir/internal/store"
)

// Clients list a server's tools again and again (some before every turn),
// and the answer is almost always the same bytes. A tool list is decided
// in full — read, pinned, scanned, judged — when anything its decision
// reads differs from the last one's: the list's bytes, the policy, the
// server's instructions, or any pin (this server's, and the other
// servers' that shadowing compares with), which the store's pins version
// tells in one read. Otherwise the relay sends what it sent then.

// listKey is what a tool list's decision depends on.
type listKey struct {
	hash         uint64 // of the result's bytes
	pol          *policy.Policy
	instructions string
	pins         int64 // the store's pins version
	memoable     bool  // the store told its pins version
}

// listMemo is the last tool list decided in full and what was sent for
// it; the zero value matches nothing.
type listMemo struct {
	key    listKey
	result []byte // the result member sent; nil: the server's as it was
	reason string // the audit record's
}

// pinsVersioner is a store that tells in one read whether any pin changed.
type pinsVersioner interface {
	PinsVersion(ctx context.Context) (int64, error)
}

var (
	_ pinsVersioner = (*store.SQLite)(nil)
	_ pinsVersioner = (*store.Postgres)(nil)
)

// listSeed keys the hash that tells a tool list from the last one.
var listSeed = maphash.MakeSeed()

// listKeyOf reads what deciding result under pol depends on. The pins
// version is read before the pins are, so a decision is never kept under
// a version older than what it read.
func (r *Relay) listKeyOf(ctx context.Context, result []byte, pol *policy.Policy) listKey {
	k := listKey{hash: maphash.Bytes(listSeed, result), pol: pol}
	r.mu.Lock()
	k.instructions = r.instructions
	r.mu.Unlock()
	if v, ok := r.opts.Store.(pinsVersioner); ok {
		var err error
		k.pins, err = v.PinsVersion(ctx)
		k.memoable = err == nil
	}
	return k
}

// memoList answers a tool list from the memo when its key matches and
// the list need not be recorded again; it records the list's audit
// record as a full decision does.
func (r *Relay) memoList(k listKey, at int64, result, line []byte) ([]byte, bool) {
	r.mu.Lock()
	m := r.listMemo
	ok := k.memoable && m.key == k && !r.listDue(k, at)
	r.mu.Unlock()
	if !ok {
		return nil, false
	}
	if m.result != nil {
		out, ok := jsonrpc.ReplaceValue(line, result, m.result)
		if !ok {
			if out, ok = jsonrpc.ReplaceMember(line, "result", m.result); !ok {
				return nil, false
			}
		}
		line = out
	}
	r.recordWith(&audit.Record{Event: "list", Method: "tools/list", Verdict: "allow", Enforced: true, Reason: m.reason}, nil, nil, nil)
	return line, true
}

// keepList remembers a tool list decided in full, when the decision
// wrote no pin and read them all (a write moves the pins version, so
// the next list is decided again anyway); otherwise it forgets the last,
// so that a memo is always of the latest full decision, whose effects
// (the tools withheld, the catalogue) are the relay's state.
func (r *Relay) keepList(k listKey, keep bool, result, line []byte, reason string) {
	m := listMemo{}
	if keep && k.memoable {
		m = listMemo{key: k, reason: reason}
		if sent := jsonrpc.Member(line, "result"); !bytes.Equal(sent, result) {
			m.result = bytes.Clone(sent)
		}
	}
	r.mu.Lock()
	r.listMemo = m
	r.listsDecided++
	r.mu.Unlock()
}

// listSeen is the tool list a relay last recorded.
type listSeen struct {
	hash uint64
	pol  *policy.Policy
	at   int64 // Unix ms
}

// listRecordEvery is how often an unchanged tool list is recorded again,
// so that pruning old recordings never leaves a long session's calls
// without the definitions replay judges them by.
const listRecordEvery = time.Hour

// listDue reports whether a list of key k is to be recorded at: replay
// reads the latest definitions from the session's recordings, so a list
// recorded already under the same policy (labels follow from the two)
// adds nothing but its cost. The caller holds r.mu.
func (r *Relay) listDue(k listKey, at int64) bool {
	last := r.lastList
	return last.hash != k.hash || last.pol != k.pol || at-last.at >= listRecordEvery.Milliseconds()
}

// listChanged reports whether a list of key k is to be recorded, and
// notes that it is.
func (r *Relay) listChanged(k listKey, at int64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.listDue(k, at) {
		return false
	}
	r.lastList = listSeen{hash: k.hash, pol: k.pol, at: at}
	return true
}
