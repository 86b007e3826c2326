package serve_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/chartctl/chartctl/internal/cmd/serve"
	"github.com/chartctl/chartctl/internal/postgres"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/internal/testkit/enginetest"
	"github.com/chartctl/chartctl/internal/testkit/pgtest"
	"github.com/chartctl/chartctl/internal/testkit/s3test"
)

func TestMain(m *testing.M) { os.Exit(enginetest.Main(m)) }

// TestServeOnPostgresAndS3 runs the real binary on PostgreSQL and an S3
// store: it starts, creates its admin, takes an upload and serves it back
// byte for byte, from the API and the Helm repository.
func TestServeOnPostgresAndS3(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dbURL := pgtest.NewDatabase(t)
	blobURL := s3test.NewBucket(t)
	bin := mustBinary(t)
	data := t.TempDir()
	p := startServe(t, bin, data, "--database", dbURL, "--blob-store", blobURL)
	if !strings.Contains(p.stderr.String(), "database=\"postgres ") {
		t.Fatalf("start-up log does not name the engines:\n%s", p.stderr)
	}
	key := adminKey(t, data)
	if r, b, err := do(t, "POST", p.url+"/v1/repositories", key, strings.NewReader(`{"name":"shared","visibility":"public"}`), "application/json"); err != nil || r.StatusCode != 200 {
		t.Fatalf("create repo: %v %s", err, b)
	}
	archive := testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "1.2.3"})
	body, ctype := testkit.Multipart(t, map[string][]byte{"chart": archive})
	if r, b, err := do(t, "POST", p.url+"/v1/repositories/shared/charts", key, bytes.NewReader(body), ctype); err != nil || r.StatusCode != 200 {
		t.Fatalf("upload: %v %d %s", err, r.StatusCode, b)
	}
	r, got, err := do(t, "GET", p.url+"/v1/repositories/shared/charts/web/1.2.3/archive", key, nil, "")
	if err != nil || r.StatusCode != http.StatusOK || !bytes.Equal(got, archive) {
		t.Fatalf("download: %v %d, %d bytes (want %d)", err, r.StatusCode, len(got), len(archive))
	}
	// A ranged download is a ranged read of the object.
	req, _ := http.NewRequest("GET", p.url+"/v1/repositories/shared/charts/web/1.2.3/archive", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Range", "bytes=10-109")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	part, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusPartialContent || !bytes.Equal(part, archive[10:110]) {
		t.Fatalf("ranged download: %d, %d bytes", resp.StatusCode, len(part))
	}
	r, index, err := do(t, "GET", p.url+"/helm/shared/index.yaml", key, nil, "")
	sum := sha256.Sum256(archive)
	if err != nil || r.StatusCode != http.StatusOK || !strings.Contains(string(index), hex.EncodeToString(sum[:])) {
		t.Fatalf("index.yaml: %v %d\n%s", err, r.StatusCode, index)
	}

	// A second server on the same database and bucket (another replica)
	// sees the chart and does not create another admin.
	data2 := t.TempDir()
	p2 := startServe(t, bin, data2, "--database", dbURL, "--blob-store", blobURL)
	if _, err := os.Stat(data2 + "/" + serve.InitialAdminFile); !os.IsNotExist(err) {
		t.Fatalf("the second replica wrote %s: %v", serve.InitialAdminFile, err)
	}
	r, got, err = do(t, "GET", p2.url+"/v1/repositories/shared/charts/web/1.2.3/archive", key, nil, "")
	if err != nil || r.StatusCode != http.StatusOK || !bytes.Equal(got, archive) {
		t.Fatalf("download from the second replica: %v %d", err, r.StatusCode)
	}
}

// TestStorageFlagsValidated: a wrong engine URL is refused before anything
// opens, saying what to use, without echoing a password.
func TestStorageFlagsValidated(t *testing.T) {
	for _, c := range []struct {
		cfg  serve.StorageConfig
		want string
	}{
		{serve.StorageConfig{Database: "mysql://u:hunter2@h/db", BlobStore: "file"}, "use bolt or postgres://"},
		{serve.StorageConfig{Database: "bolt", BlobStore: "gs://bucket"}, "use file or s3://"},
		{serve.StorageConfig{Database: "bolt", BlobStore: "s3://b?bogus=1"}, "unknown parameter"},
	} {
		err := c.cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("Validate(%+v) = %v, want an error saying %q", c.cfg, err, c.want)
		}
	}
	for _, ok := range []serve.StorageConfig{
		serve.DefaultStorageConfig(),
		{Database: "postgres://u:p@db:5432/chartctl?sslmode=require", BlobStore: "s3://charts/prod?endpoint=https://s3.example.com&path_style=true"},
	} {
		if err := ok.Validate(); err != nil {
			t.Errorf("Validate(%+v) = %v", ok, err)
		}
	}
}

