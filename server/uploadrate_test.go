package server_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/httpx"
	"github.com/chartctl/chartctl/internal/ratelimit"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/server"
)

// trickled is a request whose body never finishes: its head and a first
// chunk are sent over TCP, and nothing more.
type trickled struct {
	conn net.Conn
	br   *bufio.Reader
}

// startTrickle sends method path with the Authorization header auth (""
// for none), a chunked body of contentType, and its first chunk.
func startTrickle(t *testing.T, baseURL, method, path, auth, contentType string) *trickled {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(baseURL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	head := method + " " + path + " HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: " + contentType + "\r\n"
	if auth != "" {
		head += "Authorization: " + auth + "\r\n"
	}
	first := "--b\r\nContent-Disposition: form-data; name=\"chart\"; filename=\"c.tgz\"\r\n\r\n\x1f\x8b"
	if _, err := fmt.Fprintf(conn, "%s\r\n%x\r\n%s\r\n", head, len(first), first); err != nil {
		t.Fatal(err)
	}
	// Hang guard only (the upload bound is 5 minutes): the answers below
	// come long before it or not at all.
	_ = conn.SetReadDeadline(time.Now().Add(time.Minute))
	return &trickled{conn: conn, br: bufio.NewReader(conn)}
}

// answer reads the server's answer, failing if the server still waits for
// the body, and checks that it then closes the connection (the handler
// and the connection are freed, not kept for the rest of the body).
func (tr *trickled) answer(t *testing.T) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.ReadResponse(tr.br, nil)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("no answer: the server still waits for the trickled body")
	} else if err != nil {
		t.Fatalf("read answer: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	if _, err := tr.br.ReadByte(); errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("the connection stays open, waiting for the trickled body")
	} else if err == nil {
		t.Fatal("the server sent more after its answer")
	}
	return resp, body
}

// uploadRoutePaths are the upload routes of /v1 and the ChartMuseum API.
var uploadRoutePaths = map[string]string{
	"/v1":         "/v1/repositories/charts/charts",
	"chartmuseum": "/helm/api/charts/charts",
}

// An upload without credentials is refused at once, without its body being
// read: a client trickling a body it was refused no longer holds the
// connection (and a handler) for the read timeout. The minimum rate is off
// here, so nothing but the refusal frees the connection.
func TestUnauthenticatedTrickledUploadIsRefusedAtOnce(t *testing.T) {
	s := testkit.StartServer(t, func(srv *server.Server) { srv.Config.UploadMinRate = httpx.MinRate{} })
	s.MustRepo(t, "charts", "public")
	for proto, path := range uploadRoutePaths {
		t.Run(proto, func(t *testing.T) {
			tr := startTrickle(t, s.URL, "POST", path, "", "multipart/form-data; boundary=b")
			resp, body := tr.answer(t)
			if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" {
				t.Fatalf("unauthenticated trickled upload: %d %s", resp.StatusCode, body)
			}
		})
	}
}

// An authenticated upload body slower than --upload-min-rate is cut with
// 408 in the contract's envelope, and its connection closed.
func TestSlowUploadBodyIsCut(t *testing.T) {
	s := testkit.StartServer(t, func(srv *server.Server) {
		srv.Config.UploadMinRate = httpx.MinRate{Bytes: 16 << 10, Window: 500 * time.Millisecond}
	})
	s.MustRepo(t, "charts", "public")
	for proto, path := range uploadRoutePaths {
		t.Run(proto, func(t *testing.T) {
			tr := startTrickle(t, s.URL, "POST", path, "Bearer "+s.AdminKey, "multipart/form-data; boundary=b")
			resp, body := tr.answer(t)
			var env struct {
				Error struct{ Code, Message string }
			}
			_ = json.Unmarshal(body, &env)
			if resp.StatusCode != http.StatusRequestTimeout {
				t.Fatalf("slow upload: %d %s, want 408", resp.StatusCode, body)
			}
			if proto == "/v1" && (env.Error.Code != "request_timeout" || !strings.Contains(env.Error.Message, "--upload-min-rate")) {
				t.Fatalf("slow upload's error: %s", body)
			}
			if proto == "chartmuseum" && !strings.Contains(string(body), "minimum upload rate") {
				t.Fatalf("slow ChartMuseum upload's error: %s", body)
			}
		})
	}
}

