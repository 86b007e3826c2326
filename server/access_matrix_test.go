package server_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/opencontainers/go-digest"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/blob"
	"github.com/chartctl/chartctl/internal/bolt"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/ratelimit"
	"github.com/chartctl/chartctl/internal/registry"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/internal/token"
	"github.com/chartctl/chartctl/server"
)

// The permission matrix (issue #29, STYLE "Permission"): one table of
// (organization role × repository grant × credential × visibility) → the
// answer on list, read, push and delete, checked on every protocol
// alike — /v1, the Helm repository (index.yaml and the archive),
// ChartMuseum's API and the OCI registry — over the real server, bolt in a
// temp dir, the registry mounted as `chartctl serve` mounts it. One row is
// one expectation for every protocol.
//
// The columns:
//   - org: the caller's role in organization acme, which owns the three
//     repositories (through a team of acme); "none" for a user outside
//     it, "admin" for a server admin outside it, "robot" for a robot
//     account of acme, "anonymous" for no credential at all.
//   - grant: a repository grant to the user ("user:ROLE") or to a team of
//     acme the user is in ("team:ROLE", so never with org "none": a team
//     grant goes only to the repository's organization's teams, decision
//     4), on all three repositories.
//   - key: the API key's scopes, "r" (repo:read) or "rw" (repo:read and
//     repo:write), and "@PATTERN" for a key restricted to the repositories
//     PATTERN matches ("acme-*" names them all, "other-*" none of them).
//     For a robot: its permissions (joined by "+") and its one pattern.
//   - vis: the repository's visibility (acme-private, acme-internal,
//     acme-public).
//   - list: whether GET /v1/repositories and the registry's /v2/_catalog
//     show it.
//   - read, push, del: allowed (2xx), hidden (404: the caller may not know
//     it exists) or denied (403: seen, but the scope or role does not
//     allow it). An anonymous caller gets 401 with a challenge instead of
//     404 and 403, and /v1 always answers it 401: the API needs a
//     credential (CONTRACT §6).
//
// Expected, from CONTRACT §18 "Access" and decision 4: member → read,
// maintainer → maintain, owner → admin on the organization's
// repositories; a grant adds to that; pushing and deleting versions need
// write and the repo:write scope; internal repositories are read by every
// signed-in human; a restricted key that does not name a repository sees
// it as an anonymous caller does.

type outcome int

const (
	allowed outcome = iota
	hidden
	denied
)

func (o outcome) String() string { return [...]string{"allowed", "hidden", "denied"}[o] }

const (
	listed   = true
	unlisted = false
)

const (
	vPrivate  = "private"
	vInternal = "internal"
	vPublic   = "public"
)

type matrixRow struct {
	org, grant, key, vis string
	list                 bool
	read, push, del      outcome
}

