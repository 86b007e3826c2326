package web_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/blob"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/oauth"
	"github.com/chartctl/chartctl/internal/oauth/oauthtest"
	"github.com/chartctl/chartctl/internal/postgres"
	"github.com/chartctl/chartctl/internal/testkit/pgtest"
	"github.com/chartctl/chartctl/server"
)

// startReplica starts a server with the dashboard and the authorization
// server over the shared PostgreSQL store db, as one replica of
// `serve --database-url` is, and returns its URL.
func startReplica(t *testing.T, db *postgres.DB, clock *oauthtest.Clock) string {
	t.Helper()
	blobs, err := blob.Open(filepath.Join(t.TempDir(), "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New(db, blobs)
	srv.Extra = func(e *echo.Echo) {
		oauth.Mount(e, srv, db, oauth.Config{Logger: srv.Logger, RateLimits: db.RateLimits(nil), Now: clock.Now})
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Open(ln); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv.URL()
}

func postDeviceForm(t *testing.T, base, path string, form url.Values) (int, map[string]any) {
	t.Helper()
	resp, err := http.PostForm(base+path, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	out := map[string]any{}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s: %d %s", path, resp.StatusCode, b)
	}
	return resp.StatusCode, out
}

// A device code issued by replica A, approved through replica B's page,
// is redeemed by polling replica A, and refused on B after that: device
// codes live in the shared store (CONTRACT §18 decision 22).
func TestDeviceCodeOnEveryReplica(t *testing.T) {
	db, err := postgres.Open(context.Background(), pgtest.Shared(t).NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	hash, err := app.HashPassword("correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.CreateUser(context.Background(), &chartctl.User{Email: "ada@example.com", PasswordHash: hash}); err != nil {
		t.Fatal(err)
	}
	clock := oauthtest.NewClock()
	a, b := startReplica(t, db, clock), startReplica(t, db, clock)

	status, start := postDeviceForm(t, a, "/oauth/device_authorization", url.Values{"client_id": {oauth.BuiltinClientID}, "scope": {"repo:read"}})
	if status != http.StatusOK {
		t.Fatalf("device_authorization on A: %d %v", status, start)
	}
	dc, uc := start["device_code"].(string), start["user_code"].(string)
	poll := func(base string) (int, map[string]any) {
		return postDeviceForm(t, base, "/oauth/token", url.Values{"grant_type": {oauth.DeviceGrantType}, "client_id": {oauth.BuiltinClientID}, "device_code": {dc}})
	}
	if s, body := poll(b); s != http.StatusBadRequest || body["error"] != "authorization_pending" {
		t.Fatalf("poll on B before approval: %d %v", s, body)
	}

	br := oauthtest.NewBrowserAt(t, b)
	br.SignIn(t, "ada@example.com", "correct horse battery")
	if p := br.AnswerDevice(t, uc, "approve"); !strings.Contains(p.Body, "Device connected") {
		t.Fatalf("approve on B: %d %s", p.StatusCode, p.Body)
	}
	// A poll on A right after B's counts against the interval both
	// replicas read from the store.
	if s, body := poll(a); s != http.StatusBadRequest || body["error"] != "slow_down" {
		t.Fatalf("poll on A within the interval of B's: %d %v", s, body)
	}
	clock.Advance(oauth.DeviceInterval + 6*time.Second)
	s, tok := poll(a)
	if s != http.StatusOK || tok["access_token"] == "" {
		t.Fatalf("poll on A after approval on B: %d %v", s, tok)
	}
	if s, body := poll(b); s != http.StatusBadRequest || body["error"] != "invalid_grant" {
		t.Fatalf("second redemption on B: %d %v", s, body)
	}
}
