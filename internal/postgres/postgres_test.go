package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/postgres"
	"github.com/chartctl/chartctl/internal/storetest"
	"github.com/chartctl/chartctl/internal/testkit/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

var ctx = context.Background()

// mustOpen opens a store on a fresh, migrated database (a copy of a
// migrated template) and closes it when the test ends.
func mustOpen(tb testing.TB) *postgres.DB {
	tb.Helper()
	url := pgtest.Shared(tb).NewDatabaseFrom(tb, "chartctl_template", func(url string) error {
		db, err := postgres.Open(ctx, url)
		if err != nil {
			return err
		}
		return db.Close()
	})
	db, err := postgres.Open(ctx, url)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() { _ = db.Close() })
	return db
}

// openReplicas opens n stores on one fresh database, as n replicas do,
// and closes them when the test ends. It returns the database's URL too.
func openReplicas(tb testing.TB, n int) (string, []*postgres.DB) {
	tb.Helper()
	url := pgtest.Shared(tb).NewDatabase(tb)
	dbs := make([]*postgres.DB, n)
	for i := range dbs {
		db, err := postgres.Open(ctx, url)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { _ = db.Close() })
		dbs[i] = db
	}
	return url, dbs
}

// TestConformance runs the storage conformance suite on a real PostgreSQL.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Store { return mustOpen(t) })
}

// TestChartPages checks the kept chart pages (not part of the Store).
func TestChartPages(t *testing.T) { storetest.ChartPages(t, mustOpen(t)) }

// TestMigrateConcurrently starts ten stores on one empty database at once,
// as ten replicas would: every one starts, and the schema is migrated once.
func TestMigrateConcurrently(t *testing.T) {
	url := pgtest.NewDatabase(t)
	const replicas = 10
	var wg sync.WaitGroup
	errs := make([]error, replicas)
	dbs := make([]*postgres.DB, replicas)
	for i := range replicas {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dbs[i], errs[i] = postgres.Open(ctx, url)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("replica %d: %v", i, err)
		}
		defer dbs[i].Close()
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var rows, max int
	if err := conn.QueryRow(ctx, `SELECT count(*), max(version) FROM schema_version`).Scan(&rows, &max); err != nil {
		t.Fatal(err)
	}
	if rows != postgres.LatestSchemaVersion() || max != postgres.LatestSchemaVersion() {
		t.Fatalf("schema_version has %d rows up to %d, want each of 1..%d once", rows, max, postgres.LatestSchemaVersion())
	}
	v, err := dbs[0].SchemaVersion(ctx)
	if err != nil || v != postgres.LatestSchemaVersion() {
		t.Fatalf("SchemaVersion = %d, %v", v, err)
	}
	// The stores work on the shared schema.
	if err := dbs[3].CreateUser(ctx, &chartctl.User{Email: "ada@example.com"}); err != nil {
		t.Fatal(err)
	}
	if _, err := dbs[7].UserByEmail(ctx, "ada@example.com"); err != nil {
		t.Fatal(err)
	}
}

// TestNewerSchemaRefused: a binary older than the database's schema
// refuses to start and says what to do.
func TestNewerSchemaRefused(t *testing.T) {
	url := pgtest.NewDatabase(t)
	db, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	newer := postgres.LatestSchemaVersion() + 1
	if _, err := conn.Exec(ctx, `INSERT INTO schema_version (version) VALUES ($1)`, newer); err != nil {
		t.Fatal(err)
	}
	_, err = postgres.Open(ctx, url)
	var se *postgres.SchemaError
	if !errors.As(err, &se) {
		t.Fatalf("Open on a newer schema: %v, want a *SchemaError", err)
	}
	want := fmt.Sprintf("database schema version %d is newer than this chartctl supports (%d); upgrade chartctl", newer, postgres.LatestSchemaVersion())
	if err.Error() != want {
		t.Fatalf("error = %q, want %q", err, want)
	}
}

// TestOpenUnreachable: a database that does not answer fails Open with a
// message naming where it looked, without the password.
func TestOpenUnreachable(t *testing.T) {
	s := pgtest.Start(t)
	url := s.NewDatabase(t)
	s.Stop(t)
	withPassword := strings.Replace(url, "postgres@", "postgres:s3cret@", 1)
	_, err := postgres.Open(ctx, withPassword)
	if err == nil {
		t.Fatal("Open of a stopped server succeeded")
	}
	if strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("error leaks the password: %v", err)
	}
	if !strings.Contains(err.Error(), "127.0.0.1") {
		t.Fatalf("error does not say where: %v", err)
	}
	if _, err := postgres.Open(ctx, "postgres://%zz"); err == nil {
		t.Fatal("Open of a malformed URL succeeded")
	}
}

