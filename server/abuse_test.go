package server_test

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/ratelimit"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/server"
)

func createKey(t *testing.T, s *testkit.Server, key, name string) *testkit.Response {
	t.Helper()
	return s.DoJSON(t, "POST", "/v1/user/api-keys", key, map[string]any{"name": name, "scopes": []string{"repo:read"}})
}

// Keys are capped per user, so minting keys cannot multiply the per-key
// global limit without bound.
func TestAPIKeysPerUserAreCapped(t *testing.T) {
	s := testkit.StartServer(t, func(srv *server.Server) { srv.Config.MaxKeysPerUser = 3 })
	u := s.MustUser(t, "ci@example.test", false)
	key := s.MustKey(t, u, chartctl.AllScopes...) // the first of three
	for i := range 2 {
		if r := createKey(t, s, key, fmt.Sprint("k", i)); r.StatusCode != 200 {
			t.Fatalf("key %d: %d %s", i, r.StatusCode, r.Body)
		}
	}
	r := createKey(t, s, key, "one-too-many")
	if r.StatusCode != http.StatusForbidden || !strings.Contains(string(r.Body), "revoke one first") {
		t.Fatalf("fourth key: %d %s, want 403 saying to revoke one", r.StatusCode, r.Body)
	}
}

// Key creation has a bucket of its own, per user.
func TestAPIKeyCreationIsRateLimited(t *testing.T) {
	s := testkit.StartServer(t, func(srv *server.Server) { srv.Config.KeyCreateLimit = ratelimit.Limit{N: 2, Window: time.Hour} })
	key := s.MustKey(t, s.MustUser(t, "ci@example.test", false), chartctl.AllScopes...)
	for i := range 2 {
		if r := createKey(t, s, key, fmt.Sprint("k", i)); r.StatusCode != 200 {
			t.Fatalf("key %d: %d %s", i, r.StatusCode, r.Body)
		}
	}
	r := createKey(t, s, key, "third")
	if r.StatusCode != http.StatusTooManyRequests || r.Header.Get("X-RateLimit-Resource") != "keys" {
		t.Fatalf("third key in the window: %d (%s) %s, want 429 from the keys bucket", r.StatusCode, r.Header.Get("X-RateLimit-Resource"), r.Body)
	}
}

// A body trickled to a non-upload route is cut off at the short body
// deadline instead of holding the handler for the upload bound.
func TestSlowBodyOnNonUploadRouteIsCutOff(t *testing.T) {
	s := testkit.StartServer(t, func(srv *server.Server) { srv.Config.BodyTimeout = 300 * time.Millisecond })
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/repositories HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"name\":", s.AdminKey)
	// Hang guard only: the answer must come long before the upload bound.
	_ = conn.SetReadDeadline(time.Now().Add(time.Minute))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Fatal("the server still waits for the slow body")
		}
		return // the connection was closed: cut off
	}
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode < 400 {
		t.Fatalf("slow body: %d, want an error", resp.StatusCode)
	}
}

// With a per-address cap, connections past it are closed at once.
func TestConnectionsPerAddressAreCapped(t *testing.T) {
	s := testkit.StartServer(t, func(srv *server.Server) { srv.Config.MaxConnsPerIP = 2 })
	addr := strings.TrimPrefix(s.URL, "http://")
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	// Let the server accept the two before the third arrives.
	for _, c := range held {
		fmt.Fprint(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
		if _, err := http.ReadResponse(bufio.NewReader(c), nil); err != nil {
			t.Fatalf("held connection: %v", err)
		}
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprint(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	_ = c.SetReadDeadline(time.Now().Add(time.Minute))
	if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
		t.Fatalf("third connection served (%d), want it closed", resp.StatusCode)
	}
	// Closing one frees its slot.
	held[0].Close()
	held = held[1:]
	deadline := time.Now().Add(30 * time.Second)
	for {
		r, err := http.Get(s.URL + "/healthz")
		if err == nil && r.StatusCode == 200 {
			r.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a freed slot was not given back: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// With TLS, the cap sits under it: net/http must see each connection as
// TLS, or it answers an HTTP/2 client's preface as an HTTP/1 request and
// builds http:// URLs for an https:// server.
func TestTLSOverConnectionCap(t *testing.T) {
	ca := testkit.NewCA(t)
	certPEM, keyPEM, _ := ca.Issue(t, "127.0.0.1")
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	s := testkit.StartServer(t, func(srv *server.Server) {
		srv.Config.MaxConnsPerIP = 4
		srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2", "http/1.1"}, MinVersion: tls.VersionTLS12}
		// The scheme a handler derives URLs from (the registry's token
		// realm, the OAuth issuer) comes from the request's TLS state.
		srv.Extra = func(e *echo.Echo) {
			e.GET("/scheme", func(c echo.Context) error { return c.String(http.StatusOK, c.Scheme()) })
		}
	})
	if !strings.HasPrefix(s.URL, "https://") {
		t.Fatalf("server URL %s, want https", s.URL)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool}, ForceAttemptHTTP2: true}}
	resp, err := client.Get(s.URL + "/scheme")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.ProtoMajor != 2 {
		t.Errorf("protocol %s, want HTTP/2 (offered by ALPN)", resp.Proto)
	}
	if string(body) != "https" {
		t.Errorf("a handler sees scheme %q, want https", body)
	}
}