var accessMatrix = []matrixRow{
	{"none", "", "r", vPrivate, unlisted, hidden, hidden, hidden},
	{"none", "", "r", vInternal, listed, allowed, denied, denied},
	{"none", "", "r", vPublic, listed, allowed, denied, denied},
	{"none", "", "rw", vPrivate, unlisted, hidden, hidden, hidden},
	{"none", "", "rw", vInternal, listed, allowed, denied, denied},
	{"none", "", "rw", vPublic, listed, allowed, denied, denied},
	{"none", "user:read", "r", vPrivate, listed, allowed, denied, denied},
	{"none", "user:read", "r", vInternal, listed, allowed, denied, denied},
	{"none", "user:read", "r", vPublic, listed, allowed, denied, denied},
	{"none", "user:read", "rw", vPrivate, listed, allowed, denied, denied},
	{"none", "user:read", "rw", vInternal, listed, allowed, denied, denied},
	{"none", "user:read", "rw", vPublic, listed, allowed, denied, denied},
	{"none", "user:write", "r", vPrivate, listed, allowed, denied, denied},
	{"none", "user:write", "r", vInternal, listed, allowed, denied, denied},
	{"none", "user:write", "r", vPublic, listed, allowed, denied, denied},
	{"none", "user:write", "rw", vPrivate, listed, allowed, allowed, allowed},
	{"none", "user:write", "rw", vInternal, listed, allowed, allowed, allowed},
	{"none", "user:write", "rw", vPublic, listed, allowed, allowed, allowed},
	{"none", "user:maintain", "r", vPrivate, listed, allowed, denied, denied},
	{"none", "user:maintain", "r", vInternal, listed, allowed, denied, denied},
	{"none", "user:maintain", "r", vPublic, listed, allowed, denied, denied},
	{"none", "user:maintain", "rw", vPrivate, listed, allowed, allowed, allowed},
	{"none", "user:maintain", "rw", vInternal, listed, allowed, allowed, allowed},
	{"none", "user:maintain", "rw", vPublic, listed, allowed, allowed, allowed},
	{"none", "user:admin", "r", vPrivate, listed, allowed, denied, denied},
	{"none", "user:admin", "r", vInternal, listed, allowed, denied, denied},
	{"none", "user:admin", "r", vPublic, listed, allowed, denied, denied},
	{"none", "user:admin", "rw", vPrivate, listed, allowed, allowed, allowed},
	{"none", "user:admin", "rw", vInternal, listed, allowed, allowed, allowed},
	{"none", "user:admin", "rw", vPublic, listed, allowed, allowed, allowed},
	{"member", "", "r", vPrivate, listed, allowed, denied, denied},
	{"member", "", "r", vInternal, listed, allowed, denied, denied},
	{"member", "", "r", vPublic, listed, allowed, denied, denied},
	{"member", "", "rw", vPrivate, listed, allowed, denied, denied},
	{"member", "", "rw", vInternal, listed, allowed, denied, denied},
	{"member", "", "rw", vPublic, listed, allowed, denied, denied},
	{"member", "user:read", "r", vPrivate, listed, allowed, denied, denied},
	{"member", "user:read", "r", vInternal, listed, allowed, denied, denied},
	{"member", "user:read", "r", vPublic, listed, allowed, denied, denied},
	{"member", "user:read", "rw", vPrivate, listed, allowed, denied, denied},
	{"member", "user:read", "rw", vInternal, listed, allowed, denied, denied},
	{"member", "user:read", "rw", vPublic, listed, allowed, denied, denied},
	{"member", "user:write", "r", vPrivate, listed, allowed, denied, denied},
	{"member", "user:write", "r", vInternal, listed, allowed, denied, denied},
	{"member", "user:write", "r", vPublic, listed, allowed, denied, denied},
	{"member", "user:write", "rw", vPrivate, listed, allowed, allowed, allowed},
	{"member", "user:write", "rw", vInternal, listed, allowed, allowed, allowed},
	{"member", "user:write", "rw", vPublic, listed, allowed, allowed, allowed},
	{"member", "user:maintain", "r", vPrivate, listed, allowed, denied, denied},
	{"member", "user:maintain", "r", vInternal, listed, allowed, denied, denied},
	{"member", "user:maintain", "r", vPublic, listed, allowed, denied, denied},
	{"member", "user:maintain", "rw", vPrivate, listed, allowed, allowed, allowed},
	{"member", "user:maintain", "rw", vInternal, listed, allowed, allowed, allowed},
	{"member", "user:maintain", "rw", vPublic, listed, allowed, allowed, allowed},
	{"member", "user:admin", "r", vPrivate, listed, allowed, denied, denied},
	{"member", "user:admin", "r", vInternal, listed, allowed, denied, denied},
	{"member", "user:admin", "r", vPublic, listed, allowed, denied, denied},
	{"member", "user:admin", "rw", vPrivate, listed, allowed, allowed, allowed},
	{"member", "user:admin", "rw", vInternal, listed, allowed, allowed, allowed},
	{"member", "user:admin", "rw", vPublic, listed, allowed, allowed, allowed},
	{"member", "team:read", "r", vPrivate, listed, allowed, denied, denied},
	{"member", "team:read", "r", vInternal, listed, allowed, denied, denied},
	{"member", "team:read", "r", vPublic, listed, allowed, denied, denied},
	{"member", "team:read", "rw", vPrivate, listed, allowed, denied, denied},
	{"member", "team:read", "rw", vInternal, listed, allowed, denied, denied},
	{"member", "team:read", "rw", vPublic, listed, allowed, denied, denied},
	{"member", "team:write", "r", vPrivate, listed, allowed, denied, denied},
	{"member", "team:write", "r", vInternal, listed, allowed, denied, denied},
	{"member", "team:write", "r", vPublic, listed, allowed, denied, denied},
	{"member", "team:write", "rw", vPrivate, listed, allowed, allowed, allowed},
	{"member", "team:write", "rw", vInternal, listed, allowed, allowed, allowed},
	{"member", "team:write", "rw", vPublic, listed, allowed, allowed, allowed},
	{"member", "team:maintain", "r", vPrivate, listed, allowed, denied, denied},
	{"member", "team:maintain", "r", vInternal, listed, allowed, denied, denied},
	{"member", "team:maintain", "r", vPublic, listed, allowed, denied, denied},
	{"member", "team:maintain", "rw", vPrivate, listed, allowed, allowed, allowed},
	{"member", "team:maintain", "rw", vInternal, listed, allowed, allowed, allowed},
	{"member", "team:maintain", "rw", vPublic, listed, allowed, allowed, allowed},
	{"member", "team:admin", "r", vPrivate, listed, allowed, denied, denied},
	{"member", "team:admin", "r", vInternal, listed, allowed, denied, denied},
	{"member", "team:admin", "r", vPublic, listed, allowed, denied, denied},
	{"member", "team:admin", "rw", vPrivate, listed, allowed, allowed, allowed},
	{"member", "team:admin", "rw", vInternal, listed, allowed, allowed, allowed},
	{"member", "team:admin", "rw", vPublic, listed, allowed, allowed, allowed},
	{"maintainer", "", "r", vPrivate, listed, allowed, denied, denied},
	{"maintainer", "", "r", vInternal, listed, allowed, denied, denied},
	{"maintainer", "", "r", vPublic, listed, allowed, denied, denied},
	{"maintainer", "", "rw", vPrivate, listed, allowed, allowed, allowed},
	{"maintainer", "", "rw", vInternal, listed, allowed, allowed, allowed},
	{"maintainer", "", "rw", vPublic, listed, allowed, allowed, allowed},
	{"maintainer", "user:read", "r", vPrivate, listed, allowed, denied, denied},
	{"maintainer", "user:read", "r", vInternal, listed, allowed, denied, denied},
	{"maintainer", "user:read", "r", vPublic, listed, allowed, denied, denied},
	{"maintainer", "user:read", "rw", vPrivate, listed, allowed, allowed, allowed},
	{"maintainer", "user:read", "rw", vInternal, listed, allowed, allowed, allowed},
	{"maintainer", "user:read", "rw", vPublic, listed, allowed, allowed, allowed},
	{"maintainer", "user:write", "r", vPrivate, listed, allowed, denied, denied},
	{"maintainer", "user:write", "r", vInternal, listed, allowed, denied, denied},
	{"maintainer", "user:write", "r", vPublic, listed, allowed, denied, denied},
	{"maintainer", "user:write", "rw", vPrivate, listed, allowed, allowed, allowed},
	{"maintainer", "user:write", "rw", vInternal, listed, allowed, allowed, allowed},
	{"maintainer", "user:write", "rw", vPublic, listed, allowed, allowed, allowed},
	{"maintainer", "user:maintain", "r", vPrivate, listed, allowed, denied, denied},
	{"maintainer", "user:maintain", "r", vInternal, listed, allowed, denied, denied},
	{"maintainer", "user:maintain", "r", vPublic, listed, allowed, denied, denied},
	{"maintainer", "user:maintain", "rw", vPrivate, listed, allowed, allowed, allowed},
	{"maintainer", "user:maintain", "rw", vInternal, listed, allowed, allowed, allowed},
	{"maintainer", "user:maintain", "rw", vPublic, listed, allowed, allowed, allowed},
	{"maintainer", "user:admin", "r", vPrivate, listed, allowed, denied, denied},
	{"maintainer", "user:admin", "r", vInternal, listed, allowed, denied, denied},
	{"maintainer", "user:admin", "r", vPublic, listed, allowed, denied, denied},
	{"maintainer", "user:admin", "rw", vPrivate, listed, allowed, allowed, allowed},
	{"maintainer", "user:admin", "rw", vInternal, listed, allowed, allowed, allowed},
	{"maintainer", "user:admin", "rw", vPublic, listed, allowed, allowed, allowed},
	{"maintainer", "team:read", "r", vPrivate, listed, allowed, denied, denied},
	{"maintainer", "team:read", "r", vInternal, listed, allowed, denied, denied},
	{"maintainer", "team:read", "r", vPublic, listed, allowed, denied, denied},
	{"maintainer", "team:read", "rw", vPrivate, listed, allowed, allowed, allowed},
	{"maintainer", "team:read", "rw", vInternal, listed, allowed, allowed, allowed},
	{"maintainer", "team:read", "rw", vPublic, listed, allowed, allowed, allowed},
	{"maintainer", "team:write", "r", vPrivate, listed, allowed, denied, denied},
	{"maintainer", "team:write", "r", vInternal, listed, allowed, denied, denied},
	{"maintainer", "team:write", "r", vPublic, listed, allowed, denied, denied},
	{"maintainer", "team:write", "rw", vPrivate, listed, allowed, allowed, allowed},
	{"maintainer", "team:write", "rw", vInternal, listed, allowed, allowed, allowed},
	{"maintainer", "team:write", "rw", vPublic, listed, allowed, allowed, allowed},
	{"maintainer", "team:maintain", "r", vPrivate, listed, allowed, denied, denied},
	{"maintainer", "team:maintain", "r", vInternal, listed, allowed, denied, denied},
	{"maintainer", "team:maintain", "r", vPublic, listed, allowed, denied, denied},
	{"maintainer", "team:maintain", "rw", vPrivate, listed, allowed, allowed, allowed},
	{"maintainer", "team:maintain", "rw", vInternal, listed, allowed, allowed, allowed},
	{"maintainer", "team:maintain", "rw", vPublic, listed, allowed, allowed, allowed},
	{"maintainer", "team:admin", "r", vPrivate, listed, allowed, denied, denied},
	{"maintainer", "team:admin", "r", vInternal, listed, allowed, denied, denied},
	{"maintainer", "team:admin", "r", vPublic, listed, allowed, denied, denied},
	{"maintainer", "team:admin", "rw", vPrivate, listed, allowed, allowed, allowed},
	{"maintainer", "team:admin", "rw", vInternal, listed, allowed, allowed, allowed},
	{"maintainer", "team:admin", "rw", vPublic, listed, allowed, allowed, allowed},
	{"owner", "", "r", vPrivate, listed, allowed, denied, denied},
	{"owner", "", "r", vInternal, listed, allowed, denied, denied},
	{"owner", "", "r", vPublic, listed, allowed, denied, denied},
	{"owner", "", "rw", vPrivate, listed, allowed, allowed, allowed},
	{"owner", "", "rw", vInternal, listed, allowed, allowed, allowed},
	{"owner", "", "rw", vPublic, listed, allowed, allowed, allowed},
	{"owner", "user:read", "r", vPrivate, listed, allowed, denied, denied},
	{"owner", "user:read", "r", vInternal, listed, allowed, denied, denied},
	{"owner", "user:read", "r", vPublic, listed, allowed, denied, denied},
	{"owner", "user:read", "rw", vPrivate, listed, allowed, allowed, allowed},
	{"owner", "user:read", "rw", vInternal, listed, allowed, allowed, allowed},
	{"owner", "user:read", "rw", vPublic, listed, allowed, allowed, allowed},
	{"owner", "user:write", "r", vPrivate, listed, allowed, denied, denied},
	{"owner", "user:write", "r", vInternal, listed, allowed, denied, denied},
	{"owner", "user:write", "r", vPublic, listed, allowed, denied, denied},
	{"owner", "user:write", "rw", vPrivate, listed, allowed, allowed, allowed},
	{"owner", "user:write", "rw", vInternal, listed, allowed, allowed, allowed},
	{"owner", "user:write", "rw", vPublic, listed, allowed, allowed, allowed},
	{"owner", "user:maintain", "r", vPrivate, listed, allowed, denied, denied},
	{"owner", "user:maintain", "r", vInternal, listed, allowed, denied, denied},
	{"owner", "user:maintain", "r", vPublic, listed, allowed, denied, denied},
	{"owner", "user:maintain", "rw", vPrivate, listed, allowed, allowed, allowed},
	{"owner", "user:maintain", "rw", vInternal, listed, allowed, allowed, allowed},
	{"owner", "user:maintain", "rw", vPublic, listed, allowed, allowed, allowed},
	{"owner", "user:admin", "r", vPrivate, listed, allowed, denied, denied},
	{"owner", "user:admin", "r", vInternal, listed, allowed, denied, denied},
	{"owner", "user:admin", "r", vPublic, listed, allowed, denied, denied},
	{"owner", "user:admin", "rw", vPrivate, listed, allowed, allowed, allowed},
	{"owner", "user:admin", "rw", vInternal, listed, allowed, allowed, allowed},
	{"owner", "user:admin", "rw", vPublic, listed, allowed, allowed, allowed},
	{"owner", "team:read", "r", vPrivate, listed, allowed, denied, denied},
	{"owner", "team:read", "r", vInternal, listed, allowed, denied, denied},
	{"owner", "team:read", "r", vPublic, listed, allowed, denied, denied},
	{"owner", "team:read", "rw", vPrivate, listed, allowed, allowed, allowed},
	{"owner", "team:read", "rw", vInternal, listed, allowed, allowed, allowed},
	{"owner", "team:read", "rw", vPublic, listed, allowed, allowed, allowed},
	{"owner", "team:write", "r", vPrivate, listed, allowed, denied, denied},
	{"owner", "team:write", "r", vInternal, listed, allowed, denied, denied},
	{"owner", "team:write", "r", vPublic, listed, allowed, denied, denied},
	{"owner", "team:write", "rw", vPrivate, listed, allowed, allowed, allowed},
	{"owner", "team:write", "rw", vInternal, listed, allowed, allowed, allowed},
	{"owner", "team:write", "rw", vPublic, listed, allowed, allowed, allowed},
	{"owner", "team:maintain", "r", vPrivate, listed, allowed, denied, denied},
	{"owner", "team:maintain", "r", vInternal, listed, allowed, denied, denied},
	{"owner", "team:maintain", "r", vPublic, listed, allowed, denied, denied},
	{"owner", "team:maintain", "rw", vPrivate, listed, allowed, allowed, allowed},
	{"owner", "team:maintain", "rw", vInternal, listed, allowed, allowed, allowed},
	{"owner", "team:maintain", "rw", vPublic, listed, allowed, allowed, allowed},
	{"owner", "team:admin", "r", vPrivate, listed, allowed, denied, denied},
	{"owner", "team:admin", "r", vInternal, listed, allowed, denied, denied},
	{"owner", "team:admin", "r", vPublic, listed, allowed, denied, denied},
	{"owner", "team:admin", "rw", vPrivate, listed, allowed, allowed, allowed},
	{"owner", "team:admin", "rw", vInternal, listed, allowed, allowed, allowed},
	{"owner", "team:admin", "rw", vPublic, listed, allowed, allowed, allowed},
	{"admin", "", "r", vPrivate, listed, allowed, denied, denied},
	{"admin", "", "r", vInternal, listed, allowed, denied, denied},
	{"admin", "", "r", vPublic, listed, allowed, denied, denied},
	{"admin", "", "rw", vPrivate, listed, allowed, allowed, allowed},
	{"admin", "", "rw", vInternal, listed, allowed, allowed, allowed},
	{"admin", "", "rw", vPublic, listed, allowed, allowed, allowed},
	{"member", "", "r@acme-*", vPrivate, listed, allowed, denied, denied},
	{"member", "", "r@acme-*", vInternal, listed, allowed, denied, denied},
	{"member", "", "r@acme-*", vPublic, listed, allowed, denied, denied},
	{"member", "", "rw@acme-*", vPrivate, listed, allowed, denied, denied},
	{"member", "", "rw@acme-*", vInternal, listed, allowed, denied, denied},
	{"member", "", "rw@acme-*", vPublic, listed, allowed, denied, denied},
	{"member", "", "r@other-*", vPrivate, unlisted, hidden, hidden, hidden},
	{"member", "", "r@other-*", vInternal, unlisted, hidden, hidden, hidden},
	{"member", "", "r@other-*", vPublic, listed, allowed, denied, denied},
	{"member", "", "rw@other-*", vPrivate, unlisted, hidden, hidden, hidden},
	{"member", "", "rw@other-*", vInternal, unlisted, hidden, hidden, hidden},
	{"member", "", "rw@other-*", vPublic, listed, allowed, denied, denied},
	{"maintainer", "", "r@acme-*", vPrivate, listed, allowed, denied, denied},
	{"maintainer", "", "r@acme-*", vInternal, listed, allowed, denied, denied},
	{"maintainer", "", "r@acme-*", vPublic, listed, allowed, denied, denied},
	{"maintainer", "", "rw@acme-*", vPrivate, listed, allowed, allowed, allowed},
	{"maintainer", "", "rw@acme-*", vInternal, listed, allowed, allowed, allowed},
	{"maintainer", "", "rw@acme-*", vPublic, listed, allowed, allowed, allowed},
	{"maintainer", "", "r@other-*", vPrivate, unlisted, hidden, hidden, hidden},
	{"maintainer", "", "r@other-*", vInternal, unlisted, hidden, hidden, hidden},
	{"maintainer", "", "r@other-*", vPublic, listed, allowed, denied, denied},
	{"maintainer", "", "rw@other-*", vPrivate, unlisted, hidden, hidden, hidden},
	{"maintainer", "", "rw@other-*", vInternal, unlisted, hidden, hidden, hidden},
	{"maintainer", "", "rw@other-*", vPublic, listed, allowed, denied, denied},
	{"robot", "", "pull@acme-*", vPrivate, listed, allowed, denied, denied},
	{"robot", "", "pull@acme-*", vInternal, listed, allowed, denied, denied},
	{"robot", "", "pull@acme-*", vPublic, listed, allowed, denied, denied},
	{"robot", "", "push@acme-*", vPrivate, listed, allowed, allowed, denied},
	{"robot", "", "push@acme-*", vInternal, listed, allowed, allowed, denied},
	{"robot", "", "push@acme-*", vPublic, listed, allowed, allowed, denied},
	{"robot", "", "push+delete@acme-*", vPrivate, listed, allowed, allowed, allowed},
	{"robot", "", "push+delete@acme-*", vInternal, listed, allowed, allowed, allowed},
	{"robot", "", "push+delete@acme-*", vPublic, listed, allowed, allowed, allowed},
	{"robot", "", "pull@other-*", vPrivate, unlisted, hidden, hidden, hidden},
	{"robot", "", "pull@other-*", vInternal, unlisted, hidden, hidden, hidden},
	{"robot", "", "pull@other-*", vPublic, listed, allowed, denied, denied},
	{"robot", "", "push+delete@other-*", vPrivate, unlisted, hidden, hidden, hidden},
	{"robot", "", "push+delete@other-*", vInternal, unlisted, hidden, hidden, hidden},
	{"robot", "", "push+delete@other-*", vPublic, listed, allowed, denied, denied},
	{"anonymous", "", "", vPrivate, unlisted, hidden, hidden, hidden},
	{"anonymous", "", "", vInternal, unlisted, hidden, hidden, hidden},
	{"anonymous", "", "", vPublic, unlisted, allowed, denied, denied},
}

