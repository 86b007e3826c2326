package smallblobs_test

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/internal/blob"
	"github.com/chartctl/chartctl/internal/blobtest"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/smallblobs"
)

// put stores data in s and returns its digest.
func put(t *testing.T, s chartctl.BlobStore, data []byte) string {
	t.Helper()
	w, err := s.Create(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	d, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func newStore(t *testing.T) *blob.Store {
	t.Helper()
	s, err := blob.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// read opens digest through c and returns its content and whether it came
// from memory.
func read(t *testing.T, c *smallblobs.Cache, s chartctl.BlobStore, digest string) ([]byte, bool) {
	t.Helper()
	b, err := c.Open(context.Background(), s, digest)
	if err != nil {
		t.Fatalf("open %s: %v", digest, err)
	}
	defer b.Close()
	data, err := io.ReadAll(b)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(data)) != b.Size() {
		t.Fatalf("read %d bytes of a blob of size %d", len(data), b.Size())
	}
	_, mem := b.(*smallblobs.Reader)
	return data, mem
}

func TestServesFromMemoryAfterFirstRead(t *testing.T) {
	s := newStore(t)
	c := smallblobs.New(1<<20, 1<<10)
	data := []byte("chart archive bytes")
	d := put(t, s, data)

	got, _ := read(t, c, s, d)
	if !bytes.Equal(got, data) {
		t.Fatalf("first read: %q", got)
	}
	// The file is gone from the store's directory, yet the blob is served:
	// it came from memory.
	if err := s.Delete(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	got, mem := read(t, c, s, d)
	if !bytes.Equal(got, data) || !mem {
		t.Fatalf("second read: %q, from memory %v", got, mem)
	}
	st := c.Stats()
	if st.Blobs != 1 || st.Bytes != int64(len(data)) || st.Hits != 1 || st.Misses != 1 {
		t.Fatalf("stats %+v", st)
	}
	b, _ := c.Open(context.Background(), s, d)
	r := b.(*smallblobs.Reader).Blob()
	if r.ETagHeader()[0] != `"`+d+`"` || r.LengthHeader()[0] != "19" || r.Digest() != d || r.DigestHeader()[0] != d {
		t.Fatalf("headers %q %q", r.ETagHeader(), r.LengthHeader())
	}
}

func TestForgetStopsServing(t *testing.T) {
	s := newStore(t)
	c := smallblobs.New(1<<20, 1<<10)
	d := put(t, s, []byte("to be deleted"))
	read(t, c, s, d)
	if err := s.Delete(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	c.Forget(d)
	if _, err := c.Open(context.Background(), s, d); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Fatalf("deleted and forgotten blob: %v, want ENOTFOUND", err)
	}
	if st := c.Stats(); st.Blobs != 0 || st.Bytes != 0 {
		t.Fatalf("stats after forget %+v", st)
	}
}

// A blob put by its writer is served from memory from its first read;
// one over the size limit is not kept.
func TestPutServesFromMemory(t *testing.T) {
	s := newStore(t)
	c := smallblobs.New(1<<20, 100)
	small, big := []byte("just committed"), bytes.Repeat([]byte("y"), 101)
	ds, db := put(t, s, small), put(t, s, big)
	c.Put(ds, small)
	c.Put(db, big)
	if c.MaxBlob() != 100 {
		t.Fatalf("MaxBlob %d, want 100", c.MaxBlob())
	}
	if got, mem := read(t, c, s, ds); !bytes.Equal(got, small) || !mem {
		t.Fatalf("put blob: %q, from memory %v", got, mem)
	}
	if got, mem := read(t, c, s, db); !bytes.Equal(got, big) || mem {
		t.Fatalf("large put blob: %d bytes, from memory %v", len(got), mem)
	}
	if st := c.Stats(); st.Blobs != 1 || st.Bytes != int64(len(small)) || st.Hits != 1 || st.Misses != 1 {
		t.Fatalf("stats %+v", st)
	}
	// Putting it again keeps one copy.
	c.Put(ds, small)
	if st := c.Stats(); st.Blobs != 1 || st.Bytes != int64(len(small)) {
		t.Fatalf("stats after a second put %+v", st)
	}
	var nilCache *smallblobs.Cache
	nilCache.Put(ds, small)
	if nilCache.MaxBlob() != 0 {
		t.Fatal("a nil cache keeps blobs")
	}
}

func TestMissingBlobIsNotRemembered(t *testing.T) {
	s := newStore(t)
	c := smallblobs.New(1<<20, 1<<10)
	data := []byte("arrives later")
	d := blobtest.Digest(data)
	if _, err := c.Open(context.Background(), s, d); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Fatalf("missing blob: %v", err)
	}
	put(t, s, data)
	if got, _ := read(t, c, s, d); !bytes.Equal(got, data) {
		t.Fatalf("after commit: %q", got)
	}
}

func TestLargeBlobsStayInTheStore(t *testing.T) {
	s := newStore(t)
	c := smallblobs.New(1<<20, 100)
	big := bytes.Repeat([]byte("x"), 101)
	d := put(t, s, big)
	for range 2 {
		got, mem := read(t, c, s, d)
		if !bytes.Equal(got, big) || mem {
			t.Fatalf("large blob: %d bytes, from memory %v", len(got), mem)
		}
	}
	if st := c.Stats(); st.Blobs != 0 {
		t.Fatalf("a blob over the limit was kept: %+v", st)
	}
}

// The bytes kept never exceed the budget; the least recently served blob
// goes first.
func TestEvictionKeepsTheBudget(t *testing.T) {
	s := newStore(t)
	const size = 100
	c := smallblobs.New(3*size, size)
	var ds []string
	for i := range 5 {
		ds = append(ds, put(t, s, bytes.Repeat([]byte{'a' + byte(i)}, size)))
	}
	read(t, c, s, ds[0])
	read(t, c, s, ds[1])
	read(t, c, s, ds[2])
	read(t, c, s, ds[0]) // 0 is now the most recently served: 1 goes next
	read(t, c, s, ds[3])
	if st := c.Stats(); st.Blobs != 3 || st.Bytes != 3*size {
		t.Fatalf("stats %+v, want 3 blobs, %d bytes", st, 3*size)
	}
	kept := func(d string) bool {
		// A blob deleted from the store is still readable only from memory.
		b, err := c.Open(context.Background(), s, d)
		if err != nil {
			return false
		}
		b.Close()
		return true
	}
	for _, d := range ds[:4] {
		if err := s.Delete(context.Background(), d); err != nil {
			t.Fatal(err)
		}
	}
	if kept(ds[1]) {
		t.Error("the least recently served blob was kept")
	}
	for _, i := range []int{0, 2, 3} {
		if !kept(ds[i]) {
			t.Errorf("blob %d was evicted", i)
		}
	}
	// Many blobs later the budget still holds.
	for i := range 50 {
		d := put(t, s, []byte(strings.Repeat("z", 1+i%size)+string(rune('A'+i%26))))
		read(t, c, s, d)
		if st := c.Stats(); st.Bytes > 3*size {
			t.Fatalf("over budget: %+v", st)
		}
	}
}

// Readers of one cached blob are independent: each reads and seeks on its
// own.
func TestReadersAreIndependent(t *testing.T) {
	s := newStore(t)
	c := smallblobs.New(1<<20, 1<<10)
	d := put(t, s, []byte("0123456789"))
	read(t, c, s, d)
	a, _ := c.Open(context.Background(), s, d)
	b, _ := c.Open(context.Background(), s, d)
	if _, err := a.Seek(5, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	ra, _ := io.ReadAll(a)
	rb, _ := io.ReadAll(b)
	if string(ra) != "56789" || string(rb) != "0123456789" {
		t.Fatalf("readers %q %q", ra, rb)
	}
}

func TestNilCacheReadsTheStore(t *testing.T) {
	s := newStore(t)
	var c *smallblobs.Cache = smallblobs.New(0, 100)
	if c != nil {
		t.Fatal("a zero budget made a cache")
	}
	d := put(t, s, []byte("plain"))
	if got, mem := read(t, c, s, d); string(got) != "plain" || mem {
		t.Fatalf("%q, from memory %v", got, mem)
	}
	c.Forget(d)
	if st := c.Stats(); st != (smallblobs.Stats{}) {
		t.Fatalf("stats of nil cache %+v", st)
	}
}

// Readers, forgetters and evictions at once keep every read whole and the
// budget kept (run with -race).
func TestConcurrentUse(t *testing.T) {
	s := newStore(t)
	const size = 64
	c := smallblobs.New(4*size, size)
	var ds []string
	var data [][]byte
	for i := range 8 {
		b := bytes.Repeat([]byte{'a' + byte(i)}, size)
		ds, data = append(ds, put(t, s, b)), append(data, b)
	}
	done := make(chan struct{})
	errs := make(chan string, 16)
	for g := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range 500 {
				k := (g*7 + i) % len(ds)
				if g == 3 && i%5 == 0 {
					c.Forget(ds[k])
					continue
				}
				b, err := c.Open(context.Background(), s, ds[k])
				if err != nil {
					errs <- err.Error()
					return
				}
				got, _ := io.ReadAll(b)
				b.Close()
				if !bytes.Equal(got, data[k]) {
					errs <- "blob " + ds[k] + " read wrong"
					return
				}
				if st := c.Stats(); st.Bytes > 4*size {
					errs <- "over budget"
					return
				}
			}
		}()
	}
	for range 4 {
		<-done
	}
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// The server's own reads (Read) take a kept copy but keep nothing, so
// rendering every version's page does not push out what clients pull.
func TestReadTakesKeptCopiesButKeepsNothing(t *testing.T) {
	s := newStore(t)
	c := smallblobs.New(1<<20, 100)
	kept, other := []byte("pushed a moment ago"), []byte("pushed long ago")
	dk, do := put(t, s, kept), put(t, s, other)
	c.Put(dk, kept)
	readOwn := func(d string) ([]byte, bool) {
		t.Helper()
		b, err := c.Read(context.Background(), s, d)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		data, err := io.ReadAll(b)
		if err != nil {
			t.Fatal(err)
		}
		_, mem := b.(*smallblobs.Reader)
		return data, mem
	}
	if got, mem := readOwn(dk); !bytes.Equal(got, kept) || !mem {
		t.Fatalf("kept blob: %q, from memory %v", got, mem)
	}
	if got, mem := readOwn(do); !bytes.Equal(got, other) || mem {
		t.Fatalf("other blob: %q, from memory %v", got, mem)
	}
	if st := c.Stats(); st.Blobs != 1 || st.Hits != 0 || st.Misses != 0 {
		t.Fatalf("stats after own reads %+v, want the one put blob and no hits or misses", st)
	}
	c.Forget(dk)
	if _, mem := readOwn(dk); mem {
		t.Fatal("a forgotten blob is still read from memory")
	}
	if _, err := c.Read(context.Background(), s, "sha256:"+strings.Repeat("0", 64)); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Fatalf("missing blob: %v, want ENOTFOUND", err)
	}
	var nilCache *smallblobs.Cache
	if got, mem := func() ([]byte, bool) {
		b, err := nilCache.Read(context.Background(), s, do)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		data, _ := io.ReadAll(b)
		_, mem := b.(*smallblobs.Reader)
		return data, mem
	}(); !bytes.Equal(got, other) || mem {
		t.Fatalf("nil cache: %q, from memory %v", got, mem)
	}
}
