package blob_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/chartctl/chartctl/internal/blob"
	"github.com/chartctl/chartctl/internal/chartctl"
)

func mustOpen(tb testing.TB, root string) *blob.Store {
	tb.Helper()
	s, err := blob.Open(root)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	return s
}

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// mustPut stores data as a blob and returns its digest.
func mustPut(tb testing.TB, s *blob.Store, data []byte) string {
	tb.Helper()
	w, err := s.Create(context.Background())
	if err != nil {
		tb.Fatalf("Create: %v", err)
	}
	defer func() { _ = w.Abort() }()
	if _, err := w.Write(data); err != nil {
		tb.Fatalf("Write: %v", err)
	}
	d, err := w.Commit()
	if err != nil {
		tb.Fatalf("Commit: %v", err)
	}
	return d
}

func mustRead(tb testing.TB, s *blob.Store, digest string) []byte {
	tb.Helper()
	b, err := s.Open(context.Background(), digest)
	if err != nil {
		tb.Fatalf("Open(%s): %v", digest, err)
	}
	defer func() { _ = b.Close() }()
	data, err := io.ReadAll(b)
	if err != nil {
		tb.Fatalf("read: %v", err)
	}
	if int64(len(data)) != b.Size() {
		tb.Fatalf("Size() = %d, read %d bytes", b.Size(), len(data))
	}
	return data
}

