package registry_test

import (
	"bufio"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/httpx"
	"github.com/chartctl/chartctl/server"
)

// trickleV2 sends method path with a chunked body of which only a first
// chunk ever arrives, and returns the server's answer and its body. It
// fails if the server still waits for the body, or keeps the connection
// open after answering.
func trickleV2(t *testing.T, e *env, method, path, key string) (*http.Response, string) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	head := method + " " + path + " HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: application/octet-stream\r\n"
	if key != "" {
		head += "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("u:"+key)) + "\r\n"
	}
	if _, err := fmt.Fprintf(conn, "%s\r\n5\r\nhello\r\n", head); err != nil {
		t.Fatal(err)
	}
	// Hang guard only: the answers come long before it or not at all.
	_ = conn.SetReadDeadline(time.Now().Add(time.Minute))
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("no answer: the server still waits for the trickled body")
	} else if err != nil {
		t.Fatalf("read answer: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	if _, err := br.ReadByte(); errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("the connection stays open, waiting for the trickled body")
	} else if err == nil {
		t.Fatal("the server sent more after its answer")
	}
	return resp, string(body)
}

// Blob uploads and manifest PUTs without credentials are refused at once,
// without their body being read (the minimum rate is off, so nothing else
// frees the connection); with credentials, a body slower than
// --upload-min-rate is cut with 408 and an OCI error body.
func TestTrickledBodiesOnV2(t *testing.T) {
	t.Run("unauthenticated", func(t *testing.T) {
		e := setupServer(t, func(s *server.Server) { s.Config.UploadMinRate = httpx.MinRate{} })
		mustRepoIn(t, e, "pub", "public")
		for _, rq := range [][2]string{
			{"POST", "/v2/pub/app/blobs/uploads/?digest=sha256:" + strings.Repeat("0", 64)},
			{"PUT", "/v2/pub/app/manifests/v1"},
		} {
			resp, body := trickleV2(t, e, rq[0], rq[1], "")
			if resp.StatusCode != 401 || !strings.Contains(body, `"UNAUTHORIZED"`) || resp.Header.Get("WWW-Authenticate") == "" {
				t.Fatalf("%s %s: %d %s", rq[0], rq[1], resp.StatusCode, body)
			}
		}
	})
	t.Run("slower than the rate", func(t *testing.T) {
		e := setupServer(t, func(s *server.Server) {
			s.Config.UploadMinRate = httpx.MinRate{Bytes: 16 << 10, Window: 500 * time.Millisecond}
		})
		mustRepoIn(t, e, "priv", "private")
		r := e.do(t, "POST", "/v2/priv/app/blobs/uploads/", e.AdminKey, nil)
		if r.StatusCode != 202 {
			t.Fatalf("start upload: %d %s", r.StatusCode, r.Body)
		}
		for _, rq := range [][3]string{
			{"PATCH", r.Header.Get("Location"), "BLOB_UPLOAD_INVALID"},
			{"POST", "/v2/priv/app/blobs/uploads/?digest=sha256:" + strings.Repeat("0", 64), "BLOB_UPLOAD_INVALID"},
			{"PUT", "/v2/priv/app/manifests/v1", "MANIFEST_INVALID"},
		} {
			resp, body := trickleV2(t, e, rq[0], rq[1], e.AdminKey)
			if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(body, `{"errors":[{"code":"`+rq[2]+`"`) || !strings.Contains(body, "minimum upload rate") {
				t.Fatalf("%s %s: %d %s", rq[0], rq[1], resp.StatusCode, body)
			}
		}
	})
}
