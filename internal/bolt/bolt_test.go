package bolt_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/bolt"
	"github.com/chartctl/chartctl/internal/chartctl"
)

// testTime is the fixed clock of the tests.
var testTime = time.Date(2025, 3, 14, 15, 9, 26, 0, time.UTC)

// mustOpen opens a store at path with a fixed clock and closes it when the
// test ends.
func mustOpen(tb testing.TB, path string) *bolt.DB {
	tb.Helper()
	db, err := bolt.Open(path, bolt.BatchDelay(time.Millisecond))
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	db.Now = func() time.Time { return testTime }
	tb.Cleanup(func() { _ = db.Close() })
	return db
}

// setup opens a fresh store in a temp dir.
func setup(tb testing.TB) (*bolt.DB, string) {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "chartctl.db")
	return mustOpen(tb, path), path
}

func wantCode(tb testing.TB, err error, code string) {
	tb.Helper()
	if got := chartctl.ErrorCode(err); got != code {
		tb.Fatalf("error code = %q (%v), want %q", got, err, code)
	}
}

func wantMessage(tb testing.TB, err error, msg string) {
	tb.Helper()
	if got := chartctl.ErrorMessage(err); got != msg {
		tb.Fatalf("error message = %q, want %q", got, msg)
	}
}

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
}

func mustUser(tb testing.TB, db *bolt.DB, email string) *chartctl.User {
	tb.Helper()
	u := &chartctl.User{Email: email}
	if err := db.CreateUser(context.Background(), u); err != nil {
		tb.Fatalf("CreateUser(%s): %v", email, err)
	}
	return u
}

func mustOrg(tb testing.TB, db *bolt.DB, name, createdBy string) *chartctl.Organization {
	tb.Helper()
	o := &chartctl.Organization{Name: name, CreatedBy: createdBy}
	if err := db.CreateOrganization(context.Background(), o); err != nil {
		tb.Fatalf("CreateOrganization(%s): %v", name, err)
	}
	return o
}

func mustRepo(tb testing.TB, db *bolt.DB, name, org string) *chartctl.Repository {
	tb.Helper()
	r := &chartctl.Repository{Name: name, Organization: org, OwnerID: "usr_test"}
	if err := db.CreateRepository(context.Background(), r); err != nil {
		tb.Fatalf("CreateRepository(%s): %v", name, err)
	}
	return r
}

func mustTeam(tb testing.TB, db *bolt.DB, name, org string) *chartctl.Team {
	tb.Helper()
	t := &chartctl.Team{Name: name, Organization: org}
	if err := db.CreateTeam(context.Background(), t); err != nil {
		tb.Fatalf("CreateTeam(%s): %v", name, err)
	}
	return t
}

func mustMember(tb testing.TB, db *bolt.DB, team, email string, role chartctl.Role) *chartctl.Member {
	tb.Helper()
	m := &chartctl.Member{Team: team, Email: email, Role: role}
	if err := db.AddMember(context.Background(), m); err != nil {
		tb.Fatalf("AddMember(%s, %s): %v", team, email, err)
	}
	return m
}

// chart returns a chart version record whose archive digest derives from
// content.
func chart(repo, name, version, content string) *chartctl.ChartVersion {
	return &chartctl.ChartVersion{
		Repository: repo,
		Name:       name,
		Version:    version,
		AppVersion: "1.0",
		Digest:     digest(content),
		Size:       int64(len(content)),
		Keywords:   []string{"k"},
		Metadata:   []byte(fmt.Sprintf(`{"name":%q,"version":%q}`, name, version)),
	}
}

func mustPut(tb testing.TB, db *bolt.DB, cv *chartctl.ChartVersion) *chartctl.ChartVersion {
	tb.Helper()
	stored, created, orphans, err := db.PutChartVersion(context.Background(), cv, chartctl.PutVersionOptions{})
	if err != nil {
		tb.Fatalf("PutChartVersion(%s %s): %v", cv.Name, cv.Version, err)
	}
	if !created || len(orphans) != 0 {
		tb.Fatalf("PutChartVersion(%s %s): created=%v orphans=%v", cv.Name, cv.Version, created, orphans)
	}
	return stored
}

func mustReferenced(tb testing.TB, db *bolt.DB, d string, want bool) {
	tb.Helper()
	got, err := db.BlobReferenced(context.Background(), d)
	if err != nil {
		tb.Fatal(err)
	}
	if got != want {
		tb.Fatalf("BlobReferenced(%s) = %v, want %v", d, got, want)
	}
}

func TestOpenCreatesFile(t *testing.T) {
	db, path := setup(t)
	if db.Path() != path {
		t.Fatalf("Path() = %q, want %q", db.Path(), path)
	}
}