// A credential runs at most --max-concurrent-uploads uploads at once; the
// next is 429 with Retry-After in the contract's envelope, and the slot
// comes back when the running upload ends.
func TestConcurrentUploadsPerCredentialAreCapped(t *testing.T) {
	s := testkit.StartServer(t, func(srv *server.Server) {
		srv.Config.UploadMinRate = httpx.MinRate{}
		srv.Config.MaxConcurrentUploads = 1
		// The loop below uploads until the held upload has its slot; on a
		// loaded machine that can take more than the upload bucket's 100
		// an hour, whose 429 is not the one this test is about.
		srv.Config.UploadLimit = ratelimit.Limit{N: 100000, Window: time.Hour}
	})
	s.MustRepo(t, "charts", "private")
	held := startTrickle(t, s.URL, "POST", uploadRoutePaths["/v1"], "Bearer "+s.AdminKey, "multipart/form-data; boundary=b")
	archive := testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "1.0.0"})
	// The held upload takes its slot once the server reads its head; until
	// then a second upload may still pass, so try until it is refused.
	var r *testkit.Response
	for i := 0; ; i++ {
		r = s.Upload(t, "charts", s.AdminKey, archive, "?force=true")
		if r.StatusCode == http.StatusTooManyRequests || i == 200 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	var env struct {
		Error struct {
			Code       string `json:"code"`
			RetryAfter int    `json:"retry_after"`
		} `json:"error"`
	}
	r.JSON(t, &env)
	if r.StatusCode != http.StatusTooManyRequests || r.Header.Get("Retry-After") != "1" || env.Error.Code != chartctl.ERATELIMIT || env.Error.RetryAfter != 1 {
		t.Fatalf("upload beside a running one: %d %q %s", r.StatusCode, r.Header.Get("Retry-After"), r.Body)
	}
	// Another credential of the same user is not held back.
	other := s.MustKey(t, s.Admin, chartctl.AllScopes...)
	if r := s.Upload(t, "charts", other, archive, "?force=true"); r.StatusCode == http.StatusTooManyRequests {
		t.Fatalf("another credential: %d %s", r.StatusCode, r.Body)
	}
	held.conn.Close()
	for i := 0; ; i++ {
		r = s.Upload(t, "charts", s.AdminKey, archive, "?force=true")
		if r.StatusCode != http.StatusTooManyRequests {
			break
		}
		if i == 500 {
			t.Fatal("the ended upload's slot was not given back")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A client that sends its whole body after the server has already decided
// to refuse it (a bad credential is checked before any read) gets the
// refusal on a connection that stays usable: the server waits briefly for
// the rest of the body instead of closing at once. Closing at once made
// the kernel answer the late body with a reset, and Go's client reported
// "connection reset by peer" instead of the 401 (a CI failure).
func TestRefusedUploadWaitsBrieflyForItsBody(t *testing.T) {
	s := testkit.StartServer(t)
	s.MustRepo(t, "charts", "public")
	body := strings.Repeat("x", 8<<10)
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/repositories/charts/charts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer chartctl_not_a_key\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: %d\r\n\r\n", len(body))
	time.Sleep(100 * time.Millisecond) // the server has refused by now
	if _, err := io.WriteString(conn, body+"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatalf("write body: %v", err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(conn)
	for _, want := range []int{http.StatusUnauthorized, http.StatusOK} {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("want %d: %v (the connection was closed under the body)", want, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != want {
			t.Fatalf("status %d, want %d", resp.StatusCode, want)
		}
	}
}
