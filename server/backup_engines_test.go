package server_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/internal/backup"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/dump"
	"github.com/chartctl/chartctl/internal/postgres"
	"github.com/chartctl/chartctl/internal/s3blob"
	"github.com/chartctl/chartctl/internal/secrets"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/internal/testkit/pgtest"
	"github.com/chartctl/chartctl/internal/testkit/s3test"
	"github.com/chartctl/chartctl/server"
)

// serveOn starts a server over the given engines, as testkit.OpenServer
// does over a data directory (same secrets key).
func serveOn(t *testing.T, store chartctl.Store, blobs chartctl.BlobStore) *testkit.Server {
	t.Helper()
	srv := server.New(store, blobs)
	box, err := secrets.New([]byte("testkit secrets key, 32+ bytes long"))
	if err != nil {
		t.Fatal(err)
	}
	srv.Secrets = box
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Open(ln); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return &testkit.Server{Server: srv, URL: srv.URL()}
}

// fraction is the fractional seconds of an RFC 3339 time.
var fraction = regexp.MustCompile(`(T\d\d:\d\d:\d\d)\.(\d+)`)

// toMicroseconds writes every time in s to the microsecond, the precision
// PostgreSQL keeps (bolt keeps nanoseconds): the one way engines differ.
func toMicroseconds(s string) string {
	return fraction.ReplaceAllStringFunc(s, func(m string) string {
		p := fraction.FindStringSubmatch(m)
		f := (p[2] + "000000000")[:6]
		f = strings.TrimRight(f, "0")
		if f == "" {
			return p[1]
		}
		return p[1] + "." + f
	})
}

// sameCapture compares two captures, times to the microsecond.
func sameCapture(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	var paths []string
	for p := range want {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if toMicroseconds(got[p]) != toMicroseconds(want[p]) {
			t.Errorf("%s: %s differs:\n got %s\nwant %s", what, p, got[p], want[p])
		}
	}
	if len(got) != len(want) {
		t.Errorf("%s answers %d paths, the source %d", what, len(got), len(want))
	}
}

// A backup of a bolt server restores into an empty PostgreSQL and S3
// store, whose server answers like the source; a backup of that server
// restores into a bolt data directory, which answers the same again.
func TestBackupRestoresAcrossEngines(t *testing.T) {
	ctx := context.Background()
	src := testkit.StartServer(t)
	populate(t, src)
	want := capture(t, src, src.AdminKey)
	mustHold(t, want)
	b := src.Do(t, http.MethodGet, "/v1/admin/backup", src.AdminKey, nil)
	if b.StatusCode != 200 {
		t.Fatal(b.StatusCode)
	}

	pg, err := postgres.Open(ctx, pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	s3, err := s3blob.Open(ctx, s3test.NewBucket(t))
	if err != nil {
		t.Fatal(err)
	}
	res, counts, err := backup.Restore(ctx, bytes.NewReader(b.Body), backup.Target{Store: pg, Blobs: s3,
		Transaction: func(ctx context.Context, fn func(dump.Target) error) error {
			return pg.Import(ctx, func(tx *postgres.DB) error { return fn(tx) })
		}})
	if err != nil {
		t.Fatalf("restore into PostgreSQL and S3: %v", err)
	}
	if !res.OK || counts[chartctl.DumpWebhook] != 3 || counts[chartctl.DumpQuota] != 2 || counts[chartctl.DumpRetention] != 1 || counts[chartctl.DumpAuditEntry] == 0 {
		t.Fatalf("restored %v (%+v)", counts, res)
	}
	onPG := serveOn(t, pg, s3)
	sameCapture(t, "PostgreSQL+S3", capture(t, onPG, src.AdminKey), want)

	// Back again, from the PostgreSQL server's own backup.
	b2 := onPG.Do(t, http.MethodGet, "/v1/admin/backup", src.AdminKey, nil)
	if b2.StatusCode != 200 {
		t.Fatal(b2.StatusCode)
	}
	dir, res, err := restoreInto(t, b2.Body)
	if err != nil || !res.OK {
		t.Fatalf("restore the PostgreSQL backup into bolt: %v %+v", err, res)
	}
	onBolt := testkit.OpenServer(t, dir)
	sameCapture(t, "bolt restored from PostgreSQL", capture(t, onBolt, src.AdminKey), want)

	for name, srv := range map[string]*testkit.Server{"PostgreSQL+S3": onPG, "bolt": onBolt} {
		v := srv.Do(t, http.MethodPost, "/v1/admin/verify", src.AdminKey, nil)
		var out struct{ Data backup.Result }
		v.JSON(t, &out)
		if v.StatusCode != 200 || !out.Data.OK {
			t.Errorf("verify %s: %d %s", name, v.StatusCode, v.Body)
		}
	}

	// Into a store that is not empty: refused, before any blob is written.
	other, err := s3blob.Open(ctx, s3test.NewBucket(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := backup.Restore(ctx, bytes.NewReader(b.Body), backup.Target{Store: pg, Blobs: other}); !errors.Is(err, backup.ErrNotEmpty) {
		t.Fatalf("restore into a database with data: %v", err)
	}
	if n := countBlobs(t, other); n != 0 {
		t.Errorf("a refused restore wrote %d blobs", n)
	}
}

// A tampered or truncated backup restored into PostgreSQL and S3 leaves
// both as they were: no record, and none of the blobs it streamed.
func TestRestoreIntoPostgresLeavesNothingOnDamage(t *testing.T) {
	ctx := context.Background()
	src := testkit.StartServer(t)
	populate(t, src)
	good := src.Do(t, http.MethodGet, "/v1/admin/backup", src.AdminKey, nil).Body
	at := bytes.Index(good, []byte(`"kind":"webhook"`))
	if at < 0 {
		t.Fatal("no webhook in the backup")
	}
	for name, b := range map[string][]byte{
		"flipped byte in the records": flip(good, at+3),
		"truncated in the manifest":   good[:len(good)-1500],
		"flipped byte at the end":     flip(good, len(good)-5),
	} {
		t.Run(name, func(t *testing.T) {
			pg, err := postgres.Open(ctx, pgtest.NewDatabase(t))
			if err != nil {
				t.Fatal(err)
			}
			defer pg.Close()
			s3, err := s3blob.Open(ctx, s3test.NewBucket(t))
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = backup.Restore(ctx, bytes.NewReader(b), backup.Target{Store: pg, Blobs: s3,
				Transaction: func(ctx context.Context, fn func(dump.Target) error) error {
					return pg.Import(ctx, func(tx *postgres.DB) error { return fn(tx) })
				}})
			if err == nil {
				t.Fatal("a damaged backup restored")
			}
			if empty, kind, err := dump.Empty(ctx, pg); err != nil || !empty {
				t.Errorf("the database holds a %s after the failed restore (%v)", kind, err)
			}
			if n := countBlobs(t, s3); n != 0 {
				t.Errorf("the failed restore left %d blobs in S3", n)
			}
		})
	}
}

func countBlobs(t *testing.T, s chartctl.BlobStore) int {
	t.Helper()
	n := 0
	if err := s.Walk(context.Background(), func(string) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}
