package client

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/iotest"
)

// receivedUpload is what the test server read from one upload request.
type receivedUpload struct {
	chart, prov             []byte
	chartName, provName     string
	query                   url.Values
	contentType, authHeader string
}

// uploadServer registers a handler for uploads to repo "stable" that parses
// the multipart form and answers with status(n) for the n-th request (from
// 1), recording what each request carried.
func uploadServer(t *testing.T, e *testEnv, status func(n int) int) func() []receivedUpload {
	t.Helper()
	var mu sync.Mutex
	var got []receivedUpload
	e.mux.HandleFunc("POST /v1/repositories/stable/charts", func(w http.ResponseWriter, r *http.Request) {
		rec := receivedUpload{query: r.URL.Query(), contentType: r.Header.Get("Content-Type"), authHeader: r.Header.Get("Authorization")}
		mr, err := r.MultipartReader()
		if err != nil {
			t.Errorf("multipart reader: %v", err)
			http.Error(w, "bad", http.StatusBadRequest)
			return
		}
		for {
			p, err := mr.NextPart()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Errorf("next part: %v", err)
				return
			}
			data, err := io.ReadAll(p)
			if err != nil {
				t.Errorf("read part: %v", err)
				return
			}
			switch p.FormName() {
			case "chart":
				rec.chart, rec.chartName = data, p.FileName()
			case "prov":
				rec.prov, rec.provName = data, p.FileName()
			default:
				t.Errorf("unexpected field %q", p.FormName())
			}
		}
		mu.Lock()
		got = append(got, rec)
		n := len(got)
		mu.Unlock()
		if s := status(n); s != http.StatusOK {
			if s == http.StatusTooManyRequests {
				w.Header().Set("Retry-After", "1")
			}
			writeError(w, s, CodeForStatus(s), http.StatusText(s))
			return
		}
		writeData(t, w, ChartUpload{Name: "nginx", Version: "1.2.3", Digest: "sha256:ab", Size: int64(len(rec.chart)), CreatedAt: created}, nil)
	})
	return func() []receivedUpload {
		mu.Lock()
		defer mu.Unlock()
		return append([]receivedUpload(nil), got...)
	}
}

func always(status int) func(int) int { return func(int) int { return status } }

// archiveBytes is a stand-in archive, larger than one copy buffer so that
// progress is reported more than once.
func archiveBytes() []byte {
	return bytes.Repeat([]byte("chart-archive-bytes-"), 10_000)
}