func tmpEntries(tb testing.TB, root string) []string {
	tb.Helper()
	entries, err := os.ReadDir(filepath.Join(root, "tmp"))
	if err != nil {
		tb.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestValidDigest(t *testing.T) {
	good := digestOf([]byte("x"))
	tests := []struct {
		in   string
		want bool
	}{
		{good, true},
		{"sha256:" + strings.Repeat("0", 64), true},
		{"", false},
		{"sha256:", false},
		{strings.TrimPrefix(good, "sha256:"), false},
		{"sha512:" + strings.TrimPrefix(good, "sha256:"), false},
		{strings.ToUpper(good), false},
		{"sha256:" + strings.ToUpper(strings.TrimPrefix(good, "sha256:")), false},
		{good + "0", false},
		{good[:len(good)-1], false},
		{"sha256:../../../../etc/passwd" + strings.Repeat("a", 37), false},
		{"sha256:" + strings.Repeat("g", 64), false},
		{" " + good, false},
	}
	for _, tt := range tests {
		if got := blob.ValidDigest(tt.in); got != tt.want {
			t.Errorf("ValidDigest(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestCreateCommitOpen(t *testing.T) {
	root := t.TempDir()
	s := mustOpen(t, root)
	data := []byte("apiVersion: v2\nname: demo\nversion: 1.0.0\n")

	w, err := s.Create(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// Written in two parts: the digest covers everything written.
	if _, err := w.Write(data[:10]); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data[10:]); err != nil {
		t.Fatal(err)
	}
	if w.Size() != int64(len(data)) {
		t.Errorf("Size() = %d, want %d", w.Size(), len(data))
	}
	want := digestOf(data)
	if w.Digest() != want {
		t.Errorf("Digest() = %s, want %s", w.Digest(), want)
	}

	// Not visible before Commit.
	if _, err := s.Open(context.Background(), want); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Fatalf("Open before Commit: err = %v, want ENOTFOUND", err)
	}

	got, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("Commit() = %s, want %s", got, want)
	}
	// Commit again returns the same digest; Abort after Commit is harmless.
	if again, err := w.Commit(); err != nil || again != want {
		t.Fatalf("second Commit = %q, %v", again, err)
	}
	if err := w.Abort(); err != nil {
		t.Fatalf("Abort after Commit: %v", err)
	}
	if _, err := w.Write([]byte("more")); err == nil {
		t.Error("Write after Commit succeeded")
	}

	hexPart := strings.TrimPrefix(want, "sha256:")
	if _, err := os.Stat(filepath.Join(root, "sha256", hexPart[:2], hexPart)); err != nil {
		t.Errorf("blob not at its content address: %v", err)
	}
	if !bytes.Equal(mustRead(t, s, want), data) {
		t.Error("read back different bytes")
	}
	if n := tmpEntries(t, root); len(n) != 0 {
		t.Errorf("tmp dir not empty after Commit: %v", n)
	}

	// Seek works (archives are served with range requests).
	b, err := s.Open(context.Background(), want)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.Close() }()
	if _, err := b.Seek(5, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(b)
	if !bytes.Equal(rest, data[5:]) {
		t.Errorf("after Seek read %q", rest)
	}
}

func TestEmptyBlob(t *testing.T) {
	s := mustOpen(t, t.TempDir())
	d := mustPut(t, s, nil)
	if d != digestOf(nil) {
		t.Fatalf("digest = %s", d)
	}
	if got := mustRead(t, s, d); len(got) != 0 {
		t.Fatalf("read %d bytes", len(got))
	}
}

func TestCommitIdempotent(t *testing.T) {
	root := t.TempDir()
	s := mustOpen(t, root)
	data := []byte("same bytes")
	d1 := mustPut(t, s, data)
	d2 := mustPut(t, s, data)
	if d1 != d2 {
		t.Fatalf("digests differ: %s %s", d1, d2)
	}
	if !bytes.Equal(mustRead(t, s, d1), data) {
		t.Fatal("content changed")
	}
	if n := tmpEntries(t, root); len(n) != 0 {
		t.Errorf("tmp dir not empty: %v", n)
	}
	var all []string
	if err := s.Walk(context.Background(), func(d string) error { all = append(all, d); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 {
		t.Fatalf("Walk = %v, want one blob", all)
	}
}

func TestConcurrentCommitsOfSameBlob(t *testing.T) {
	root := t.TempDir()
	s := mustOpen(t, root)
	data := bytes.Repeat([]byte("chart"), 1000)
	var wg sync.WaitGroup
	digests := make([]string, 10)
	errs := make([]error, 10)
	for i := range digests {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w, err := s.Create(context.Background())
			if err != nil {
				errs[i] = err
				return
			}
			defer func() { _ = w.Abort() }()
			if _, err := w.Write(data); err != nil {
				errs[i] = err
				return
			}
			digests[i], errs[i] = w.Commit()
		}()
	}
	wg.Wait()
	for i := range digests {
		if errs[i] != nil {
			t.Fatalf("commit %d: %v", i, errs[i])
		}
		if digests[i] != digestOf(data) {
			t.Fatalf("commit %d: digest %s", i, digests[i])
		}
	}
	if !bytes.Equal(mustRead(t, s, digestOf(data)), data) {
		t.Fatal("content differs")
	}
	if n := tmpEntries(t, root); len(n) != 0 {
		t.Errorf("tmp dir not empty: %v", n)
	}
}

func TestAbort(t *testing.T) {
	root := t.TempDir()
	s := mustOpen(t, root)
	w, err := s.Create(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("discard me")); err != nil {
		t.Fatal(err)
	}
	if n := tmpEntries(t, root); len(n) != 1 {
		t.Fatalf("tmp entries while writing = %v, want one", n)
	}
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if err := w.Abort(); err != nil {
		t.Fatalf("second Abort: %v", err)
	}
	if n := tmpEntries(t, root); len(n) != 0 {
		t.Errorf("tmp dir not empty after Abort: %v", n)
	}
	if _, err := w.Commit(); err == nil {
		t.Error("Commit after Abort succeeded")
	}
	if _, err := s.Open(context.Background(), digestOf([]byte("discard me"))); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Errorf("aborted blob visible: %v", err)
	}
}

func TestOpenRejectsMalformedDigests(t *testing.T) {
	root := t.TempDir()
	s := mustOpen(t, root)
	d := mustPut(t, s, []byte("inside"))
	hexPart := strings.TrimPrefix(d, "sha256:")

	// A file outside the store that a traversal would reach.
	outside := filepath.Join(root, "secret")
	if err := os.WriteFile(outside, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}

	for _, bad := range []string{
		"",
		hexPart,
		"sha256:../secret",
		"sha256:../../secret",
		"sha256:" + hexPart[:2] + "/../../secret",
		"sha256:../" + hexPart[:61],
		"sha256:" + strings.ToUpper(hexPart),
		"SHA256:" + hexPart,
		"sha512:" + hexPart,
		d + "\x00",
		d + "/",
	} {
		b, err := s.Open(context.Background(), bad)
		if err == nil {
			_ = b.Close()
			t.Errorf("Open(%q) succeeded", bad)
			continue
		}
		if chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
			t.Errorf("Open(%q): code %s, want not_found", bad, chartctl.ErrorCode(err))
		}
		if msg := chartctl.ErrorMessage(err); strings.Contains(msg, root) {
			t.Errorf("message leaks path: %q", msg)
		}
	}
}

func TestOpenMissing(t *testing.T) {
	s := mustOpen(t, t.TempDir())
	_, err := s.Open(context.Background(), digestOf([]byte("never stored")))
	if chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Fatalf("err = %v, want ENOTFOUND", err)
	}
}

func TestDelete(t *testing.T) {
	s := mustOpen(t, t.TempDir())
	d := mustPut(t, s, []byte("to delete"))
	ctx := context.Background()
	if err := s.Delete(ctx, d); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Open(ctx, d); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Fatalf("Open after Delete: %v", err)
	}
	if err := s.Delete(ctx, d); err != nil {
		t.Fatalf("second Delete: %v", err)
	}
	if err := s.Delete(ctx, "sha256:../../etc"); err != nil {
		t.Fatalf("Delete malformed: %v", err)
	}
	// The blob can be stored again after deletion.
	if got := mustPut(t, s, []byte("to delete")); got != d {
		t.Fatalf("re-put digest %s", got)
	}
}

