// Package pgtest runs a real PostgreSQL server for tests: Debian's
// binaries (/usr/lib/postgresql/*/bin, or the directory in
// CHARTCTL_POSTGRES_BIN), initdb on a temp dir, postgres on a free loopback
// port, one fresh database per test. When the process runs as root, the
// server runs as the postgres OS user (PostgreSQL refuses root).
//
// Without the binaries the tests skip, unless CHARTCTL_REQUIRE_E2E=1 (CI),
// where that is a failure. Use it from TestMain so the shared server stops
// when the tests end:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
//
// Only tests import it.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/chartctl/chartctl/internal/testkit/proc"
)

// Server is a running PostgreSQL cluster on a loopback port.
type Server struct {
	bin  string
	dir  string // data directory
	sock string // unix socket directory
	port int
	cred *syscall.Credential

	proc      proc.Process
	mu        sync.Mutex
	n         int
	templates map[string]error
}

var (
	sharedOnce sync.Once
	shared     *Server
	sharedErr  error
)

// Main runs the tests, then stops the shared server if a test started it.
func Main(m *testing.M) int {
	code := m.Run()
	StopShared()
	return code
}

// StopShared stops and removes the shared server, if a test started it;
// for a TestMain that runs several such helpers.
func StopShared() {
	if shared != nil {
		shared.stop()
		_ = os.RemoveAll(filepath.Dir(shared.dir))
	}
}

// skip skips the test when PostgreSQL is not installed, or fails it when
// CHARTCTL_REQUIRE_E2E=1.
func skip(tb testing.TB, format string, args ...any) {
	tb.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CHARTCTL_REQUIRE_E2E") == "1" {
		tb.Fatalf("%s (CHARTCTL_REQUIRE_E2E=1)", msg)
	}
	tb.Skip(msg)
}

// findBin returns the directory of PostgreSQL's server binaries, the
// newest major version installed, or "".
func findBin() string {
	if d := os.Getenv("CHARTCTL_POSTGRES_BIN"); d != "" {
		return d
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	sort.Slice(matches, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(matches[i]))))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(matches[j]))))
		return vi > vj
	})
	if len(matches) == 0 {
		return ""
	}
	return filepath.Dir(matches[0])
}

// Shared returns the server shared by the package's tests, starting it on
// first use.
func Shared(tb testing.TB) *Server {
	tb.Helper()
	sharedOnce.Do(func() { shared, sharedErr = start() })
	if sharedErr != nil {
		if errors.Is(sharedErr, errNoBinaries) {
			skip(tb, "%v", sharedErr)
		}
		tb.Fatalf("start PostgreSQL: %v", sharedErr)
	}
	return shared
}

// Start starts a server of the test's own (for tests that stop and
// restart it); it is stopped and removed when the test ends.
func Start(tb testing.TB) *Server {
	tb.Helper()
	s, err := start()
	if errors.Is(err, errNoBinaries) {
		skip(tb, "%v", err)
	} else if err != nil {
		tb.Fatalf("start PostgreSQL: %v", err)
	}
	tb.Cleanup(func() {
		s.stop()
		_ = os.RemoveAll(filepath.Dir(s.dir))
	})
	return s
}

// NewDatabase creates an empty database on the shared server and returns
// its URL.
func NewDatabase(tb testing.TB) string {
	tb.Helper()
	return Shared(tb).NewDatabase(tb)
}

var errNoBinaries = errors.New("PostgreSQL server binaries not found in /usr/lib/postgresql/*/bin (apt-get install postgresql, or set CHARTCTL_POSTGRES_BIN)")

func start() (*Server, error) {
	bin := findBin()
	if bin == "" {
		return nil, errNoBinaries
	}
	if _, err := os.Stat(filepath.Join(bin, "postgres")); err != nil {
		return nil, errNoBinaries
	}
	root, err := os.MkdirTemp("", "chartctl-pg-")
	if err != nil {
		return nil, err
	}
	s := &Server{bin: bin, dir: filepath.Join(root, "data"), sock: root, templates: map[string]error{}}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("running as root needs the postgres OS user: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		s.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(root, uid, gid); err != nil {
			return nil, err
		}
	}
	out, err := s.command("initdb", "-D", s.dir, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("initdb: %v: %s", err, out)
	}
	if err := s.launch(); err != nil {
		return nil, err
	}
	return s, nil
}