// matrixEnv is the server of the matrix test: organization acme owning
// acme-private, acme-internal and acme-public, each holding chart c
// 1.0.0, and a credential per caller, made on first use.
type matrixEnv struct {
	ts *testkit.Server
	// seedDigest is the OCI manifest digest of c 1.0.0, by repository.
	seedDigest map[string]string
	// keys holds each caller's credential by "org|grant|key".
	keys map[string]string
	// users holds each caller's account by "org|grant": a restricted key
	// belongs to the same account as the unrestricted ones of its row.
	users map[string]*chartctl.User
	n     int
	// seedLost is set when a row deleted a seeded version it should not
	// have.
	seedLost bool
}

func setupMatrix(t *testing.T) *matrixEnv {
	t.Helper()
	ts := testkit.StartServer(t, func(s *server.Server) {
		// Hundreds of requests from one key and one address: the rate
		// limits are not what this test is about.
		s.Config.GlobalLimit = ratelimit.Limit{N: 1 << 30, Window: time.Hour}
		s.Config.UploadLimit = ratelimit.Limit{N: 1 << 30, Window: time.Hour}
		s.Extra = func(e *echo.Echo) {
			blobs := s.Blobs.(*blob.Store)
			reg := registry.New(s.App(), s.Store.(*bolt.DB), blobs, filepath.Join(filepath.Dir(blobs.Root()), "uploads"))
			reg.Auth, reg.Limits, reg.Uploads = s, s, s
			reg.SessionKey = []byte("access matrix: upload session key")
			reg.Register(e)
		}
	})
	m := &matrixEnv{ts: ts, seedDigest: map[string]string{}, keys: map[string]string{}, users: map[string]*chartctl.User{}}
	m.must(t, ts.DoJSON(t, "POST", "/v1/organizations", ts.AdminKey, map[string]string{"name": "acme"}))
	for _, vis := range []string{vPrivate, vInternal, vPublic} {
		repo := "acme-" + vis
		m.must(t, ts.DoJSON(t, "POST", "/v1/repositories", ts.AdminKey, map[string]string{"name": repo, "organization": "acme", "visibility": vis}))
		m.must(t, ts.Upload(t, repo, ts.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "c", Version: "1.0.0"}), ""))
		r := m.do(t, "GET", "/v2/"+repo+"/c/manifests/1.0.0", ts.AdminKey, nil, "Accept", "application/vnd.oci.image.manifest.v1+json")
		if r.StatusCode != http.StatusOK || r.Header.Get("Docker-Content-Digest") == "" {
			t.Fatalf("setup: manifest of %s/c:1.0.0: %d %s", repo, r.StatusCode, r.Body)
		}
		m.seedDigest[repo] = r.Header.Get("Docker-Content-Digest")
	}
	return m
}