func TestWalk(t *testing.T) {
	root := t.TempDir()
	s := mustOpen(t, root)
	var want []string
	for i := range 20 {
		want = append(want, mustPut(t, s, []byte{byte(i), 'x'}))
	}
	sort.Strings(want)
	// Stray files that are not blobs are skipped.
	if err := os.WriteFile(filepath.Join(root, "sha256", "README"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := strings.TrimPrefix(want[0], "sha256:")
	if err := os.WriteFile(filepath.Join(root, "sha256", h[:2], "not-a-digest"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A temp file being written is not a blob.
	w, err := s.Create(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = w.Abort() }()

	var got []string
	if err := s.Walk(context.Background(), func(d string) error {
		got = append(got, d)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("Walk = %v\nwant %v", got, want)
	}

	// An error from fn stops the walk and is returned.
	stop := errors.New("stop")
	calls := 0
	err = s.Walk(context.Background(), func(string) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Fatalf("Walk with error: err=%v calls=%d", err, calls)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Walk(ctx, func(string) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("Walk with cancelled context: %v", err)
	}
}

func TestOpenRemovesStaleTempFiles(t *testing.T) {
	root := t.TempDir()
	s := mustOpen(t, root)
	d := mustPut(t, s, []byte("kept"))

	// A crash mid-upload leaves temp files behind.
	w, err := s.Create(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("half an upload")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "tmp", "leftover-dir"), 0o750); err != nil {
		t.Fatal(err)
	}
	if n := tmpEntries(t, root); len(n) != 2 {
		t.Fatalf("tmp entries = %v", n)
	}

	s2 := mustOpen(t, root)
	if n := tmpEntries(t, root); len(n) != 0 {
		t.Fatalf("stale temp files survive Open: %v", n)
	}
	if !bytes.Equal(mustRead(t, s2, d), []byte("kept")) {
		t.Fatal("committed blob lost")
	}
}

func TestOpenCreatesLayout(t *testing.T) {
	root := filepath.Join(t.TempDir(), "a", "b")
	mustOpen(t, root)
	for _, dir := range []string{"sha256", "tmp"} {
		fi, err := os.Stat(filepath.Join(root, dir))
		if err != nil || !fi.IsDir() {
			t.Fatalf("%s: %v", dir, err)
		}
	}
}

func TestOpenFailsOnFileRoot(t *testing.T) {
	root := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(root, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := blob.Open(root); err == nil {
		t.Fatal("Open on a regular file succeeded")
	}
}

func TestCancelledContext(t *testing.T) {
	s := mustOpen(t, t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Create(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Create: %v", err)
	}
	if _, err := s.Open(ctx, digestOf(nil)); !errors.Is(err, context.Canceled) {
		t.Errorf("Open: %v", err)
	}
	if err := s.Delete(ctx, digestOf(nil)); !errors.Is(err, context.Canceled) {
		t.Errorf("Delete: %v", err)
	}
}

// FuzzOpen checks that no digest string reaches a file other than the blob
// it names: whatever Open accepts must be a well-formed digest of the bytes
// it returns.
func FuzzOpen(f *testing.F) {
	root := f.TempDir()
	s := mustOpen(f, root)
	d := mustPut(f, s, []byte("fuzz"))
	if err := os.WriteFile(filepath.Join(root, "outside"), []byte("outside"), 0o600); err != nil {
		f.Fatal(err)
	}
	f.Add(d)
	f.Add("sha256:../outside")
	f.Add("sha256:" + strings.Repeat("a", 64))
	f.Fuzz(func(t *testing.T, in string) {
		b, err := s.Open(context.Background(), in)
		if err != nil {
			if chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
				t.Fatalf("Open(%q): %v", in, err)
			}
			return
		}
		defer func() { _ = b.Close() }()
		if !blob.ValidDigest(in) {
			t.Fatalf("Open accepted malformed digest %q", in)
		}
		data, err := io.ReadAll(b)
		if err != nil {
			t.Fatal(err)
		}
		if digestOf(data) != in {
			t.Fatalf("Open(%q) returned bytes of another digest", in)
		}
	})
}

func TestSHA512Blobs(t *testing.T) {
	root := t.TempDir()
	s, err := blob.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	w, err := s.CreateAlgorithm(ctx, "sha512")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	d, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	want := "sha512:9b71d224bd62f3785d96d46ad3ea3d73319bfbc2890caadae2dff72519673ca72323c3d99ba5c11d7c7acc6e14b8c5da0c4663475c2e5c3adef46f73bcdec043"
	if d != want {
		t.Fatalf("digest = %s, want %s", d, want)
	}
	// A restart finds it, and Walk reports it after the sha256 blobs.
	s, err = blob.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Open(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(b)
	_ = b.Close()
	if string(got) != "hello" {
		t.Fatalf("content = %q", got)
	}
	var seen []string
	if err := s.Walk(ctx, func(d string) error { seen = append(seen, d); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1 || seen[0] != want {
		t.Fatalf("Walk = %v", seen)
	}
	if _, err := s.CreateAlgorithm(ctx, "md5"); chartctl.ErrorCode(err) != chartctl.EINVALID {
		t.Fatalf("md5: err = %v, want EINVALID", err)
	}
	if err := s.Delete(ctx, d); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Open(ctx, d); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Fatalf("after delete: %v", err)
	}
}