// command returns a PostgreSQL program as the server's OS user.
func (s *Server) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(s.bin, name), args...)
	cmd.Dir = s.sock
	if s.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	}
	return cmd
}

// launch starts postgres on a free loopback port (the same one again when
// restarting) and waits until it accepts connections.
func (s *Server) launch() error {
	for attempt := 0; ; attempt++ {
		if s.port == 0 || attempt > 0 {
			p, err := freePort()
			if err != nil {
				return err
			}
			s.port = p
		}
		err := s.launchOn()
		if err == nil || attempt == 4 {
			return err
		}
	}
}

func (s *Server) launchOn() error {
	cmd := s.command("postgres", "-D", s.dir, "-p", strconv.Itoa(s.port), "-k", s.sock,
		"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "synchronous_commit=off",
		"-c", "full_page_writes=off", "-c", "max_connections=300", "-c", "shared_buffers=32MB")
	// SIGINT is PostgreSQL's fast shutdown.
	return s.proc.Start(cmd, filepath.Join(s.sock, "postgres.log"), 60*time.Second, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, s.URL("postgres"))
		if err != nil {
			return err
		}
		return conn.Close(context.Background())
	}, syscall.SIGINT)
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// URL returns the URL of database db on the server.
func (s *Server) URL(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, db)
}

// Port returns the server's TCP port.
func (s *Server) Port() int { return s.port }

// exec runs a statement on the postgres database.
func (s *Server) exec(sql string) error {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

// NewDatabase creates an empty database and returns its URL.
func (s *Server) NewDatabase(tb testing.TB) string {
	tb.Helper()
	s.mu.Lock()
	s.n++
	name := fmt.Sprintf("t%d", s.n)
	s.mu.Unlock()
	if err := s.exec(`CREATE DATABASE ` + name + ` TEMPLATE template0`); err != nil {
		tb.Fatalf("create database: %v", err)
	}
	return s.URL(name)
}

// NewDatabaseFrom creates a database as a copy of the template named
// template, which prepare fills once (on the template's URL, closing its
// connections before it returns); copying a prepared schema is much
// faster than preparing each test's database.
func (s *Server) NewDatabaseFrom(tb testing.TB, template string, prepare func(url string) error) string {
	tb.Helper()
	s.mu.Lock()
	err, done := s.templates[template]
	if !done {
		err = s.exec(`CREATE DATABASE ` + template + ` TEMPLATE template0`)
		if err == nil {
			err = prepare(s.URL(template))
		}
		s.templates[template] = err
	}
	s.n++
	name := fmt.Sprintf("t%d", s.n)
	s.mu.Unlock()
	if err != nil {
		tb.Fatalf("prepare template %s: %v", template, err)
	}
	// CREATE DATABASE … TEMPLATE needs the template to have no other
	// sessions: they are serialized here.
	s.mu.Lock()
	err = s.exec(`CREATE DATABASE ` + name + ` TEMPLATE ` + template + ` STRATEGY FILE_COPY`)
	if err != nil {
		// Before PostgreSQL 15 there is no STRATEGY, and copying files is
		// the only way.
		err = s.exec(`CREATE DATABASE ` + name + ` TEMPLATE ` + template)
	}
	s.mu.Unlock()
	if err != nil {
		tb.Fatalf("create database from %s: %v", template, err)
	}
	return s.URL(name)
}

// Stop stops the server (fast shutdown: sessions are ended), as an outage
// would.
func (s *Server) Stop(tb testing.TB) {
	tb.Helper()
	s.stop()
}

// Restart starts the stopped server again on the same port.
func (s *Server) Restart(tb testing.TB) {
	tb.Helper()
	if err := s.launchOn(); err != nil {
		tb.Fatalf("restart postgres: %v", err)
	}
}

func (s *Server) stop() {
	// SIGINT is PostgreSQL's fast shutdown: sessions are ended.
	s.proc.Stop(syscall.SIGINT, 30*time.Second)
}

// Terminate ends every session of database db, as a network failure or
// an administrator would.
func (s *Server) Terminate(tb testing.TB, db string) {
	tb.Helper()
	if err := s.exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '` + strings.ReplaceAll(db, "'", "''") + `' AND pid <> pg_backend_pid()`); err != nil {
		tb.Fatalf("terminate sessions: %v", err)
	}
}
