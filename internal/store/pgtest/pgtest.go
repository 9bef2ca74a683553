// Package pgtest starts a throwaway PostgreSQL cluster for tests: initdb
// into a temporary directory, a server on a free loopback port (and a Unix
// socket in that directory), one empty database per test, and everything
// stopped and removed when the package's tests end.
//
// A package whose tests use it runs them through [Main], which stops the
// cluster after them:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		url := pgtest.NewDatabase(t) // postgres://…, dropped after t
//		…
//	}
//
// The cluster starts on the first NewDatabase, so a run that selects no
// PostgreSQL test pays nothing. When the PostgreSQL server binaries are not
// installed, NewDatabase skips the test, unless WEIR_E2E_REQUIRE=1 (CI sets
// it), when it fails it: a missing package must not turn into a green run
// that tested nothing.
//
// initdb refuses to run as root, so as root the cluster runs as the
// postgres user (runuser, or su); as anyone else, as that user. The cluster
// trades durability for speed (fsync off): it holds test data only.
package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Cluster is a running throwaway PostgreSQL cluster.
type Cluster struct {
	bin  string // directory of initdb, pg_ctl, postgres
	dir  string // data directory (and socket directory)
	port int
	as   string // user the server runs as; "" for the current one
	// URL is the cluster's admin connection URL (database postgres).
	URL string
	dbs atomic.Int64
}

// Bin returns the directory holding the PostgreSQL server binaries, or ""
// when they are not installed: $WEIR_PGTEST_BIN when set (a directory
// without them stands for PostgreSQL not installed), else Debian's
// /usr/lib/postgresql/N (newest first), else initdb and pg_ctl on PATH.
func Bin() string {
	if d, ok := os.LookupEnv("WEIR_PGTEST_BIN"); ok {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "pg_ctl")) {
			return d
		}
		return ""
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "pg_ctl")) {
			return d
		}
	}
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		d := filepath.Dir(p)
		if isExec(filepath.Join(d, "initdb")) {
			return d
		}
	}
	return ""
}