func (m *matrixEnv) must(t *testing.T, r *testkit.Response) {
	t.Helper()
	if r.StatusCode != http.StatusOK && r.StatusCode != http.StatusCreated {
		t.Fatalf("setup: %s %s: %d %s", r.Request.Method, r.Request.URL.Path, r.StatusCode, r.Body)
	}
}

// user returns the account of a caller with role org in acme and grant,
// creating it, its team and its grants on first use.
func (m *matrixEnv) user(t *testing.T, org, grant string) *chartctl.User {
	t.Helper()
	id := org + "|" + grant
	if u, ok := m.users[id]; ok {
		return u
	}
	m.n++
	ts := m.ts
	u := ts.MustUser(t, fmt.Sprintf("user%d@example.com", m.n), org == "admin")
	m.users[id] = u
	kind, role, _ := strings.Cut(grant, ":")
	if org != "none" && org != "admin" {
		// The organization role comes from a team of acme; a team grant
		// goes to that same team.
		team := fmt.Sprintf("team%d", m.n)
		m.must(t, ts.DoJSON(t, "POST", "/v1/teams", ts.AdminKey, map[string]string{"name": team, "organization": "acme"}))
		m.must(t, ts.DoJSON(t, "POST", "/v1/teams/"+team+"/members", ts.AdminKey, map[string]string{"email": u.Email, "role": org}))
		if kind == "team" {
			for _, vis := range []string{vPrivate, vInternal, vPublic} {
				m.must(t, ts.DoJSON(t, "POST", "/v1/repositories/acme-"+vis+"/access", ts.AdminKey, map[string]string{"team": team, "role": role}))
			}
		}
	}
	if kind == "user" {
		for _, vis := range []string{vPrivate, vInternal, vPublic} {
			m.must(t, ts.DoJSON(t, "POST", "/v1/repositories/acme-"+vis+"/access", ts.AdminKey, map[string]string{"user": u.Email, "role": role}))
		}
	}
	return u
}