func TestUploadStreamsMultipart(t *testing.T) {
	e := setup(t)
	received := uploadServer(t, e, always(http.StatusOK))
	archive := archiveBytes()
	prov := []byte("-----BEGIN PGP SIGNED MESSAGE-----")
	up, resp, err := e.client.Charts.Upload(t.Context(), "stable", bytes.NewReader(archive), &UploadOptions{
		Filename: "nginx-1.2.3.tgz",
		Prov:     bytes.NewReader(prov),
		Force:    true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if up.Name != "nginx" || up.Version != "1.2.3" || up.Digest != "sha256:ab" || up.Size != int64(len(archive)) {
		t.Errorf("upload = %+v", up)
	}
	if resp.StatusCode != http.StatusOK {
		t.Errorf("status = %d", resp.StatusCode)
	}
	got := received()
	if len(got) != 1 {
		t.Fatalf("%d requests", len(got))
	}
	r := got[0]
	if !bytes.Equal(r.chart, archive) || r.chartName != "nginx-1.2.3.tgz" {
		t.Errorf("chart part: %d bytes named %q", len(r.chart), r.chartName)
	}
	if !bytes.Equal(r.prov, prov) || r.provName != "nginx-1.2.3.tgz.prov" {
		t.Errorf("prov part: %q named %q", r.prov, r.provName)
	}
	if r.query.Get("force") != "true" {
		t.Errorf("query = %v", r.query)
	}
	if mt, _, _ := mime.ParseMediaType(r.contentType); mt != "multipart/form-data" {
		t.Errorf("Content-Type = %q", r.contentType)
	}
	if r.authHeader != "Bearer secret-token" {
		t.Errorf("Authorization = %q", r.authHeader)
	}
}

func TestUploadFileNameAndNoForce(t *testing.T) {
	e := setup(t)
	received := uploadServer(t, e, always(http.StatusOK))
	path := filepath.Join(t.TempDir(), "mychart-0.1.0.tgz")
	if err := os.WriteFile(path, archiveBytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, _, err := e.client.Charts.Upload(t.Context(), "stable", f, nil); err != nil {
		t.Fatal(err)
	}
	r := received()[0]
	if r.chartName != "mychart-0.1.0.tgz" || r.prov != nil || r.query.Has("force") {
		t.Errorf("name %q, prov %q, query %v", r.chartName, r.prov, r.query)
	}
	if !bytes.Equal(r.chart, archiveBytes()) {
		t.Error("file content differs")
	}
}

func TestUploadProgress(t *testing.T) {
	e := setup(t)
	uploadServer(t, e, always(http.StatusOK))
	archive := archiveBytes()
	for name, tc := range map[string]struct {
		r         io.Reader
		size      int64
		wantTotal int64
	}{
		"seeker measured":  {bytes.NewReader(archive), 0, int64(len(archive))},
		"size given":       {io.MultiReader(bytes.NewReader(archive)), int64(len(archive)), int64(len(archive))},
		"unknown size":     {io.MultiReader(bytes.NewReader(archive)), 0, -1},
		"one byte at time": {iotest.OneByteReader(bytes.NewReader(archive[:100])), 100, 100},
	} {
		var calls [][2]int64
		_, _, err := e.client.Charts.Upload(t.Context(), "stable", tc.r, &UploadOptions{
			Size:     tc.size,
			Progress: func(sent, total int64) { calls = append(calls, [2]int64{sent, total}) },
		})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(calls) < 2 {
			t.Fatalf("%s: %d progress calls", name, len(calls))
		}
		if calls[0][0] != 0 {
			t.Errorf("%s: first call %v, want sent 0", name, calls[0])
		}
		for i, c := range calls {
			if c[1] != tc.wantTotal {
				t.Errorf("%s: call %d total = %d, want %d", name, i, c[1], tc.wantTotal)
			}
			if i > 0 && c[0] < calls[i-1][0] {
				t.Errorf("%s: progress went back: %v after %v", name, c, calls[i-1])
			}
		}
		wantLast := tc.wantTotal
		if wantLast < 0 {
			wantLast = int64(len(archive))
		}
		if last := calls[len(calls)-1][0]; last != wantLast {
			t.Errorf("%s: last sent = %d, want %d", name, last, wantLast)
		}
	}
}

func TestUploadRetriedOn429WhenSeekable(t *testing.T) {
	e := setup(t)
	received := uploadServer(t, e, func(n int) int {
		if n == 1 {
			return http.StatusTooManyRequests
		}
		return http.StatusOK
	})
	archive := archiveBytes()
	// Start mid-stream: a retry must rewind to here, not to 0.
	r := bytes.NewReader(append([]byte("ignored"), archive...))
	if _, err := r.Seek(int64(len("ignored")), io.SeekStart); err != nil {
		t.Fatal(err)
	}
	prov := strings.NewReader("signature")
	var sentTotal atomic.Int64
	up, _, err := e.client.Charts.Upload(t.Context(), "stable", r, &UploadOptions{
		Prov:     prov,
		Progress: func(sent, total int64) { sentTotal.Store(total) },
	})
	if err != nil {
		t.Fatal(err)
	}
	got := received()
	if len(got) != 2 {
		t.Fatalf("%d requests, want 2", len(got))
	}
	for i, g := range got {
		if !bytes.Equal(g.chart, archive) || string(g.prov) != "signature" {
			t.Errorf("attempt %d: chart %d bytes, prov %q", i+1, len(g.chart), g.prov)
		}
	}
	if up.Size != int64(len(archive)) || sentTotal.Load() != int64(len(archive)) {
		t.Errorf("size %d, progress total %d", up.Size, sentTotal.Load())
	}
	if len(e.recordedSleeps()) != 1 {
		t.Errorf("sleeps = %v", e.recordedSleeps())
	}
}

func TestUploadNotRetriedWhenNotReplayable(t *testing.T) {
	e := setup(t)
	received := uploadServer(t, e, always(http.StatusTooManyRequests))
	// A plain io.Reader (a pipe, say) cannot be read twice.
	_, _, err := e.client.Charts.Upload(t.Context(), "stable", io.MultiReader(bytes.NewReader(archiveBytes())), nil)
	if !IsRateLimited(err) {
		t.Fatalf("err = %v", err)
	}
	if n := len(received()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
	// Neither can a seekable archive with a non-seekable provenance file.
	_, _, err = e.client.Charts.Upload(t.Context(), "stable", bytes.NewReader(archiveBytes()), &UploadOptions{Prov: io.MultiReader(strings.NewReader("sig"))})
	if !IsRateLimited(err) {
		t.Fatalf("err = %v", err)
	}
	if n := len(received()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

func TestUploadNotRetriedOn503(t *testing.T) {
	e := setup(t)
	received := uploadServer(t, e, always(http.StatusServiceUnavailable))
	_, _, err := e.client.Charts.Upload(t.Context(), "stable", bytes.NewReader(archiveBytes()), nil)
	if !isUnavailable(err) {
		t.Fatalf("err = %v", err)
	}
	if n := len(received()); n != 1 {
		t.Errorf("%d requests: an upload was retried on 503", n)
	}
}

func TestUploadConflict(t *testing.T) {
	e := setup(t)
	uploadServer(t, e, always(http.StatusConflict))
	_, resp, err := e.client.Charts.Upload(t.Context(), "stable", bytes.NewReader([]byte("x")), nil)
	if !IsConflict(err) || resp == nil || resp.StatusCode != http.StatusConflict {
		t.Errorf("err = %v, resp = %v", err, resp)
	}
}

func TestUploadSourceError(t *testing.T) {
	e := setup(t)
	e.mux.HandleFunc("POST /v1/repositories/stable/charts", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		writeError(w, http.StatusBadRequest, CodeInvalidParameter, "truncated")
	})
	readErr := errors.New("disk on fire")
	_, _, err := e.client.Charts.Upload(t.Context(), "stable", iotest.ErrReader(readErr), nil)
	if !errors.Is(err, readErr) {
		t.Fatalf("err = %v, want the archive's read error", err)
	}
	if _, _, err := e.client.Charts.Upload(t.Context(), "stable", nil, nil); err == nil {
		t.Error("nil archive accepted")
	}
}

func TestDownload(t *testing.T) {
	e := setup(t)
	archive := archiveBytes()
	e.mux.HandleFunc("GET /v1/repositories/stable/charts/nginx/1.2.3/archive", func(w http.ResponseWriter, r *http.Request) {
		testHeader(t, r, "Authorization", "Bearer secret-token")
		w.Header().Set("Content-Type", "application/gzip")
		w.Header().Set("ETag", `"sha256:ab"`)
		_, _ = w.Write(archive)
	})
	e.mux.HandleFunc("GET /v1/repositories/stable/charts/nginx/9.9.9/archive", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, CodeNotFound, "chart version not found")
	})
	var buf bytes.Buffer
	resp, err := e.client.Charts.Download(t.Context(), "stable", "nginx", "1.2.3", &buf)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), archive) {
		t.Errorf("downloaded %d bytes, want %d", buf.Len(), len(archive))
	}
	if resp.Header.Get("ETag") != `"sha256:ab"` {
		t.Errorf("ETag = %q", resp.Header.Get("ETag"))
	}
	buf.Reset()
	if _, err := e.client.Charts.Download(t.Context(), "stable", "nginx", "9.9.9", &buf); !IsNotFound(err) {
		t.Errorf("err = %v", err)
	}
	if buf.Len() != 0 {
		t.Errorf("a failed download wrote %q", buf.String())
	}
}

func TestDownloadRetriedOn503(t *testing.T) {
	e := setup(t)
	var calls atomic.Int32
	e.mux.HandleFunc("GET /v1/repositories/stable/charts/nginx/1.2.3/archive", func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			writeError(w, http.StatusServiceUnavailable, CodeUnavailable, "storage unreachable")
			return
		}
		_, _ = io.WriteString(w, "tgz")
	})
	var buf bytes.Buffer
	if _, err := e.client.Charts.Download(t.Context(), "stable", "nginx", "1.2.3", &buf); err != nil {
		t.Fatal(err)
	}
	if buf.String() != "tgz" {
		t.Errorf("body = %q: the error body leaked into the download", buf.String())
	}
}
