package s3blob_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/chartctl/chartctl/internal/blobtest"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/s3blob"
	"github.com/chartctl/chartctl/internal/testkit/s3test"
)

func TestMain(m *testing.M) { os.Exit(s3test.Main(m)) }

var ctx = context.Background()

func mustOpen(tb testing.TB, url string) *s3blob.Store {
	tb.Helper()
	s, err := s3blob.Open(ctx, url)
	if err != nil {
		tb.Fatalf("Open(%s): %v", url, err)
	}
	return s
}

// TestConformance runs the blob store suite on a real S3 server.
func TestConformance(t *testing.T) {
	blobtest.Run(t, func(t *testing.T) chartctl.BlobStore { return mustOpen(t, s3test.NewBucket(t)) })
}

func TestParseURL(t *testing.T) {
	c, err := s3blob.ParseURL("s3://charts/prod/chartctl/?endpoint=http://127.0.0.1:9000&region=eu-west-1&path_style=true")
	if err != nil {
		t.Fatal(err)
	}
	want := s3blob.Config{Bucket: "charts", Prefix: "prod/chartctl/", Endpoint: "127.0.0.1:9000", Secure: false, Region: "eu-west-1", PathStyle: true}
	if *c != want {
		t.Fatalf("ParseURL = %+v, want %+v", *c, want)
	}
	c, err = s3blob.ParseURL("s3://charts")
	if err != nil {
		t.Fatal(err)
	}
	if want := (s3blob.Config{Bucket: "charts", Endpoint: "s3.amazonaws.com", Secure: true}); *c != want {
		t.Fatalf("ParseURL defaults = %+v, want %+v", *c, want)
	}
	for _, bad := range []string{
		"charts", "s3://", "file:///x", "s3://b?endpoint=ftp://x", "s3://b?endpoint=http://x/path",
		"s3://b?path_style=maybe", "s3://b?bogus=1", "s3://user:pw@b",
	} {
		if _, err := s3blob.ParseURL(bad); err == nil {
			t.Errorf("ParseURL(%q) succeeded", bad)
		}
	}
}

// TestLayout: blobs live under PREFIX/sha256/<hex>, and a prefix keeps
// stores sharing a bucket apart; nothing is left under uploads/.
func TestLayout(t *testing.T) {
	srv := s3test.Shared(t)
	url := srv.NewBucket(t)
	bucket := strings.TrimPrefix(url[:strings.Index(url, "/chartctl")], "s3://")
	a := mustOpen(t, url)
	b := mustOpen(t, srv.URL(bucket, "other"))
	small := blobtest.Put(t, a, []byte("small"), 2)
	large := blobtest.Put(t, a, blobtest.Bytes(9, s3blob.DefaultPartSize+5), 1<<20)
	w, err := a.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(blobtest.Bytes(10, 2*s3blob.DefaultPartSize+1)); err != nil {
		t.Fatal(err)
	}
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	uploads, err := minio.Core{Client: srv.Client(t)}.ListMultipartUploads(ctx, bucket, "", "", "", "", 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(uploads.Uploads) != 0 {
		t.Fatalf("multipart uploads left: %+v", uploads.Uploads)
	}
	var keys []string
	for obj := range srv.Client(t).ListObjects(ctx, bucket, minio.ListObjectsOptions{Recursive: true}) {
		if obj.Err != nil {
			t.Fatal(obj.Err)
		}
		keys = append(keys, obj.Key)
	}
	want := []string{"chartctl/sha256/" + strings.TrimPrefix(small, "sha256:"), "chartctl/sha256/" + strings.TrimPrefix(large, "sha256:")}
	if len(keys) != 2 || !(keys[0] == want[0] && keys[1] == want[1] || keys[0] == want[1] && keys[1] == want[0]) {
		t.Fatalf("objects = %q, want %q", keys, want)
	}
	if _, err := b.Open(ctx, small); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Fatalf("another prefix sees the blob: %v", err)
	}
	var seen []string
	if err := b.Walk(ctx, func(d string) error { seen = append(seen, d); return nil }); err != nil || len(seen) != 0 {
		t.Fatalf("Walk of another prefix = %v, %v", seen, err)
	}
}

func TestOpenErrors(t *testing.T) {
	srv := s3test.Shared(t)
	if _, err := s3blob.Open(ctx, srv.URL("no-such-bucket", "")); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("Open of a missing bucket: %v", err)
	}
	closed := "s3://b?endpoint=http://127.0.0.1:1&region=us-east-1&path_style=true"
	if _, err := s3blob.Open(ctx, closed); err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("Open of an unreachable store: %v, want an error naming it", err)
	}
	url := srv.NewBucket(t)
	t.Setenv("AWS_SECRET_ACCESS_KEY", "wrong-secret")
	_, err := s3blob.Open(ctx, url)
	if err == nil {
		t.Fatal("Open with a wrong secret succeeded")
	}
	if strings.Contains(err.Error(), "wrong-secret") {
		t.Fatalf("error leaks the secret: %v", err)
	}
}

