package httpx_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/httpx"
)

// readerFromRecorder is the connection's ResponseWriter with a record of
// what its ReadFrom was handed, to see whether a body went to the socket
// as a file (sendfile) or through user space.
type readerFromRecorder struct {
	http.ResponseWriter
	mu      sync.Mutex
	sources []string
}

func (w *readerFromRecorder) ReadFrom(src io.Reader) (int64, error) {
	kind := fmt.Sprintf("%T", src)
	if lr, ok := src.(*io.LimitedReader); ok {
		kind += " of " + fmt.Sprintf("%T", lr.R)
	}
	w.mu.Lock()
	w.sources = append(w.sources, kind)
	w.mu.Unlock()
	return w.ResponseWriter.(io.ReaderFrom).ReadFrom(src)
}

// TestIdleFileGoesBySendfile: a file served as an IdleFile (a registry
// blob with an idle timeout) reaches the connection as the *os.File
// itself, chunk by chunk, with the deadline extended before every chunk;
// the bytes, a Range and a HEAD come out as http.ServeContent answers
// them.
func TestIdleFileGoesBySendfile(t *testing.T) {
	content := bytes.Repeat([]byte("0123456789abcdef"), (9<<20)/16+7) // 9 MiB and a bit: three chunks
	path := filepath.Join(t.TempDir(), "blob")
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
	var (
		mu      sync.Mutex
		extends int
		rec     *readerFromRecorder
	)
	e := echo.New()
	e.Match([]string{http.MethodGet, http.MethodHead}, "/blob", func(c echo.Context) error {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		mu.Lock()
		rec = &readerFromRecorder{ResponseWriter: c.Response().Writer}
		mu.Unlock()
		c.Response().Writer = rec
		c.Response().Header().Set("Content-Type", "application/octet-stream")
		httpx.ServeContent(c, &httpx.IdleFile{File: f, Extend: func() {
			mu.Lock()
			extends++
			mu.Unlock()
		}})
		return nil
	})
	srv := httptest.NewServer(e)
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/blob")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || !bytes.Equal(body, content) {
		t.Fatalf("GET: %d, %d bytes (want %d), %v", resp.StatusCode, len(body), len(content), err)
	}
	mu.Lock()
	if extends != 3 {
		t.Errorf("deadline extended %d times for a body of three chunks, want 3", extends)
	}
	for _, s := range rec.sources {
		if s != "*io.LimitedReader of *os.File" {
			t.Errorf("the connection was handed %s, not the file (no sendfile)", s)
		}
	}
	if len(rec.sources) != 3 {
		t.Errorf("the connection was handed %d readers, want one per chunk (3): %q", len(rec.sources), rec.sources)
	}
	mu.Unlock()

	req, _ := http.NewRequest("GET", srv.URL+"/blob", nil)
	req.Header.Set("Range", "bytes=5000000-5000009")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusPartialContent || !bytes.Equal(body, content[5000000:5000010]) {
		t.Fatalf("Range: %d %q", resp.StatusCode, body)
	}
	resp, err = http.Head(srv.URL + "/blob")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.ContentLength != int64(len(content)) {
		t.Fatalf("HEAD: %d, length %d", resp.StatusCode, resp.ContentLength)
	}
}