// key returns the credential of row's caller ("" for anonymous).
func (m *matrixEnv) key(t *testing.T, row matrixRow) string {
	t.Helper()
	if row.org == "anonymous" {
		return ""
	}
	id := row.org + "|" + row.grant + "|" + row.key
	if k, ok := m.keys[id]; ok {
		return k
	}
	if row.org == "robot" {
		perms, pattern, _ := strings.Cut(row.key, "@")
		m.n++
		r := m.ts.DoJSON(t, "POST", "/v1/organizations/acme/robots", m.ts.AdminKey, client.CreateRobotRequest{
			Name: fmt.Sprintf("robot%d", m.n), Repositories: []string{pattern}, Permissions: strings.Split(perms, "+")})
		m.must(t, r)
		var created struct{ Data client.Robot }
		r.JSON(t, &created)
		m.keys[id] = created.Data.Secret
		return created.Data.Secret
	}
	scopes, pattern, _ := strings.Cut(row.key, "@")
	u := m.user(t, row.org, row.grant)
	sc := chartctl.Scopes{chartctl.ScopeRepoRead}
	if scopes == "rw" {
		sc = append(sc, chartctl.ScopeRepoWrite)
	}
	v, h := token.New(token.APIKeyPrefix)
	k := &chartctl.APIKey{UserID: u.ID, Name: "matrix", Scopes: sc, Hash: h}
	if pattern != "" {
		k.Repositories = []string{pattern}
	}
	if err := m.ts.Store.CreateAPIKey(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	m.keys[id] = v
	return v
}

// do sends a request to a non-/v1 path with the key as the HTTP Basic
// password, as Helm and OCI clients send it.
func (m *matrixEnv) do(t *testing.T, method, path, key string, body []byte, header ...string) *testkit.Response {
	t.Helper()
	req, err := http.NewRequest(method, m.ts.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.SetBasicAuth("matrix", key)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return &testkit.Response{Response: resp, Body: b}
}

// status is the HTTP status that answers outcome o for the caller.
func status(o outcome, anonymous bool) int {
	switch {
	case o == allowed:
		return http.StatusOK
	case anonymous:
		return http.StatusUnauthorized
	case o == hidden:
		return http.StatusNotFound
	}
	return http.StatusForbidden
}

// TestPermissionMatrix runs every row of accessMatrix on every protocol.
func TestPermissionMatrix(t *testing.T) {
	m := setupMatrix(t)
	for i, row := range accessMatrix {
		name := strings.Join([]string{row.org, orText(row.grant, "no grant"), orText(row.key, "no key"), row.vis}, ",")
		t.Run(name, func(t *testing.T) { m.check(t, i, row) })
		if m.seedLost {
			t.Fatalf("stopped after row %s: the rows after it would only see the missing version", name)
		}
	}
}

func orText(s, empty string) string {
	if s == "" {
		return empty
	}
	return s
}

// check runs one row: list, read, push, then delete on each protocol,
// and reports every answer that differs from the row's.
func (m *matrixEnv) check(t *testing.T, i int, row matrixRow) {
	key := m.key(t, row)
	anon := key == ""
	repo := "acme-" + row.vis
	var problems []string
	expect := func(what string, r *testkit.Response, o outcome) bool {
		want := status(o, anon)
		got := r.StatusCode
		if o == allowed && got >= 200 && got < 300 {
			return true
		}
		if got != want {
			problems = append(problems, fmt.Sprintf("%s: %d, want %d (%s): %.300s", what, got, want, o, r.Body))
			return false
		}
		if got == http.StatusUnauthorized && r.Header.Get("WWW-Authenticate") == "" {
			problems = append(problems, what+": 401 without a WWW-Authenticate challenge")
		}
		return true
	}
	// /v1 needs a credential: an anonymous caller is 401 whatever the row.
	v1 := func(o outcome) outcome {
		if anon {
			return denied
		}
		return o
	}

	// List.
	r := m.ts.Do(t, "GET", "/v1/repositories?limit=100", key, nil)
	if anon {
		expect("v1 list", r, denied)
	} else if expect("v1 list", r, allowed) {
		var body struct{ Data []struct{ Name string } }
		r.JSON(t, &body)
		if got := slices.ContainsFunc(body.Data, func(d struct{ Name string }) bool { return d.Name == repo }); got != row.list {
			problems = append(problems, fmt.Sprintf("v1 list: listed=%v, want %v", got, row.list))
		}
	}
	r = m.do(t, "GET", "/v2/_catalog?n=1000", key, nil)
	if anon {
		// Decision 20: the catalog needs a credential.
		expect("oci catalog", r, denied)
	} else if expect("oci catalog", r, allowed) {
		var body struct{ Repositories []string }
		r.JSON(t, &body)
		if got := slices.Contains(body.Repositories, repo+"/c"); got != row.list {
			problems = append(problems, fmt.Sprintf("oci catalog: listed=%v, want %v", got, row.list))
		}
	}

	// Read.
	expect("v1 download", m.ts.Do(t, "GET", "/v1/repositories/"+repo+"/charts/c/1.0.0/archive", key, nil), v1(row.read))
	expect("helm index", m.do(t, "GET", "/helm/"+repo+"/index.yaml", key, nil), row.read)
	expect("helm download", m.do(t, "GET", "/helm/"+repo+"/charts/c-1.0.0.tgz", key, nil), row.read)
	expect("chartmuseum read", m.do(t, "GET", "/helm/api/"+repo+"/charts/c", key, nil), row.read)
	expect("oci pull", m.do(t, "GET", "/v2/"+repo+"/c/manifests/1.0.0", key, nil, "Accept", "application/vnd.oci.image.manifest.v1+json"), row.read)

	// Push: a version of its own per row and protocol, deleted below when
	// it was pushed; otherwise the delete aims at the seeded 1.0.0.
	version := func(proto int) string { return fmt.Sprintf("1.%d.%d", i+1, proto) }
	pushed := [3]bool{}
	archive := testkit.MakeChart(t, testkit.Chart{Name: "c", Version: version(0)})
	pushed[0] = expect("v1 push", m.ts.Upload(t, repo, key, archive, ""), v1(row.push)) && row.push == allowed && !anon
	body, ctype := testkit.Multipart(t, map[string][]byte{"chart": testkit.MakeChart(t, testkit.Chart{Name: "c", Version: version(1)})})
	pushed[1] = expect("chartmuseum push", m.do(t, "POST", "/helm/api/"+repo+"/charts", key, body, "Content-Type", ctype), row.push) && row.push == allowed
	oc, err := testkit.NewOCIChart("c", version(2), testkit.MakeChart(t, testkit.Chart{Name: "c", Version: version(2)}))
	if err != nil {
		t.Fatal(err)
	}
	pushed[2] = m.ociPush(t, repo, key, oc, row.push, expect) && row.push == allowed

	// Delete.
	target := func(proto int) string {
		if pushed[proto] {
			return version(proto)
		}
		return "1.0.0"
	}
	expect("v1 delete", m.ts.Do(t, "DELETE", "/v1/repositories/"+repo+"/charts/c/"+target(0), key, nil), v1(row.del))
	expect("chartmuseum delete", m.do(t, "DELETE", "/helm/api/"+repo+"/charts/c/"+target(1), key, nil), row.del)
	digest := m.seedDigest[repo]
	if pushed[2] {
		digest = oc.ManifestDigest
	}
	expect("oci delete", m.do(t, "DELETE", "/v2/"+repo+"/c/manifests/"+digest, key, nil), row.del)

	if len(problems) > 0 {
		t.Errorf("%+v:\n\t%s", row, strings.Join(problems, "\n\t"))
	}
	// A wrongly allowed delete of the seeded version would hide every
	// later row's answers behind 404s: stop there.
	if r := m.ts.Do(t, "GET", "/v1/repositories/"+repo+"/charts/c/1.0.0", m.ts.AdminKey, nil); r.StatusCode != http.StatusOK {
		m.seedLost = true
		t.Fatalf("c 1.0.0 of %s is gone (%d): a delete was allowed that should not have been", repo, r.StatusCode)
	}
}

// ociPush pushes oc as an OCI client does (an upload session per blob,
// then the manifest by tag) and checks the answer against o: the first
// refused request's status, or every step's success.
func (m *matrixEnv) ociPush(t *testing.T, repo, key string, oc *testkit.OCIChart, o outcome, expect func(string, *testkit.Response, outcome) bool) bool {
	t.Helper()
	name := "/v2/" + repo + "/" + oc.Name
	for _, b := range [][]byte{oc.Config, oc.Archive} {
		r := m.do(t, "POST", name+"/blobs/uploads/", key, nil)
		if r.StatusCode != http.StatusAccepted {
			return expect("oci push", r, o)
		}
		loc := r.Header.Get("Location")
		sep := "?"
		if strings.Contains(loc, "?") {
			sep = "&"
		}
		if !strings.HasPrefix(loc, "/") {
			loc = strings.TrimPrefix(loc, m.ts.URL)
		}
		r = m.do(t, "PUT", loc+sep+"digest="+digest.FromBytes(b).String(), key, b, "Content-Type", "application/octet-stream")
		if r.StatusCode != http.StatusCreated {
			return expect("oci push blob", r, o)
		}
	}
	r := m.do(t, "PUT", name+"/manifests/"+oc.Tag, key, oc.Manifest, "Content-Type", "application/vnd.oci.image.manifest.v1+json")
	return expect("oci push manifest", r, o)
}