func TestOpenFailsInMissingDirectory(t *testing.T) {
	_, err := bolt.Open(filepath.Join(t.TempDir(), "missing", "chartctl.db"))
	if err == nil {
		t.Fatal("Open succeeded")
	}
	if errors.Is(err, bolt.ErrLocked) {
		t.Fatalf("a missing directory reported as locked: %v", err)
	}
}

func TestOpenLocked(t *testing.T) {
	_, path := setup(t)
	// The first handle holds bbolt's exclusive file lock; a second Open of
	// the same file (as a second server process would) gives up.
	db2, err := bolt.Open(path, bolt.LockTimeout(50*time.Millisecond))
	if err == nil {
		_ = db2.Close()
		t.Fatal("second Open succeeded")
	}
	if !errors.Is(err, bolt.ErrLocked) {
		t.Fatalf("err = %v, want ErrLocked", err)
	}
	if !strings.Contains(err.Error(), path) {
		t.Errorf("error %q does not name the file", err)
	}
}

func TestOpenAfterClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chartctl.db")
	db, err := bolt.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db2, err := bolt.Open(path, bolt.LockTimeout(50*time.Millisecond))
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	if err := db2.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestPersistenceAcrossReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "chartctl.db")
	db, err := bolt.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	db.Now = func() time.Time { return testTime }
	u := mustUser(t, db, "Alice@Example.com")
	key := &chartctl.APIKey{UserID: u.ID, Name: "ci", Scopes: chartctl.Scopes{chartctl.ScopeRepoRead}, Hash: []byte("h1")}
	if err := db.CreateAPIKey(ctx, key); err != nil {
		t.Fatal(err)
	}
	mustOrg(t, db, "acme", u.ID)
	mustRepo(t, db, "charts", "acme")
	mustTeam(t, db, "devs", "acme")
	m := mustMember(t, db, "devs", "bob@example.com", chartctl.RoleMaintainer)
	cv := chart("charts", "web", "1.2.3", "web-1.2.3")
	cv.ProvDigest = digest("web-1.2.3.prov")
	mustPut(t, db, cv)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db = mustOpen(t, path)
	if got, err := db.UserByEmail(ctx, "alice@example.com"); err != nil || got.ID != u.ID || got.Email != "Alice@Example.com" {
		t.Fatalf("UserByEmail after reopen = %+v, %v", got, err)
	}
	if got, err := db.APIKeyByHash(ctx, []byte("h1")); err != nil || got.ID != key.ID || got.Scopes.String() != "repo:read" {
		t.Fatalf("APIKeyByHash after reopen = %+v, %v", got, err)
	}
	if got, err := db.ChartVersion(ctx, "charts", "web", "1.2.3"); err != nil || got.Digest != cv.Digest || got.ProvDigest != cv.ProvDigest {
		t.Fatalf("ChartVersion after reopen = %+v, %v", got, err)
	}
	if got, err := db.Member(ctx, "devs", m.ID); err != nil || got.Role != chartctl.RoleMaintainer {
		t.Fatalf("Member after reopen = %+v, %v", got, err)
	}
	roles, err := db.OrgRoles(ctx, "", "bob@example.com")
	if err != nil || roles["acme"] != chartctl.RoleMaintainer {
		t.Fatalf("OrgRoles after reopen = %v, %v", roles, err)
	}
	mustReferenced(t, db, cv.ProvDigest, true)
	if team, err := db.Team(ctx, "devs"); err != nil || team.MemberCount != 1 {
		t.Fatalf("Team after reopen = %+v, %v", team, err)
	}
}

func TestIDsAreTypedAndUnique(t *testing.T) {
	db, _ := setup(t)
	seen := map[string]bool{}
	for i := range 50 {
		u := mustUser(t, db, fmt.Sprintf("u%d@example.com", i))
		if !strings.HasPrefix(u.ID, "usr_") || len(u.ID) != len("usr_")+26 {
			t.Fatalf("user ID %q", u.ID)
		}
		if seen[u.ID] {
			t.Fatalf("duplicate ID %q", u.ID)
		}
		seen[u.ID] = true
	}
	o := mustOrg(t, db, "acme", "")
	r := mustRepo(t, db, "r", "")
	tm := mustTeam(t, db, "t", "acme")
	m := mustMember(t, db, "t", "a@example.com", "")
	k := &chartctl.APIKey{UserID: "", Hash: []byte("x")}
	for id, p := range map[string]string{o.ID: "org_", r.ID: "repo_", tm.ID: "team_", m.ID: "mem_"} {
		if !strings.HasPrefix(id, p) {
			t.Errorf("ID %q lacks prefix %q", id, p)
		}
	}
	u := mustUser(t, db, "keyholder@example.com")
	k.UserID = u.ID
	if err := db.CreateAPIKey(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(k.ID, "key_") {
		t.Errorf("key ID %q", k.ID)
	}
}