// TestServeThroughOutages: with the database or the object store gone, the
// server answers 503 with error.code "unavailable" (no crash); when they
// return it serves again by itself, without a restart.
func TestServeThroughOutages(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	pg := pgtest.Start(t)
	s3 := s3test.Start(t)
	bin := mustBinary(t)
	data := t.TempDir()
	// No blobs in memory: the download below must go to the blob store
	// (an archive just uploaded is otherwise served from its kept copy).
	p := startServe(t, bin, data, "--database", pg.NewDatabase(t), "--blob-store", s3.NewBucket(t), "--blob-cache-size", "0")
	key := adminKey(t, data)
	if r, b, err := do(t, "POST", p.url+"/v1/repositories", key, strings.NewReader(`{"name":"r"}`), "application/json"); err != nil || r.StatusCode != 200 {
		t.Fatalf("create repo: %v %s", err, b)
	}
	archive := testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "1.0.0"})
	body, ctype := testkit.Multipart(t, map[string][]byte{"chart": archive})
	if r, b, err := do(t, "POST", p.url+"/v1/repositories/r/charts", key, bytes.NewReader(body), ctype); err != nil || r.StatusCode != 200 {
		t.Fatalf("upload: %v %s", err, b)
	}
	download := p.url + "/v1/repositories/r/charts/web/1.0.0/archive"
	wantUnavailable := func(what string, r *http.Response, b []byte, err error) {
		t.Helper()
		if err != nil || r.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(b), `"code":"unavailable"`) {
			code := 0
			if r != nil {
				code = r.StatusCode
			}
			t.Fatalf("%s: %v %d %s, want 503 unavailable", what, err, code, b)
		}
	}

	wantReady := func(status int, says string) {
		t.Helper()
		r, b, err := do(t, "GET", p.url+"/readyz", "", nil, "")
		if err != nil || r.StatusCode != status || !strings.Contains(string(b), says) {
			t.Fatalf("/readyz: %v %v %s, want %d %q", err, r, b, status, says)
		}
	}
	wantReady(200, `"status":"ok"`)
	pg.Stop(t)
	r, b, err := do(t, "GET", p.url+"/v1/repositories", key, nil, "")
	wantUnavailable("list during a database outage", r, b, err)
	// Refused at once or silent past the check's bound: either way the
	// part is named (a loaded machine sees both).
	wantReady(503, "metadata store ")
	pg.Restart(t)
	wantReady(200, `"status":"ok"`)
	if r, b, err := do(t, "GET", p.url+"/v1/repositories", key, nil, ""); err != nil || r.StatusCode != 200 {
		t.Fatalf("after the database returned: %v %s", err, b)
	}

	s3.Stop(t)
	r, b, err = do(t, "GET", download, key, nil, "")
	wantUnavailable("download during an object store outage", r, b, err)
	wantReady(503, "blob store ")
	body2, ctype2 := testkit.Multipart(t, map[string][]byte{"chart": testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "2.0.0"})})
	r, b, err = do(t, "POST", p.url+"/v1/repositories/r/charts", key, bytes.NewReader(body2), ctype2)
	wantUnavailable("upload during an object store outage", r, b, err)
	s3.Restart(t)
	wantReady(200, `"status":"ok"`)
	if r, got, err := do(t, "GET", download, key, nil, ""); err != nil || r.StatusCode != 200 || !bytes.Equal(got, archive) {
		t.Fatalf("download after the store returned: %v %d", err, r.StatusCode)
	}
	if p.cmd.ProcessState != nil {
		t.Fatal("the server exited")
	}
}

// TestServeRefusesNewerSchema: a chartctl older than its database refuses
// to start and says what to do.
func TestServeRefusesNewerSchema(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dbURL := pgtest.NewDatabase(t)
	db, err := postgres.Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	conn, err := pgx.Connect(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	newer := postgres.LatestSchemaVersion() + 1
	if _, err := conn.Exec(context.Background(), `INSERT INTO schema_version (version) VALUES ($1)`, newer); err != nil {
		t.Fatal(err)
	}
	_ = conn.Close(context.Background())

	cmd := exec.Command(mustBinary(t), "serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--database", dbURL)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("serve started on a newer schema:\n%s", out)
	}
	want := fmt.Sprintf("database schema version %d is newer than this chartctl supports (%d); upgrade chartctl", newer, postgres.LatestSchemaVersion())
	if !strings.Contains(string(out), want) {
		t.Fatalf("output does not say %q:\n%s", want, out)
	}
}