// TestOutage: with the database gone, calls fail with EUNAVAILABLE (503),
// never a crash; when it returns, the pool reconnects by itself.
func TestOutage(t *testing.T) {
	s := pgtest.Start(t)
	db, err := postgres.Open(ctx, s.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.CreateUser(ctx, &chartctl.User{Email: "ada@example.com"}); err != nil {
		t.Fatal(err)
	}

	s.Stop(t)
	_, err = db.UserByEmail(ctx, "ada@example.com")
	if code := chartctl.ErrorCode(err); code != chartctl.EUNAVAILABLE {
		t.Fatalf("read during outage: code %q (%v), want %q", code, err, chartctl.EUNAVAILABLE)
	}
	if msg := chartctl.ErrorMessage(err); msg != "The database is unavailable; retry in a moment." {
		t.Fatalf("message = %q", msg)
	}
	_, _, _, err = db.PutChartVersion(ctx, &chartctl.ChartVersion{Repository: "r", Name: "web", Version: "1.0.0", Digest: storetest.Digest("x")}, chartctl.PutVersionOptions{})
	if code := chartctl.ErrorCode(err); code != chartctl.EUNAVAILABLE {
		t.Fatalf("write during outage: code %q (%v)", code, err)
	}
	if db.Ping(ctx) == nil {
		t.Fatal("Ping during outage succeeded")
	}

	s.Restart(t)
	u, err := db.UserByEmail(ctx, "ada@example.com")
	if err != nil {
		t.Fatalf("read after the database returned: %v", err)
	}
	if err := db.CreateUser(ctx, &chartctl.User{Email: "bob@example.com"}); err != nil {
		t.Fatalf("write after the database returned: %v", err)
	}
	if u.Email != "ada@example.com" {
		t.Fatalf("user = %+v", u)
	}
}

// TestSessionsKilled: when the server ends every session under the pool (a
// failover, an administrator), at most the call that meets a dead
// connection fails, with EUNAVAILABLE; the pool then drops the other dead
// ones and the following calls succeed.
func TestSessionsKilled(t *testing.T) {
	s := pgtest.Shared(t)
	url := s.NewDatabase(t)
	db, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	name := url[strings.LastIndex(url, "/")+1 : strings.Index(url, "?")]
	for round := range 3 {
		// Fill the pool with several connections.
		var wg sync.WaitGroup
		for range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := db.UserCount(ctx); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		s.Terminate(t, name)
		if _, err := db.UserCount(ctx); err != nil && chartctl.ErrorCode(err) != chartctl.EUNAVAILABLE {
			t.Fatalf("first call after terminating sessions: %v", err)
		}
		for i := range 6 {
			if err := db.CreateUser(ctx, &chartctl.User{Email: fmt.Sprintf("u%d-%d@example.com", round, i)}); err != nil {
				t.Fatalf("round %d, call %d after terminating sessions: %v", round, i, err)
			}
		}
	}
}

// TestClosed: a call after Close (a request outliving shutdown) is
// EUNAVAILABLE, as in bolt.
func TestClosed(t *testing.T) {
	db := mustOpen(t)
	_ = db.Close()
	_, err := db.UserCount(ctx)
	if code := chartctl.ErrorCode(err); code != chartctl.EUNAVAILABLE {
		t.Fatalf("after Close: code %q (%v)", code, err)
	}
}

// TestNoSQLInMessages: a failure inside the database reaches callers as an
// internal error whose message says nothing of SQL.
func TestNoSQLInMessages(t *testing.T) {
	url := pgtest.NewDatabase(t)
	db, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `DROP TABLE oauth_clients`); err != nil {
		t.Fatal(err)
	}
	_, err = db.OAuthClient(ctx, "x")
	if chartctl.ErrorCode(err) != chartctl.EINTERNAL || chartctl.ErrorMessage(err) != "Internal error." {
		t.Fatalf("broken table: code %q message %q", chartctl.ErrorCode(err), chartctl.ErrorMessage(err))
	}
}

// BenchmarkStore runs the engine-neutral benchmarks on PostgreSQL (a
// local server with fsync off: it measures the engine, not the disk).
func BenchmarkStore(b *testing.B) {
	storetest.Benchmark(b, func(b *testing.B) storetest.Store { return mustOpen(b) })
}