// TestOutage: with the store gone, calls fail with EUNAVAILABLE (503);
// when it returns, the same Store works again.
func TestOutage(t *testing.T) {
	srv := s3test.Start(t)
	s := mustOpen(t, srv.NewBucket(t))
	d := blobtest.Put(t, s, []byte("before"), 3)
	srv.Stop(t)
	_, err := s.Open(ctx, d)
	if chartctl.ErrorCode(err) != chartctl.EUNAVAILABLE {
		t.Fatalf("Open during outage: %q (%v)", chartctl.ErrorCode(err), err)
	}
	if chartctl.ErrorMessage(err) != "The blob store is unavailable; retry in a moment." {
		t.Fatalf("message = %q", chartctl.ErrorMessage(err))
	}
	w, err := s.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("during")); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(); chartctl.ErrorCode(err) != chartctl.EUNAVAILABLE {
		t.Fatalf("Commit during outage: %q (%v)", chartctl.ErrorCode(err), err)
	}
	if s.Ping(ctx) == nil {
		t.Fatal("Ping during outage succeeded")
	}
	srv.Restart(t)
	if got := blobtest.Read(t, s, d); !bytes.Equal(got, []byte("before")) {
		t.Fatalf("after the outage read %q", got)
	}
	blobtest.Put(t, s, []byte("after"), 3)
}

// BenchmarkBlobStore runs the engine-neutral blob benchmarks on versitygw
// over loopback.
func BenchmarkBlobStore(b *testing.B) {
	blobtest.Benchmark(b, func(b *testing.B) chartctl.BlobStore { return mustOpen(b, s3test.NewBucket(b)) })
}

// TestSessions: an upload session's chunks are stored under its id by
// offset, a chunk committed again at an offset replaces the one there,
// an aborted one (even a multipart one) leaves nothing, Walk lists each
// session once, and Delete removes them; sessions never show up as blobs.
func TestSessions(t *testing.T) {
	s := mustOpen(t, s3test.NewBucket(t))
	put := func(id string, off int64, data []byte, commit bool) {
		t.Helper()
		w, err := s.CreateSessionChunk(ctx, id, off)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
		if !commit {
			if err := w.Abort(); err != nil {
				t.Fatal(err)
			}
			return
		}
		if err := w.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	big := blobtest.Bytes(3, s3blob.DefaultPartSize+10)
	put("a1", 0, []byte("hello "), true)
	put("a1", 6, []byte("never acknowledged"), true)
	put("a1", 6, big, true) // the retry replaces it
	put("a1", 6+int64(len(big)), big, false)
	put("b2", 0, []byte("other"), true)
	chunks, err := s.SessionChunks(ctx, "a1")
	if err != nil {
		t.Fatal(err)
	}
	if len(chunks) != 2 || chunks[0].Offset != 0 || chunks[0].Size != 6 || chunks[1].Offset != 6 || chunks[1].Size != int64(len(big)) || chunks[1].Modified.IsZero() {
		t.Fatalf("chunks = %+v", chunks)
	}
	rc, err := s.OpenSessionChunk(ctx, "a1", 6)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("chunk at 6: %d bytes, %v", len(got), err)
	}
	if _, err := s.OpenSessionChunk(ctx, "a1", 7); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Fatalf("missing chunk: %v", err)
	}
	var ids []string
	if err := s.WalkSessions(ctx, func(id string, mod time.Time) error {
		if mod.IsZero() {
			t.Errorf("session %s without a time", id)
		}
		ids = append(ids, id)
		return nil
	}); err != nil || fmt.Sprint(ids) != "[a1 b2]" {
		t.Fatalf("WalkSessions = %v, %v", ids, err)
	}
	if err := s.Walk(ctx, func(d string) error { return fmt.Errorf("session data seen as blob %s", d) }); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteSession(ctx, "a1"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteSession(ctx, "never-there"); err != nil {
		t.Fatal(err)
	}
	if chunks, err := s.SessionChunks(ctx, "a1"); err != nil || len(chunks) != 0 {
		t.Fatalf("after delete: %+v, %v", chunks, err)
	}
	if _, err := s.CreateSessionChunk(ctx, "../escape", 0); chartctl.ErrorCode(err) != chartctl.EINVALID {
		t.Fatalf("hostile id: %v", err)
	}
}
