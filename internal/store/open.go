package store

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/weir-sec/weir/internal/approval"
	"github.com/weir-sec/weir/internal/audit"
	"github.com/weir-sec/weir/internal/flow"
	"github.com/weir-sec/weir/internal/pin"
)

// State is every operation a state store has: what a proxy, the gateway
// and the commands that read the store need, whichever backend holds it.
type State interface {
	Append(ctx context.Context, session string, o *flow.Observation) (int64, error)
	Sync(ctx context.Context, session string, mirror *flow.Session) error
	Take(ctx context.Context, session, key string, n int, per time.Duration, now time.Time) (bool, time.Duration, error)
	Prune(ctx context.Context, olderThan time.Time) (int, error)
	Observations(ctx context.Context, session string, apply func(seq int64, o *flow.Observation)) error
	SessionBytes(ctx context.Context, session string) (int64, error)
	Outline(ctx context.Context, session string, apply func(seq int64, o *flow.Observation)) error
	SetSessionMaxBytes(n int64)

	Pins(ctx context.Context, identity string) (map[string]pin.Pin, error)
	AllPins(ctx context.Context, server string) ([]pin.Pin, error)
	PutPin(ctx context.Context, ps ...pin.Pin) error
	ApprovePins(ctx context.Context, server, tool string, now int64) (int, error)
	ResetPins(ctx context.Context, server string) (int, error)

	approval.Store

	AppendRecords(ctx context.Context, recs []Rec) error
	Records(ctx context.Context, since int64, session string, fn func(Rec) error) error
	PutPolicy(ctx context.Context, hash, source string, text []byte, at time.Time) error
	Policy(ctx context.Context, hash string) (source string, text []byte, err error)
	PruneRecords(ctx context.Context, olderThan time.Time) (int64, error)

	AppendWritten(ctx context.Context, identity string, o *flow.Observation) error
	Written(ctx context.Context, identity string, after int64, fn func(seq int64, o *flow.Observation)) error
	PruneWritten(ctx context.Context, olderThan time.Time) error

	AppendAudit(ctx context.Context, tenant string, rs []*audit.Record) error
	WriteAudit(ctx context.Context, tenant string, w io.Writer) (int64, error)
	AuditTenants(ctx context.Context) ([]string, error)

	Close() error
}

var (
	_ State = (*SQLite)(nil)
	_ State = (*Postgres)(nil)
)

// URLEnv is the environment variable that names a PostgreSQL state store
// for every command that opens one (a gateway's store: {url} comes first).
const URLEnv = "WEIR_STORE_URL"

// Open opens the state store: the PostgreSQL database url names, or, when
// url is empty, the one WEIR_STORE_URL names, or else the SQLite file
// state.db of the home directory.
func Open(ctx context.Context, home, url string) (State, error) {
	if url == "" {
		url = os.Getenv(URLEnv)
	}
	// A nil *Postgres or *SQLite in a State would not be a nil State.
	if url != "" {
		p, err := OpenPostgres(ctx, url)
		if err != nil {
			return nil, err
		}
		return p, nil
	}
	s, err := OpenSQLite(ctx, filepath.Join(home, "state.db"))
	if err != nil {
		return nil, err
	}
	return s, nil
}
