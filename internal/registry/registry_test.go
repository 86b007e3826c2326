package registry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/blob"
	"github.com/chartctl/chartctl/internal/bolt"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/ratelimit"
	"github.com/chartctl/chartctl/internal/registry"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/server"
)

// env is a real chartctl server (bbolt file and blob directory in a temp
// dir, the real router on 127.0.0.1) with the registry mounted at /v2.
type env struct {
	*testkit.Server
	Reg *registry.Registry
}

type regOption func(*registry.Registry)

// unkeyedSessions makes the registry store every upload session when it
// starts (no SessionKey), as a replica without a shared secrets key does.
func unkeyedSessions(r *registry.Registry) { r.SessionKey = nil }

// setup starts a real server (testkit: bbolt file and blob directory in a
// temp dir, the real router on 127.0.0.1) with the registry mounted on it
// through the server's Extra hook, on the server's application layer,
// credential resolution and rate limits.
func setup(tb testing.TB, opts ...regOption) *env {
	tb.Helper()
	return setupServer(tb, nil, opts...)
}

func setupServer(tb testing.TB, srvOpt func(*server.Server), opts ...regOption) *env {
	tb.Helper()
	e := &env{}
	e.Server = testkit.StartServer(tb, func(s *server.Server) {
		s.Config.GlobalLimit = ratelimit.Limit{N: 1 << 30, Window: time.Hour}
		s.Config.UploadLimit = ratelimit.Limit{N: 1 << 30, Window: time.Hour}
		if srvOpt != nil {
			srvOpt(s)
		}
		s.Extra = func(ec *echo.Echo) {
			db := s.Store.(*bolt.DB)
			blobs := s.Blobs.(*blob.Store)
			e.Reg = registry.New(s.App(), db, blobs, filepath.Join(filepath.Dir(blobs.Root()), "uploads"))
			e.Reg.Auth, e.Reg.Limits, e.Reg.Uploads = s, s, s
			e.Reg.SessionKey = []byte("registry tests: upload session key")
			for _, o := range opts {
				o(e.Reg)
			}
			e.Reg.Register(ec)
			e.Reg.RegisterAdmin(s.API())
		}
	})
	return e
}

// do sends a request to the server with HTTP Basic (password = key) when
// key is set.
func (e *env) do(tb testing.TB, method, path, key string, body []byte, header ...string) *testkit.Response {
	tb.Helper()
	r, err := e.try(method, path, key, body, header...)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// try is do for other goroutines than the test's: it returns the error.
func (e *env) try(method, path, key string, body []byte, header ...string) (*testkit.Response, error) {
	req, err := http.NewRequest(method, e.URL+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if key != "" {
		req.SetBasicAuth("anyone", key)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return &testkit.Response{Response: resp, Body: b}, err
}

func ociCode(r *testkit.Response) string {
	var e struct {
		Errors []struct{ Code string } `json:"errors"`
	}
	_ = json.Unmarshal(r.Body, &e)
	if len(e.Errors) == 0 {
		return ""
	}
	return e.Errors[0].Code
}

func TestPingAndToken(t *testing.T) {
	e := setup(t)
	r := e.do(t, "GET", "/v2/", "", nil)
	if r.StatusCode != 401 || !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), `Bearer realm="`+e.URL+`/v2/token",service="`) {
		t.Fatalf("anonymous ping: %d %q", r.StatusCode, r.Header.Get("WWW-Authenticate"))
	}
	if ociCode(r) != "UNAUTHORIZED" {
		t.Fatalf("code %s", r.Body)
	}
	if r := e.do(t, "GET", "/v2/", e.AdminKey, nil); r.StatusCode != 200 {
		t.Fatalf("basic ping: %d %s", r.StatusCode, r.Body)
	}
	if r := e.do(t, "GET", "/v2/", "chartctl_bogus", nil); r.StatusCode != 401 {
		t.Fatalf("bad key ping: %d", r.StatusCode)
	}
	r = e.do(t, "GET", "/v2/token?service=x&scope=repository:a/b:pull,push", e.AdminKey, nil)
	var tok struct {
		Token       string `json:"token"`
		AccessToken string `json:"access_token"`
		ExpiresIn   int    `json:"expires_in"`
	}
	r.JSON(t, &tok)
	if r.StatusCode != 200 || tok.Token == "" || tok.Token != tok.AccessToken || tok.ExpiresIn <= 0 {
		t.Fatalf("token: %d %s", r.StatusCode, r.Body)
	}
	req, _ := http.NewRequest("GET", e.URL+"/v2/", nil)
	req.Header.Set("Authorization", "Bearer "+tok.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("bearer ping: %d", resp.StatusCode)
	}
}

func mustRepoIn(tb testing.TB, e *env, name, visibility string) {
	tb.Helper()
	e.MustRepo(tb, name, visibility)
}

func TestStoreNamesAreChecked(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	if _, err := e.Store.Repository(ctx, "nope"); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Fatal(err)
	}
	r := e.do(t, "GET", "/v2/nope/app/tags/list", e.AdminKey, nil)
	if r.StatusCode != 404 || ociCode(r) != "NAME_UNKNOWN" {
		t.Fatalf("unknown repository: %d %s", r.StatusCode, r.Body)
	}
	r = e.do(t, "GET", "/v2/nope/app/tags/list", "", nil)
	if r.StatusCode != 401 {
		t.Fatalf("unknown repository, anonymous: %d %s", r.StatusCode, r.Body)
	}
}
