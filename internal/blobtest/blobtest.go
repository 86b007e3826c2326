// Package blobtest is the one conformance suite of chartctl.BlobStore: what
// every blob engine (internal/blob on files, internal/s3blob on an S3
// store) must do, run unchanged against each:
//
//	func TestConformance(t *testing.T) {
//		blobtest.Run(t, func(t *testing.T) chartctl.BlobStore { return open(t) })
//	}
package blobtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// Open returns a fresh, empty blob store for one test.
type Open func(t *testing.T) chartctl.BlobStore

// LargeSize is the size of the large blob the suite writes: more than one
// S3 multipart part, so engines that switch to multipart uploads test it.
const LargeSize = 13<<20 + 12345

// Run runs the whole suite, each part as a subtest with a fresh store.
func Run(t *testing.T, open Open) {
	t.Run("WriteAndRead", func(t *testing.T) { testWriteAndRead(t, open(t)) })
	t.Run("Empty", func(t *testing.T) { testEmpty(t, open(t)) })
	t.Run("Large", func(t *testing.T) { testLarge(t, open(t)) })
	t.Run("Seek", func(t *testing.T) { testSeek(t, open(t)) })
	t.Run("InvisibleUntilCommit", func(t *testing.T) { testInvisibleUntilCommit(t, open(t)) })
	t.Run("Abort", func(t *testing.T) { testAbort(t, open(t)) })
	t.Run("CommitTwice", func(t *testing.T) { testCommitTwice(t, open(t)) })
	t.Run("NotFound", func(t *testing.T) { testNotFound(t, open(t)) })
	t.Run("Delete", func(t *testing.T) { testDelete(t, open(t)) })
	t.Run("Walk", func(t *testing.T) { testWalk(t, open(t)) })
	t.Run("ConcurrentSameContent", func(t *testing.T) { testConcurrentSame(t, open(t)) })
	t.Run("ConcurrentDistinct", func(t *testing.T) { testConcurrentDistinct(t, open(t)) })
	t.Run("SHA512", func(t *testing.T) { testSHA512(t, open(t)) })
	t.Run("ModTime", func(t *testing.T) { testModTime(t, open(t)) })
}

var ctx = context.Background()

