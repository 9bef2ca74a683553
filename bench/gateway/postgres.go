package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weir-sec/weir/internal/store/pgtest"
)

const storeDoc = "SQLite targets: $WEIR_HOME/state.db as weir opens it (modernc.org/sqlite, WAL, synchronous=NORMAL). " +
	"PostgreSQL targets: one throwaway cluster on this machine (internal/store/pgtest: initdb, a server on a loopback TCP port started as the postgres user, " +
	"fsync=off, synchronous_commit=off, full_page_writes=off, max_connections=200), a fresh database per target, reached over TCP; " +
	"it competes with weir and the everything-server for the same cores."

// pgCluster is the PostgreSQL the PostgreSQL targets share, one database
// each.
type pgCluster struct {
	c       *pgtest.Cluster
	urls    []string
	version string
	pid     int // the postmaster
}

// pgMissing says why the PostgreSQL targets cannot run, "" when they can.
func pgMissing() string {
	if pgtest.Bin() == "" {
		return "PostgreSQL server binaries not found (/usr/lib/postgresql/*/bin, or initdb and pg_ctl on PATH); install postgresql-15"
	}
	return ""
}

// startPG starts a cluster with n empty databases.
func startPG(ctx context.Context, n int) (*pgCluster, error) {
	c, err := pgtest.Start(ctx)
	if err != nil {
		return nil, err
	}
	p := &pgCluster{c: c}
	if err := p.init(ctx, n); err != nil {
		c.Stop()
		return nil, err
	}
	return p, nil
}

func (p *pgCluster) init(ctx context.Context, n int) error {
	for range n {
		_, url, err := p.c.CreateDatabase(ctx)
		if err != nil {
			return err
		}
		p.urls = append(p.urls, url)
	}
	conn, err := pgx.Connect(ctx, p.c.URL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	var version string
	var backend int
	if err := conn.QueryRow(ctx, "SELECT current_setting('server_version'), pg_backend_pid()").Scan(&version, &backend); err != nil {
		return err
	}
	p.version = "PostgreSQL " + strings.Fields(version)[0]
	// A backend is a child of the postmaster: its parent is the process
	// whose CPU, with its children's, is the cluster's.
	f := statFields(backend)
	if len(f) < 2 {
		return fmt.Errorf("reading /proc/%d/stat of a PostgreSQL backend", backend)
	}
	p.pid, err = strconv.Atoi(f[1])
	return err
}

// cpu is the CPU time the cluster has used: the postmaster's, that of its
// children that have exited, and that of those still running (every
// backend, the feed listeners' included).
func (p *pgCluster) cpu() time.Duration {
	f := statFields(p.pid)
	if len(f) < 15 {
		return 0
	}
	var ticks int64
	for _, i := range []int{11, 12, 13, 14} { // utime, stime, cutime, cstime
		v, _ := strconv.ParseInt(f[i], 10, 64)
		ticks += v
	}
	procs, _ := os.ReadDir("/proc")
	parent := strconv.Itoa(p.pid)
	for _, e := range procs {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f := statFields(pid); len(f) >= 13 && f[1] == parent {
			ut, _ := strconv.ParseInt(f[11], 10, 64)
			st, _ := strconv.ParseInt(f[12], 10, 64)
			ticks += ut + st
		}
	}
	return time.Duration(ticks) * time.Second / hz
}

func (p *pgCluster) stop() {
	if err := p.c.Stop(); err != nil {
		progress("stopping PostgreSQL: %v", err)
	}
}

// shareKey writes one new install key into each home, as an operator
// copies it to every replica: fingerprints are keyed with it.
func shareKey(homes ...string) error {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return err
	}
	for _, h := range homes {
		if err := os.MkdirAll(h, 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(h, "key"), key, 0o600); err != nil {
			return err
		}
	}
	return nil
}
