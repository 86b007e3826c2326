package web_test

import (
	"io"
	"net/http"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/chartctl/chartctl/internal/oauth/oauthtest"
)

// hostileBody yields n bytes of 'a' without allocating them, counting how
// many the client's transport read (and so could have sent).
type hostileBody struct {
	left int64
	read *atomic.Int64
}

func (h *hostileBody) Read(p []byte) (int, error) {
	if h.left <= 0 {
		return 0, io.EOF
	}
	n := int64(len(p))
	if n > h.left {
		n = h.left
	}
	for i := range p[:n] {
		p[i] = 'a'
	}
	h.left -= n
	h.read.Add(n)
	return int(n), nil
}

// post sends a hostile body of n bytes to path; chunked leaves the length
// undeclared. It returns the status, or 0 when the server closed the
// connection before the client finished sending (it refused without
// reading).
func post(t *testing.T, env *oauthtest.Env, path, contentType string, n int64, chunked bool, read *atomic.Int64) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, env.URL+path, &hostileBody{left: n, read: read})
	if err != nil {
		t.Fatal(err)
	}
	if !chunked {
		req.ContentLength = n
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// Regression (unbounded form bodies): POST /signin, /signout,
// /oauth/authorize and the dashboard's key forms parsed bodies of any
// size, multipart included, before any check; 30 posts of 40 MiB took RSS
// to 3.1 GiB. Now they are refused before the body is read.
func TestHostileFormBodiesRefusedUnread(t *testing.T) {
	env := oauthtest.Start(t, oauthtest.Config{})
	const size = 40 << 20
	paths := []string{"/signin", "/signout", "/oauth/authorize", "/oauth/token", "/settings/api-keys", "/settings/api-keys/key_x/revoke"}
	var read atomic.Int64
	for _, path := range paths {
		for _, ct := range []string{"application/x-www-form-urlencoded", "multipart/form-data; boundary=xyz"} {
			want := http.StatusRequestEntityTooLarge
			if ct != "application/x-www-form-urlencoded" {
				want = http.StatusUnsupportedMediaType
			}
			if s := post(t, env, path, ct, size, false, &read); s != want && s != 0 {
				t.Errorf("POST %s %s with 40 MiB declared: %d, want %d", path, ct, s, want)
			}
			if s := post(t, env, path, ct, size, true, &read); s != want && s != http.StatusRequestEntityTooLarge && s != 0 {
				t.Errorf("POST %s %s with 40 MiB chunked: %d, want %d", path, ct, s, want)
			}
		}
	}
	// 24 posts of 80 MiB offered in all; the client got to send a small
	// part of them (what socket buffers hold before the server hangs up).
	if n := read.Load(); n > 400<<20 {
		t.Errorf("the client sent %d MiB of hostile bodies; the server read them", n>>20)
	}
}

// A loop of hostile bodies leaves the heap small: the server allocates
// nothing near the bodies' size. (A sanity bound on bytes allocated, not a
// timing.)
func TestHostileFormBodiesAllocateLittle(t *testing.T) {
	env := oauthtest.Start(t, oauthtest.Config{})
	var read atomic.Int64
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const size = 40 << 20
	for i := range 30 {
		ct := "application/x-www-form-urlencoded"
		if i%2 == 1 {
			ct = "multipart/form-data; boundary=xyz"
		}
		post(t, env, "/signin", ct, size, i%3 == 0, &read)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	if allocated > 64<<20 {
		t.Errorf("30 hostile 40 MiB form posts made the process allocate %d MiB", allocated>>20)
	}
	if grow := int64(after.HeapInuse) - int64(before.HeapInuse); grow > 32<<20 {
		t.Errorf("heap in use grew by %d MiB", grow>>20)
	}
}