// Digest returns "sha256:<hex>" of b.
func Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Bytes returns n pseudo-random bytes from seed.
func Bytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := 0; i+8 <= n; i += 8 {
		v := r.Uint64()
		for j := range 8 {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	for i := n - n%8; i < n; i++ {
		b[i] = byte(r.Uint32())
	}
	return b
}

func wantCode(tb testing.TB, err error, code string) {
	tb.Helper()
	if got := chartctl.ErrorCode(err); got != code {
		tb.Fatalf("error code = %q (%v), want %q", got, err, code)
	}
}

// Put stores data in chunks of chunk bytes and returns its digest.
func Put(tb testing.TB, s chartctl.BlobStore, data []byte, chunk int) string {
	tb.Helper()
	w, err := s.Create(ctx)
	if err != nil {
		tb.Fatalf("Create: %v", err)
	}
	defer func() { _ = w.Abort() }()
	for off := 0; off < len(data); off += chunk {
		end := min(off+chunk, len(data))
		n, err := w.Write(data[off:end])
		if err != nil || n != end-off {
			tb.Fatalf("Write: %d, %v", n, err)
		}
	}
	if w.Size() != int64(len(data)) || w.Digest() != Digest(data) {
		tb.Fatalf("writer reports %d bytes %s, want %d %s", w.Size(), w.Digest(), len(data), Digest(data))
	}
	d, err := w.Commit()
	if err != nil {
		tb.Fatalf("Commit: %v", err)
	}
	if d != Digest(data) {
		tb.Fatalf("Commit = %s, want %s", d, Digest(data))
	}
	return d
}

// Read returns the whole blob.
func Read(tb testing.TB, s chartctl.BlobStore, digest string) []byte {
	tb.Helper()
	b, err := s.Open(ctx, digest)
	if err != nil {
		tb.Fatalf("Open(%s): %v", digest, err)
	}
	defer func() { _ = b.Close() }()
	data, err := io.ReadAll(b)
	if err != nil {
		tb.Fatalf("read %s: %v", digest, err)
	}
	if b.Size() != int64(len(data)) {
		tb.Fatalf("Size = %d, read %d bytes", b.Size(), len(data))
	}
	return data
}

func walk(tb testing.TB, s chartctl.BlobStore) []string {
	tb.Helper()
	var out []string
	if err := s.Walk(ctx, func(d string) error {
		out = append(out, d)
		return nil
	}); err != nil {
		tb.Fatalf("Walk: %v", err)
	}
	sort.Strings(out)
	return out
}

func testWriteAndRead(t *testing.T, s chartctl.BlobStore) {
	data := []byte("apiVersion: v2\nname: web\nversion: 1.0.0\n")
	d := Put(t, s, data, 7)
	if got := Read(t, s, d); !bytes.Equal(got, data) {
		t.Fatalf("read %q, want %q", got, data)
	}
	// Reading twice at once: each Open is its own reader.
	a, err := s.Open(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Open(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	defer b.Close()
	bufA, bufB := make([]byte, 5), make([]byte, 5)
	if _, err := io.ReadFull(a, bufA); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(b, bufB); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(bufA, data[:5]) || !bytes.Equal(bufB, data[:5]) {
		t.Fatalf("concurrent readers read %q and %q", bufA, bufB)
	}
}

func testEmpty(t *testing.T, s chartctl.BlobStore) {
	d := Put(t, s, nil, 1)
	if got := Read(t, s, d); len(got) != 0 {
		t.Fatalf("empty blob read %d bytes", len(got))
	}
}

func testLarge(t *testing.T, s chartctl.BlobStore) {
	data := Bytes(1, LargeSize)
	d := Put(t, s, data, 1<<20+17)
	if got := Read(t, s, d); !bytes.Equal(got, data) {
		t.Fatalf("large blob: read %d bytes, differing from the %d written", len(got), len(data))
	}
	b, err := s.Open(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	off := int64(LargeSize / 2)
	if _, err := b.Seek(off, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	if _, err := io.ReadFull(b, buf); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf, data[off:off+4096]) {
		t.Fatal("ranged read in the middle of a large blob differs")
	}
}

func testSeek(t *testing.T, s chartctl.BlobStore) {
	data := Bytes(2, 10000)
	d := Put(t, s, data, 4096)
	b, err := s.Open(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.Size() != 10000 {
		t.Fatalf("Size = %d", b.Size())
	}
	read := func(n int) []byte {
		t.Helper()
		buf := make([]byte, n)
		if _, err := io.ReadFull(b, buf); err != nil {
			t.Fatal(err)
		}
		return buf
	}
	steps := []struct {
		offset int64
		whence int
		want   int64
	}{
		{100, io.SeekStart, 100},
		{50, io.SeekCurrent, 200}, // after reading 50 at 100
		{-10, io.SeekEnd, 9990},
		{0, io.SeekStart, 0},
	}
	pos := int64(0)
	for i, st := range steps {
		got, err := b.Seek(st.offset, st.whence)
		if err != nil {
			t.Fatalf("step %d: Seek: %v", i, err)
		}
		if got != st.want {
			t.Fatalf("step %d: Seek = %d, want %d", i, got, st.want)
		}
		pos = got
		n := int(min(50, 10000-pos))
		if buf := read(n); !bytes.Equal(buf, data[pos:pos+int64(n)]) {
			t.Fatalf("step %d: read at %d differs", i, pos)
		}
	}
	if _, err := b.Seek(0, io.SeekEnd); err != nil {
		t.Fatal(err)
	}
	if n, err := b.Read(make([]byte, 10)); n != 0 || err != io.EOF {
		t.Fatalf("read at end: %d, %v; want 0, EOF", n, err)
	}
	if _, err := b.Seek(-1, io.SeekStart); err == nil {
		t.Fatal("Seek to a negative offset succeeded")
	}
}

func testInvisibleUntilCommit(t *testing.T, s chartctl.BlobStore) {
	data := []byte("not yet")
	w, err := s.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = w.Abort() }()
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	_, err = s.Open(ctx, Digest(data))
	wantCode(t, err, chartctl.ENOTFOUND)
	if got := walk(t, s); len(got) != 0 {
		t.Fatalf("Walk before Commit = %v", got)
	}
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := walk(t, s); !slices.Equal(got, []string{Digest(data)}) {
		t.Fatalf("Walk after Commit = %v", got)
	}
}

func testAbort(t *testing.T, s chartctl.BlobStore) {
	data := Bytes(3, 9<<20) // past a multipart part
	w, err := s.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Abort(); err != nil {
		t.Fatalf("Abort: %v", err)
	}
	if err := w.Abort(); err != nil {
		t.Fatalf("second Abort: %v", err)
	}
	_, err = s.Open(ctx, Digest(data))
	wantCode(t, err, chartctl.ENOTFOUND)
	if _, err := w.Write([]byte("more")); err == nil {
		t.Fatal("Write after Abort succeeded")
	}
	if _, err := w.Commit(); err == nil {
		t.Fatal("Commit after Abort succeeded")
	}
	if got := walk(t, s); len(got) != 0 {
		t.Fatalf("Walk after Abort = %v", got)
	}
}

func testCommitTwice(t *testing.T, s chartctl.BlobStore) {
	data := []byte("twice")
	w, err := s.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	d1, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	d2, err := w.Commit()
	if err != nil || d2 != d1 {
		t.Fatalf("second Commit = %s, %v; want %s", d2, err, d1)
	}
	if err := w.Abort(); err != nil {
		t.Fatalf("Abort after Commit: %v", err)
	}
	if got := Read(t, s, d1); !bytes.Equal(got, data) {
		t.Fatal("Abort after Commit removed the blob")
	}
	if _, err := w.Write([]byte("more")); err == nil {
		t.Fatal("Write after Commit succeeded")
	}
	// Committing bytes already stored succeeds.
	if d := Put(t, s, data, 2); d != d1 {
		t.Fatalf("recommit = %s", d)
	}
	if got := walk(t, s); !slices.Equal(got, []string{d1}) {
		t.Fatalf("Walk = %v", got)
	}
}

func testNotFound(t *testing.T, s chartctl.BlobStore) {
	for _, d := range []string{
		Digest([]byte("never stored")),
		"sha256:" + "ZZ" + Digest(nil)[9:],
		"sha256:../../etc/passwd",
		"md5:d41d8cd98f00b204e9800998ecf8427e",
		"",
	} {
		_, err := s.Open(ctx, d)
		wantCode(t, err, chartctl.ENOTFOUND)
	}
}

func testDelete(t *testing.T, s chartctl.BlobStore) {
	keep := Put(t, s, []byte("keep"), 4)
	gone := Put(t, s, []byte("gone"), 4)
	if err := s.Delete(ctx, gone); err != nil {
		t.Fatal(err)
	}
	_, err := s.Open(ctx, gone)
	wantCode(t, err, chartctl.ENOTFOUND)
	for _, d := range []string{gone, Digest([]byte("never")), "sha256:bad", ""} {
		if err := s.Delete(ctx, d); err != nil {
			t.Fatalf("Delete(%q): %v", d, err)
		}
	}
	if got := walk(t, s); !slices.Equal(got, []string{keep}) {
		t.Fatalf("Walk = %v", got)
	}
	// A deleted blob may be stored again.
	if d := Put(t, s, []byte("gone"), 4); d != gone {
		t.Fatal(d)
	}
	Read(t, s, gone)
}

func testWalk(t *testing.T, s chartctl.BlobStore) {
	var want []string
	for i := range 25 {
		want = append(want, Put(t, s, []byte(fmt.Sprint("blob ", i)), 64))
	}
	sort.Strings(want)
	if got := walk(t, s); !slices.Equal(got, want) {
		t.Fatalf("Walk = %d digests, want %d", len(got), len(want))
	}
	stop := errors.New("stop")
	n := 0
	err := s.Walk(ctx, func(string) error {
		n++
		if n == 3 {
			return stop
		}
		return nil
	})
	if err != stop || n != 3 {
		t.Fatalf("Walk stopped with %v after %d calls, want the callback's error after 3", err, n)
	}
}

func testConcurrentSame(t *testing.T, s chartctl.BlobStore) {
	data := Bytes(4, 100000)
	var wg sync.WaitGroup
	errs := make([]error, 16)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w, err := s.Create(ctx)
			if err != nil {
				errs[i] = err
				return
			}
			defer func() { _ = w.Abort() }()
			if _, err := w.Write(data); err != nil {
				errs[i] = err
				return
			}
			_, errs[i] = w.Commit()
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("concurrent commit of the same bytes: %v", err)
		}
	}
	if got := Read(t, s, Digest(data)); !bytes.Equal(got, data) {
		t.Fatal("blob differs after concurrent commits")
	}
	if got := walk(t, s); len(got) != 1 {
		t.Fatalf("Walk = %v", got)
	}
}

func testConcurrentDistinct(t *testing.T, s chartctl.BlobStore) {
	var wg sync.WaitGroup
	digests := make([]string, 16)
	errs := make([]error, 16)
	for i := range digests {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w, err := s.Create(ctx)
			if err != nil {
				errs[i] = err
				return
			}
			defer func() { _ = w.Abort() }()
			if _, err := w.Write(Bytes(uint64(100+i), 50000+i)); err != nil {
				errs[i] = err
				return
			}
			digests[i], errs[i] = w.Commit()
		}()
	}
	wg.Wait()
	for i, d := range digests {
		if errs[i] != nil {
			t.Fatalf("writer %d: %v", i, errs[i])
		}
		if got := Read(t, s, d); !bytes.Equal(got, Bytes(uint64(100+i), 50000+i)) {
			t.Fatalf("blob %d differs", i)
		}
	}
}

// testSHA512 checks the blobs an OCI client addresses by sha512: stored
// under their sha512 digest (small and multipart-sized), read back, walked
// and deleted like sha256 ones, and an unknown algorithm refused.
func testSHA512(t *testing.T, s chartctl.BlobStore) {
	as, ok := s.(chartctl.AlgorithmBlobStore)
	if !ok {
		t.Fatalf("%T is not a chartctl.AlgorithmBlobStore", s)
	}
	if _, err := as.CreateAlgorithm(ctx, "md5"); chartctl.ErrorCode(err) != chartctl.EINVALID {
		t.Fatalf("CreateAlgorithm(md5) = %v, want EINVALID", err)
	}
	small := Put(t, s, []byte("sha256 neighbour"), 1024)
	var digests []string
	for i, data := range [][]byte{[]byte("hello sha512"), Bytes(512, LargeSize)} {
		w, err := as.CreateAlgorithm(ctx, "sha512")
		if err != nil {
			t.Fatal(err)
		}
		for off := 0; off < len(data); off += 1 << 20 {
			if _, err := w.Write(data[off:min(off+1<<20, len(data))]); err != nil {
				t.Fatal(err)
			}
		}
		sum := sha512.Sum512(data)
		want := "sha512:" + hex.EncodeToString(sum[:])
		if w.Digest() != want || w.Size() != int64(len(data)) {
			t.Fatalf("blob %d: writer digest %s size %d, want %s %d", i, w.Digest(), w.Size(), want, len(data))
		}
		got, err := w.Commit()
		_ = w.Abort()
		if err != nil || got != want {
			t.Fatalf("blob %d: Commit = %s, %v; want %s", i, got, err, want)
		}
		if !bytes.Equal(Read(t, s, want), data) {
			t.Fatalf("blob %d: read back other bytes", i)
		}
		digests = append(digests, want)
	}
	wantAll := append([]string{small}, digests...)
	sort.Strings(wantAll)
	if got := walk(t, s); !slices.Equal(got, wantAll) {
		t.Fatalf("Walk = %v, want %v", got, wantAll)
	}
	for _, d := range digests {
		if err := s.Delete(ctx, d); err != nil {
			t.Fatal(err)
		}
		_, err := s.Open(ctx, d)
		wantCode(t, err, chartctl.ENOTFOUND)
	}
}

// testModTime checks the modification time garbage collection relies on:
// set by a commit, never moved back by committing the same bytes again,
// and ENOTFOUND for a blob that is not stored.
func testModTime(t *testing.T, s chartctl.BlobStore) {
	_, err := s.ModTime(ctx, Digest([]byte("missing")))
	wantCode(t, err, chartctl.ENOTFOUND)
	_, err = s.ModTime(ctx, "sha256:nothex")
	wantCode(t, err, chartctl.ENOTFOUND)
	for _, data := range [][]byte{[]byte("small"), Bytes(7, LargeSize)} {
		d := Put(t, s, data, 1<<20)
		first, err := s.ModTime(ctx, d)
		if err != nil || first.IsZero() {
			t.Fatalf("ModTime = %v, %v", first, err)
		}
		Put(t, s, data, 1<<20)
		again, err := s.ModTime(ctx, d)
		if err != nil || again.Before(first) {
			t.Fatalf("ModTime after committing the same bytes = %v (%v), before %v", again, err, first)
		}
		must(t, s.Delete(ctx, d))
		_, err = s.ModTime(ctx, d)
		wantCode(t, err, chartctl.ENOTFOUND)
	}
}

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}