func version(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// Start initialises and starts a new cluster. Stop it with Stop.
func Start(ctx context.Context) (*Cluster, error) {
	bin := Bin()
	if bin == "" {
		return nil, errors.New("pgtest: PostgreSQL server binaries not found (/usr/lib/postgresql/*/bin, or initdb and pg_ctl on PATH); install postgresql-15")
	}
	c := &Cluster{bin: bin}
	if os.Geteuid() == 0 {
		c.as = "postgres"
	}
	dir, err := os.MkdirTemp("", "weir-pgtest-")
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	c.dir = dir
	if c.as != "" {
		u, err := user.Lookup(c.as)
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("pgtest: running as root, the cluster needs the %s user: %w", c.as, err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("pgtest: %w", err)
		}
	}
	data := filepath.Join(dir, "data")
	if err := c.run(ctx, "initdb", "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	// A free port can be taken by someone else between here and the
	// server's bind; then the start fails and is retried on another.
	for attempt := 0; ; attempt++ {
		if c.port, err = freePort(); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		opts := strings.Join([]string{
			"-c listen_addresses=127.0.0.1",
			"-c port=" + strconv.Itoa(c.port),
			"-c unix_socket_directories=" + dir,
			"-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off",
			"-c max_connections=200",
		}, " ")
		err = c.run(ctx, "pg_ctl", "start", "-w", "-t", "30", "-D", data, "-l", filepath.Join(dir, "log"), "-o", opts)
		if err == nil {
			break
		}
		if attempt == 2 {
			log, _ := os.ReadFile(filepath.Join(dir, "log"))
			os.RemoveAll(dir)
			return nil, fmt.Errorf("%w\nserver log:\n%s", err, log)
		}
	}
	c.URL = c.urlFor("postgres")
	return c, nil
}

// run runs one of the cluster's programs as the cluster's user.
func (c *Cluster) run(ctx context.Context, prog string, args ...string) error {
	argv := append([]string{filepath.Join(c.bin, prog)}, args...)
	var cmd *exec.Cmd
	switch {
	case c.as == "":
		cmd = exec.CommandContext(ctx, argv[0], argv[1:]...)
	case hasCommand("runuser"):
		cmd = exec.CommandContext(ctx, "runuser", append([]string{"-u", c.as, "--"}, argv...)...)
	default:
		cmd = exec.CommandContext(ctx, "su", c.as, "-s", "/bin/sh", "-c", shellQuote(argv))
	}
	cmd.Dir = c.dir // the postgres user may not be able to read the caller's directory
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("pgtest: %s: %w\n%s", prog, err, out.String())
	}
	return nil
}

func hasCommand(name string) bool {
	_, err := exec.LookPath(name)
	return err == nil
}

func shellQuote(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgtest: finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (c *Cluster) urlFor(db string) string {
	u := url.URL{Scheme: "postgres", User: url.User("postgres"), Host: "127.0.0.1:" + strconv.Itoa(c.port), Path: "/" + db}
	u.RawQuery = "sslmode=disable"
	return u.String()
}

// CreateDatabase creates a new empty database and returns its URL.
func (c *Cluster) CreateDatabase(ctx context.Context) (name, url string, err error) {
	name = fmt.Sprintf("weir_test_%d", c.dbs.Add(1))
	conn, err := pgx.Connect(ctx, c.URL)
	if err != nil {
		return "", "", fmt.Errorf("pgtest: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name+" TEMPLATE template0"); err != nil {
		return "", "", fmt.Errorf("pgtest: %w", err)
	}
	return name, c.urlFor(name), nil
}

// DropDatabase drops a database made by CreateDatabase, ending the
// connections still open to it.
func (c *Cluster) DropDatabase(ctx context.Context, name string) error {
	conn, err := pgx.Connect(ctx, c.URL)
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	return nil
}

// Stop stops the server at once and removes the cluster's directory.
func (c *Cluster) Stop() error {
	err := c.run(context.Background(), "pg_ctl", "stop", "-D", filepath.Join(c.dir, "data"), "-m", "immediate", "-w")
	if rerr := os.RemoveAll(c.dir); err == nil && rerr != nil {
		err = fmt.Errorf("pgtest: %w", rerr)
	}
	return err
}

// The package's shared cluster, started by the first NewDatabase.
var (
	sharedMu  sync.Mutex
	shared    *Cluster
	sharedErr error
)

// Required reports whether a missing PostgreSQL fails tests instead of
// skipping them (WEIR_E2E_REQUIRE=1).
func Required() bool { return os.Getenv("WEIR_E2E_REQUIRE") == "1" }

// Shared returns the package's cluster, starting it on first use. It skips
// t when PostgreSQL is not installed (fails it under WEIR_E2E_REQUIRE=1),
// and fails t when the cluster does not start.
func Shared(t testing.TB) *Cluster {
	t.Helper()
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if shared == nil && sharedErr == nil {
		if Bin() == "" {
			sharedErr = errNotInstalled
		} else {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			shared, sharedErr = Start(ctx)
			cancel()
		}
	}
	switch {
	case errors.Is(sharedErr, errNotInstalled) && !Required():
		t.Skip("PostgreSQL is not installed (set WEIR_E2E_REQUIRE=1 to fail instead)")
	case sharedErr != nil:
		t.Fatal(sharedErr)
	}
	return shared
}

var errNotInstalled = errors.New("pgtest: PostgreSQL server binaries are not installed; install postgresql-15 (WEIR_E2E_REQUIRE=1 makes this a failure)")

// NewDatabase returns the URL of a new empty database on the shared
// cluster, dropped when t ends (after t's other cleanups, so stores the
// test opened are closed first).
func NewDatabase(t testing.TB) string {
	t.Helper()
	c := Shared(t)
	ctx := context.Background()
	name, url, err := c.CreateDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.DropDatabase(ctx, name); err != nil {
			t.Error(err)
		}
	})
	return url
}

// NewSchema returns the URL of a new empty schema, in a database of the
// shared cluster that the package's tests share, selected with
// search_path; it is dropped when t ends. A schema costs a few
// milliseconds where a database costs a few hundred, so tests that only
// need empty tables of their own use it. What PostgreSQL keeps per
// database, not per schema, is shared with the package's other tests:
// advisory lock keys and LISTEN/NOTIFY channels.
func NewSchema(t testing.TB) string {
	t.Helper()
	c := Shared(t)
	ctx := context.Background()
	sharedMu.Lock()
	if schemasURL == "" {
		_, u, err := c.CreateDatabase(ctx)
		if err != nil {
			sharedMu.Unlock()
			t.Fatal(err)
		}
		schemasURL = u
	}
	base := schemasURL
	sharedMu.Unlock()
	name := fmt.Sprintf("weir_test_%d", c.dbs.Add(1))
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+name+" CASCADE"); err != nil {
			t.Error(err)
		}
	})
	return base + "&search_path=" + name
}

// schemasURL is the database NewSchema makes its schemas in.
var schemasURL string

// Main runs the package's tests and then stops the shared cluster, if one
// was started, and exits with the tests' status.
func Main(m *testing.M) {
	code := m.Run()
	StopShared()
	os.Exit(code)
}

// StopShared stops the shared cluster, if one was started, for a
// package whose TestMain does more than Main.
func StopShared() {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if shared != nil {
		if err := shared.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
		shared, schemasURL = nil, ""
	}
}
