// Package storetest is the one conformance suite of the metadata store:
// every method of chartctl.Store and chartctl.OAuthStore, the errors each
// documents, the orders it promises and its behaviour under concurrency.
// Every engine (internal/bolt, internal/postgres) runs it unchanged:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) storetest.Store { return open(t) })
//	}
//
// The suite never looks inside an engine. Times are compared to the
// microsecond, the finest precision every engine keeps.
package storetest

import (
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// Store is what an engine provides: the metadata store, the OAuth store
// and the OCI registry's store.
type Store interface {
	chartctl.Store
	chartctl.OAuthStore
	chartctl.OCIStore
}

// Open returns a fresh, empty store for one test; the engine closes it when
// the test ends (t.Cleanup).
type Open func(t *testing.T) Store

// Run runs the whole suite, each part as a subtest with a fresh store.
func Run(t *testing.T, open Open) {
	t.Run("Users", func(t *testing.T) { testUsers(t, open) })
	t.Run("Policies", func(t *testing.T) { testPolicies(t, open) })
	t.Run("VersionPolicies", func(t *testing.T) { testVersionPolicies(t, open) })
	t.Run("UserIdentities", func(t *testing.T) { testUserIdentities(t, open) })
	t.Run("IDPGroups", func(t *testing.T) { testIDPGroups(t, open) })
	t.Run("APIKeys", func(t *testing.T) { testAPIKeys(t, open) })
	t.Run("Organizations", func(t *testing.T) { testOrganizations(t, open) })
	t.Run("Repositories", func(t *testing.T) { testRepositories(t, open) })
	t.Run("ArtifactHub", func(t *testing.T) { testArtifactHub(t, open) })
	t.Run("ChartVersions", func(t *testing.T) { testChartVersions(t, open) })
	t.Run("Provenance", func(t *testing.T) { testProvenance(t, open) })
	t.Run("Ordering", func(t *testing.T) { testOrdering(t, open) })
	t.Run("Orphans", func(t *testing.T) { testOrphans(t, open) })
	t.Run("IndexEntries", func(t *testing.T) { testIndexEntries(t, open) })
	t.Run("IndexEntryJSON", func(t *testing.T) { testIndexEntryJSON(t, open) })
	t.Run("IndexGeneration", func(t *testing.T) { testIndexGeneration(t, open) })
	t.Run("Teams", func(t *testing.T) { testTeams(t, open) })
	t.Run("Members", func(t *testing.T) { testMembers(t, open) })
	t.Run("OrgRoles", func(t *testing.T) { testOrgRoles(t, open) })
	t.Run("OAuthClients", func(t *testing.T) { testOAuthClients(t, open) })
	t.Run("AuthorizationCodes", func(t *testing.T) { testAuthorizationCodes(t, open) })
	t.Run("GrantLimit", func(t *testing.T) { testGrantLimit(t, open) })
	t.Run("RefreshTokens", func(t *testing.T) { testRefreshTokens(t, open) })
	t.Run("Revocation", func(t *testing.T) { testRevocation(t, open) })
	t.Run("WebSessions", func(t *testing.T) { testWebSessions(t, open) })
	t.Run("UserWebSessions", func(t *testing.T) { testUserWebSessions(t, open) })
	t.Run("UserGrants", func(t *testing.T) { testUserGrants(t, open) })
	t.Run("DeleteExpiredOAuth", func(t *testing.T) { testDeleteExpired(t, open) })
	t.Run("DeviceAuthorizations", func(t *testing.T) { testDeviceAuthorizations(t, open) })
	t.Run("HostileKeys", func(t *testing.T) { testHostileKeys(t, open) })
	t.Run("Concurrency", func(t *testing.T) { testConcurrency(t, open) })
	t.Run("UserManagement", func(t *testing.T) { testUserManagement(t, open) })
	t.Run("LastAdmin", func(t *testing.T) { testLastAdmin(t, open) })
	t.Run("NameReservation", func(t *testing.T) { testNameReservation(t, open) })
	t.Run("NeutralNameConflicts", func(t *testing.T) { testNeutralNameConflicts(t, open) })
	t.Run("ContentDigest", func(t *testing.T) { testContentDigest(t, open) })
	t.Run("Images", func(t *testing.T) { testImages(t, open) })
	t.Run("Rendered", func(t *testing.T) { testRendered(t, open) })
	t.Run("SemVerEqual", func(t *testing.T) { testSemVerEqual(t, open) })
	t.Run("RepositoryBinding", func(t *testing.T) { testRepositoryBinding(t, open) })
	t.Run("OCIBlobLinks", func(t *testing.T) { testOCIBlobLinks(t, open) })
	t.Run("OCIManifests", func(t *testing.T) { testOCIManifests(t, open) })
	t.Run("OCIChartManifests", func(t *testing.T) { testOCIChartManifests(t, open) })
	t.Run("OCIChartPushedWithManifest", func(t *testing.T) { testOCIChartPushedWithManifest(t, open) })
	t.Run("OCIChartPushWritesItsChange", func(t *testing.T) { testOCIChartPushWritesItsChange(t, open) })
	t.Run("OCIChartAlternateManifest", func(t *testing.T) { testOCIChartAlternateManifest(t, open) })
	t.Run("ChartTags", func(t *testing.T) { testChartTags(t, open) })
	t.Run("HeldVersions", func(t *testing.T) { testHeldVersions(t, open) })
	t.Run("ChartNames", func(t *testing.T) { testChartNames(t, open) })
	t.Run("OCINamesManyManifests", func(t *testing.T) { testOCINamesManyManifests(t, open) })
	t.Run("OCIUploads", func(t *testing.T) { testOCIUploads(t, open) })
	t.Run("OCIDeleteRepository", func(t *testing.T) { testOCIDeleteRepository(t, open) })
	t.Run("OCIConcurrency", func(t *testing.T) { testOCIConcurrency(t, open) })
	t.Run("Leases", func(t *testing.T) { testLeases(t, open) })
	t.Run("Mirrors", func(t *testing.T) { testMirrors(t, open) })
	t.Run("Proxies", func(t *testing.T) { testProxies(t, open) })
	t.Run("BlobClaims", func(t *testing.T) { testBlobClaims(t, open) })
	t.Run("Grants", func(t *testing.T) { testGrants(t, open) })
	t.Run("GrantsGoWithTheirBinding", func(t *testing.T) { testGrantsGoWithTheirBinding(t, open) })
	t.Run("Robots", func(t *testing.T) { testRobots(t, open) })
	t.Run("Publishers", func(t *testing.T) { testPublishers(t, open) })
	t.Run("TokenIDs", func(t *testing.T) { testTokenIDs(t, open) })
	t.Run("DeleteOrganization", func(t *testing.T) { testDeleteOrganization(t, open) })
	t.Run("AccessRecords", func(t *testing.T) { testAccessRecords(t, open) })
	t.Run("AccessChanges", func(t *testing.T) { testAccessChanges(t, open) })
	t.Run("ListsFollowChanges", func(t *testing.T) { testListsFollowChanges(t, open) })
	runEvents(t, open)
	runReplication(t, open)
}

// Racers is how many goroutines the concurrency tests start at once.
const Racers = 20

// base is the suite's reference time; records get explicit times around it
// so that no test depends on an engine's clock.
var base = time.Date(2026, 1, 2, 3, 4, 5, 123456000, time.UTC)

var ctx = context.Background()

// Digest returns the blob digest of s.
func Digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Digest512 returns the sha512 blob digest of s, as OCI blobs may have.
func Digest512(s string) string {
	sum := sha512.Sum512([]byte(s))
	return "sha512:" + hex.EncodeToString(sum[:])
}

func wantCode(tb testing.TB, err error, code string) {
	tb.Helper()
	if got := chartctl.ErrorCode(err); got != code {
		tb.Fatalf("error code = %q (%v), want %q", got, err, code)
	}
}

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}

// sameTime compares times to the microsecond.
func sameTime(a, b time.Time) bool {
	return a.Truncate(time.Microsecond).Equal(b.Truncate(time.Microsecond))
}

func wantTime(tb testing.TB, what string, got, want time.Time) {
	tb.Helper()
	if !sameTime(got, want) {
		tb.Fatalf("%s = %v, want %v", what, got, want)
	}
}

func sameJSON(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// race runs fn in Racers goroutines released at once and returns their
// errors in goroutine order.
func race(n int, fn func(i int) error) []error {
	errs := make([]error, n)
	var start, done sync.WaitGroup
	start.Add(1)
	for i := range n {
		done.Add(1)
		go func() {
			defer done.Done()
			start.Wait()
			errs[i] = fn(i)
		}()
	}
	start.Done()
	done.Wait()
	return errs
}

// countCodes tallies errors by chartctl code ("" for nil).
func countCodes(errs []error) map[string]int {
	out := map[string]int{}
	for _, err := range errs {
		out[chartctl.ErrorCode(err)]++
	}
	return out
}

func mustUser(tb testing.TB, s Store, email string) *chartctl.User {
	tb.Helper()
	u := &chartctl.User{Email: email}
	must(tb, s.CreateUser(ctx, u))
	return u
}

func mustOrg(tb testing.TB, s Store, name, creator string) *chartctl.Organization {
	tb.Helper()
	o := &chartctl.Organization{Name: name, CreatedBy: creator}
	must(tb, s.CreateOrganization(ctx, o))
	return o
}

func mustRepo(tb testing.TB, s Store, name, org string) *chartctl.Repository {
	tb.Helper()
	r := &chartctl.Repository{Name: name, Organization: org}
	must(tb, s.CreateRepository(ctx, r))
	return r
}

func mustTeam(tb testing.TB, s Store, name, org string) *chartctl.Team {
	tb.Helper()
	tm := &chartctl.Team{Name: name, Organization: org}
	must(tb, s.CreateTeam(ctx, tm))
	return tm
}

// chart returns a complete chart version record with content-derived
// digests.
func chart(repo, name, version string) *chartctl.ChartVersion {
	return &chartctl.ChartVersion{
		Repository: repo, Name: name, Version: version,
		AppVersion: "1.0", Description: "The " + name + " chart",
		Keywords: []string{"web", name},
		Digest:   Digest(repo + "/" + name + "-" + version), Size: 1234,
		CreatedAt:  base,
		Metadata:   json.RawMessage(fmt.Sprintf(`{"apiVersion":"v2","name":%q,"version":%q}`, name, version)),
		IndexEntry: []byte(fmt.Sprintf("name: %s\nversion: %s\n", name, version)),
	}
}

func mustPut(tb testing.TB, s Store, cv *chartctl.ChartVersion) *chartctl.ChartVersion {
	tb.Helper()
	stored, created, _, err := s.PutChartVersion(ctx, cv, chartctl.PutVersionOptions{})
	must(tb, err)
	if !created {
		tb.Fatalf("PutChartVersion(%s %s): created = false, want true", cv.Name, cv.Version)
	}
	return stored
}

// versionsOf renders a listing as "name@version" strings.
func versionsOf(cvs []*chartctl.ChartVersion) []string {
	out := make([]string, len(cvs))
	for i, cv := range cvs {
		out[i] = cv.Name + "@" + cv.Version
	}
	return out
}

func wantStrings(tb testing.TB, what string, got, want []string) {
	tb.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !slices.Equal(got, want) {
		tb.Fatalf("%s = %q, want %q", what, got, want)
	}
}

// wantChart checks every stored field of got against want.
func wantChart(tb testing.TB, got, want *chartctl.ChartVersion) {
	tb.Helper()
	if got.Repository != want.Repository || got.Name != want.Name || got.Version != want.Version ||
		got.AppVersion != want.AppVersion || got.Description != want.Description ||
		got.Digest != want.Digest || got.Size != want.Size || got.ProvDigest != want.ProvDigest {
		tb.Fatalf("chart version = %+v, want %+v", got, want)
	}
	if !slices.Equal(got.Keywords, want.Keywords) && !(len(got.Keywords) == 0 && len(want.Keywords) == 0) {
		tb.Fatalf("keywords = %q, want %q", got.Keywords, want.Keywords)
	}
	if !sameJSON(got.Metadata, want.Metadata) {
		tb.Fatalf("metadata = %s, want %s", got.Metadata, want.Metadata)
	}
	wantTime(tb, "CreatedAt", got.CreatedAt, want.CreatedAt)
}

func testUsers(t *testing.T, open Open) {
	s := open(t)
	n, err := s.UserCount(ctx)
	must(t, err)
	if n != 0 {
		t.Fatalf("UserCount of an empty store = %d", n)
	}

	u := &chartctl.User{Email: "Ada@Example.com", PasswordHash: "$argon2id$x", Admin: true}
	must(t, s.CreateUser(ctx, u))
	if !strings.HasPrefix(u.ID, "usr_") || u.CreatedAt.IsZero() {
		t.Fatalf("CreateUser did not fill ID and CreatedAt: %+v", u)
	}
	got, err := s.User(ctx, u.ID)
	must(t, err)
	if got.ID != u.ID || got.Email != "Ada@Example.com" || got.PasswordHash != u.PasswordHash || !got.Admin {
		t.Fatalf("User = %+v, want %+v", got, u)
	}
	wantTime(t, "CreatedAt", got.CreatedAt, u.CreatedAt)

	for _, email := range []string{"ada@example.com", "ADA@EXAMPLE.COM", " Ada@Example.com "} {
		got, err := s.UserByEmail(ctx, email)
		must(t, err)
		if got.ID != u.ID {
			t.Fatalf("UserByEmail(%q) = %s, want %s", email, got.ID, u.ID)
		}
	}
	_, err = s.UserByEmail(ctx, "nobody@example.com")
	wantCode(t, err, chartctl.ENOTFOUND)
	_, err = s.User(ctx, "usr_missing")
	wantCode(t, err, chartctl.ENOTFOUND)
	_, err = s.User(ctx, "")
	wantCode(t, err, chartctl.ENOTFOUND)

	wantCode(t, s.CreateUser(ctx, &chartctl.User{Email: "ADA@example.COM"}), chartctl.ECONFLICT)
	wantCode(t, s.CreateUser(ctx, &chartctl.User{Email: ""}), chartctl.EINVALID)
	wantCode(t, s.CreateUser(ctx, &chartctl.User{Email: "   "}), chartctl.EINVALID)
	wantCode(t, s.CreateUser(ctx, &chartctl.User{ID: u.ID, Email: "other@example.com"}), chartctl.ECONFLICT)

	at := base.Add(-time.Hour)
	ci := &chartctl.User{ID: "usr_ci", Email: "ci@example.com", CreatedAt: at}
	must(t, s.CreateUser(ctx, ci))
	got, err = s.User(ctx, "usr_ci")
	must(t, err)
	if got.PasswordHash != "" || got.Admin {
		t.Fatalf("service account = %+v", got)
	}
	wantTime(t, "given CreatedAt", got.CreatedAt, at)

	n, err = s.UserCount(ctx)
	must(t, err)
	if n != 2 {
		t.Fatalf("UserCount = %d, want 2", n)
	}
}

func testAPIKeys(t *testing.T, open Open) {
	s := open(t)
	ada := mustUser(t, s, "ada@example.com")
	bob := mustUser(t, s, "bob@example.com")

	wantCode(t, s.CreateAPIKey(ctx, &chartctl.APIKey{UserID: "usr_missing", Name: "x", Hash: []byte("h0")}), chartctl.ENOTFOUND)
	wantCode(t, s.CreateAPIKey(ctx, &chartctl.APIKey{UserID: ada.ID, Name: "x"}), chartctl.EINVALID)

	exp := base.Add(30 * 24 * time.Hour)
	// Created out of order: APIKeys sorts by CreatedAt.
	k2 := &chartctl.APIKey{UserID: ada.ID, Name: "second", Scopes: chartctl.Scopes{chartctl.ScopeRepoRead}, Hash: []byte("h2"), CreatedAt: base.Add(time.Minute)}
	k1 := &chartctl.APIKey{UserID: ada.ID, Name: "first", Scopes: chartctl.Scopes{chartctl.ScopeRepoRead, chartctl.ScopeRepoWrite}, Hash: []byte("h1"), CreatedAt: base, ExpiresAt: &exp}
	k3 := &chartctl.APIKey{UserID: bob.ID, Name: "bob's", Hash: []byte("h3")}
	for _, k := range []*chartctl.APIKey{k2, k1, k3} {
		must(t, s.CreateAPIKey(ctx, k))
		if !strings.HasPrefix(k.ID, "key_") || k.CreatedAt.IsZero() {
			t.Fatalf("CreateAPIKey did not fill ID and CreatedAt: %+v", k)
		}
	}
	wantCode(t, s.CreateAPIKey(ctx, &chartctl.APIKey{UserID: bob.ID, Name: "dup", Hash: []byte("h1")}), chartctl.ECONFLICT)

	got, err := s.APIKeyByHash(ctx, []byte("h1"))
	must(t, err)
	if got.ID != k1.ID || got.UserID != ada.ID || got.Name != "first" || got.Scopes.String() != "repo:read repo:write" ||
		string(got.Hash) != "h1" || got.ExpiresAt == nil || !sameTime(*got.ExpiresAt, exp) || got.LastUsedAt != nil {
		t.Fatalf("APIKeyByHash = %+v, want %+v", got, k1)
	}
	wantTime(t, "CreatedAt", got.CreatedAt, base)
	_, err = s.APIKeyByHash(ctx, []byte("nope"))
	wantCode(t, err, chartctl.ENOTFOUND)
	_, err = s.APIKeyByHash(ctx, nil)
	wantCode(t, err, chartctl.ENOTFOUND)

	keys, err := s.APIKeys(ctx, ada.ID)
	must(t, err)
	if len(keys) != 2 || keys[0].ID != k1.ID || keys[1].ID != k2.ID {
		t.Fatalf("APIKeys = %v, want oldest first [%s %s]", keys, k1.ID, k2.ID)
	}
	keys, err = s.APIKeys(ctx, "usr_missing")
	must(t, err)
	if len(keys) != 0 {
		t.Fatalf("APIKeys of an unknown user = %v", keys)
	}

	// TouchAPIKeys: records, never moves back, skips unknown keys.
	t1 := base.Add(time.Hour)
	must(t, s.TouchAPIKeys(ctx, map[string]time.Time{k1.ID: t1, "key_gone": t1}))
	must(t, s.TouchAPIKeys(ctx, map[string]time.Time{k1.ID: base.Add(time.Minute)}))
	must(t, s.TouchAPIKeys(ctx, nil))
	got, err = s.APIKeyByHash(ctx, []byte("h1"))
	must(t, err)
	if got.LastUsedAt == nil || !sameTime(*got.LastUsedAt, t1) {
		t.Fatalf("LastUsedAt = %v, want %v", got.LastUsedAt, t1)
	}
	t2 := base.Add(2 * time.Hour)
	must(t, s.TouchAPIKeys(ctx, map[string]time.Time{k1.ID: t2, k2.ID: t2}))
	keys, err = s.APIKeys(ctx, ada.ID)
	must(t, err)
	for _, k := range keys {
		if k.LastUsedAt == nil || !sameTime(*k.LastUsedAt, t2) {
			t.Fatalf("key %s LastUsedAt = %v, want %v", k.ID, k.LastUsedAt, t2)
		}
	}

	// DeleteAPIKey only deletes the user's own key.
	wantCode(t, s.DeleteAPIKey(ctx, bob.ID, k1.ID), chartctl.ENOTFOUND)
	must(t, s.DeleteAPIKey(ctx, ada.ID, k1.ID))
	wantCode(t, s.DeleteAPIKey(ctx, ada.ID, k1.ID), chartctl.ENOTFOUND)
	wantCode(t, s.DeleteAPIKey(ctx, ada.ID, "key_missing"), chartctl.ENOTFOUND)
	_, err = s.APIKeyByHash(ctx, []byte("h1"))
	wantCode(t, err, chartctl.ENOTFOUND)
	keys, err = s.APIKeys(ctx, ada.ID)
	must(t, err)
	if len(keys) != 1 || keys[0].ID != k2.ID {
		t.Fatalf("APIKeys after delete = %v", keys)
	}
	// The hash is free again.
	must(t, s.CreateAPIKey(ctx, &chartctl.APIKey{UserID: bob.ID, Name: "reused", Hash: []byte("h1")}))
}

func testOrganizations(t *testing.T, open Open) {
	s := open(t)
	ada := mustUser(t, s, "ada@example.com")
	o := &chartctl.Organization{Name: "acme", Description: "Acme Corp", CreatedBy: ada.ID}
	must(t, s.CreateOrganization(ctx, o))
	if !strings.HasPrefix(o.ID, "org_") || o.CreatedAt.IsZero() {
		t.Fatalf("CreateOrganization did not fill ID and CreatedAt: %+v", o)
	}
	got, err := s.Organization(ctx, "acme")
	must(t, err)
	if got.ID != o.ID || got.Name != "acme" || got.Description != "Acme Corp" || got.CreatedBy != ada.ID {
		t.Fatalf("Organization = %+v, want %+v", got, o)
	}
	wantTime(t, "CreatedAt", got.CreatedAt, o.CreatedAt)
	_, err = s.Organization(ctx, "nope")
	wantCode(t, err, chartctl.ENOTFOUND)
	wantCode(t, s.CreateOrganization(ctx, &chartctl.Organization{Name: "acme"}), chartctl.ECONFLICT)
	wantCode(t, s.CreateOrganization(ctx, &chartctl.Organization{Name: "Bad Name"}), chartctl.EINVALID)
	wantCode(t, s.CreateOrganization(ctx, &chartctl.Organization{Name: ""}), chartctl.EINVALID)

	// Names sort bytewise, the order of the API's listings.
	for _, n := range []string{"zeta", "a-b", "a.b", "a0", "a_b", "ab"} {
		mustOrg(t, s, n, "")
	}
	orgs, err := s.Organizations(ctx)
	must(t, err)
	var names []string
	for _, o := range orgs {
		names = append(names, o.Name)
	}
	wantStrings(t, "Organizations", names, []string{"a-b", "a.b", "a0", "a_b", "ab", "acme", "zeta"})
}

func testRepositories(t *testing.T, open Open) {
	s := open(t)
	ada := mustUser(t, s, "ada@example.com")
	mustOrg(t, s, "acme", ada.ID)

	r := &chartctl.Repository{Name: "charts", Description: "Our charts", OwnerID: ada.ID}
	must(t, s.CreateRepository(ctx, r))
	if !strings.HasPrefix(r.ID, "repo_") || r.CreatedAt.IsZero() || r.Visibility != chartctl.VisibilityPrivate {
		t.Fatalf("CreateRepository did not fill ID, CreatedAt and Visibility: %+v", r)
	}
	got, err := s.Repository(ctx, "charts")
	must(t, err)
	if got.ID != r.ID || got.Description != "Our charts" || got.OwnerID != ada.ID || got.Organization != "" || got.Visibility != chartctl.VisibilityPrivate {
		t.Fatalf("Repository = %+v, want %+v", got, r)
	}
	wantTime(t, "CreatedAt", got.CreatedAt, r.CreatedAt)

	pub := &chartctl.Repository{Name: "acme-public", Organization: "acme", OwnerID: ada.ID, Visibility: chartctl.VisibilityPublic}
	must(t, s.CreateRepository(ctx, pub))
	got, err = s.Repository(ctx, "acme-public")
	must(t, err)
	if got.Organization != "acme" || got.Visibility != chartctl.VisibilityPublic {
		t.Fatalf("Repository = %+v", got)
	}

	wantCode(t, s.CreateRepository(ctx, &chartctl.Repository{Name: "charts"}), chartctl.ECONFLICT)
	wantCode(t, s.CreateRepository(ctx, &chartctl.Repository{Name: "charts", Organization: "missing"}), chartctl.ECONFLICT)
	wantCode(t, s.CreateRepository(ctx, &chartctl.Repository{Name: "other", Organization: "missing"}), chartctl.ENOTFOUND)
	wantCode(t, s.CreateRepository(ctx, &chartctl.Repository{Name: "-bad"}), chartctl.EINVALID)
	wantCode(t, s.CreateRepository(ctx, &chartctl.Repository{Name: "ok", Visibility: "secret"}), chartctl.EINVALID)
	_, err = s.Repository(ctx, "missing")
	wantCode(t, err, chartctl.ENOTFOUND)

	mustRepo(t, s, "a-first", "")
	repos, err := s.Repositories(ctx)
	must(t, err)
	var names []string
	for _, r := range repos {
		names = append(names, r.Name)
	}
	wantStrings(t, "Repositories", names, []string{"a-first", "acme-public", "charts"})

	// Deleting removes the versions; a new repository of the same name
	// starts empty.
	mustPut(t, s, chart("charts", "web", "1.0.0"))
	_, err = s.DeleteRepository(ctx, "missing")
	wantCode(t, err, chartctl.ENOTFOUND)
	orphans, err := s.DeleteRepository(ctx, "charts")
	must(t, err)
	wantStrings(t, "orphans", orphans, []string{Digest("charts/web-1.0.0")})
	_, err = s.Repository(ctx, "charts")
	wantCode(t, err, chartctl.ENOTFOUND)
	_, err = s.ChartVersions(ctx, "charts", chartctl.ChartFilter{})
	wantCode(t, err, chartctl.ENOTFOUND)
	_, err = s.DeleteRepository(ctx, "charts")
	wantCode(t, err, chartctl.ENOTFOUND)
	// Its owner may take the name again at once.
	must(t, s.CreateRepository(ctx, &chartctl.Repository{Name: "charts", OwnerID: ada.ID}))
	cvs, err := s.ChartVersions(ctx, "charts", chartctl.ChartFilter{})
	must(t, err)
	if len(cvs) != 0 {
		t.Fatalf("recreated repository has versions %v", versionsOf(cvs))
	}
	ok, err := s.BlobReferenced(ctx, Digest("charts/web-1.0.0"))
	must(t, err)
	if ok {
		t.Fatal("blob of a deleted repository still referenced")
	}
}

func testChartVersions(t *testing.T, open Open) {
	s := open(t)
	mustRepo(t, s, "charts", "")

	_, _, _, err := s.PutChartVersion(ctx, chart("missing", "web", "1.0.0"), chartctl.PutVersionOptions{})
	wantCode(t, err, chartctl.ENOTFOUND)
	for _, bad := range []func(*chartctl.ChartVersion){
		func(cv *chartctl.ChartVersion) { cv.Name = "" },
		func(cv *chartctl.ChartVersion) { cv.Version = "" },
		func(cv *chartctl.ChartVersion) { cv.Digest = "" },
	} {
		cv := chart("charts", "web", "1.0.0")
		bad(cv)
		_, _, _, err := s.PutChartVersion(ctx, cv, chartctl.PutVersionOptions{})
		wantCode(t, err, chartctl.EINVALID)
	}

	want := chart("charts", "web", "1.0.0")
	stored, created, orphans, err := s.PutChartVersion(ctx, want, chartctl.PutVersionOptions{})
	must(t, err)
	if !created || len(orphans) != 0 {
		t.Fatalf("first put: created=%v orphans=%v", created, orphans)
	}
	wantChart(t, stored, want)

	got, err := s.ChartVersion(ctx, "charts", "web", "1.0.0")
	must(t, err)
	wantChart(t, got, want)

	// CreatedAt is filled when empty.
	noTime := chart("charts", "web", "1.1.0")
	noTime.CreatedAt = time.Time{}
	stored = mustPut(t, s, noTime)
	if stored.CreatedAt.IsZero() {
		t.Fatal("PutChartVersion did not fill CreatedAt")
	}
	got, err = s.ChartVersion(ctx, "charts", "web", "1.1.0")
	must(t, err)
	wantTime(t, "filled CreatedAt", got.CreatedAt, stored.CreatedAt)

	// The same bytes again: the stored record, not created.
	again := chart("charts", "web", "1.0.0")
	again.CreatedAt = base.Add(time.Hour)
	again.Description = "ignored"
	stored, created, _, err = s.PutChartVersion(ctx, again, chartctl.PutVersionOptions{})
	must(t, err)
	if created {
		t.Fatal("identical put: created = true")
	}
	wantChart(t, stored, want)

	// Other bytes: conflict, unless overwriting.
	other := chart("charts", "web", "1.0.0")
	other.Digest = Digest("other bytes")
	other.CreatedAt = base.Add(2 * time.Hour)
	_, _, _, err = s.PutChartVersion(ctx, other, chartctl.PutVersionOptions{})
	wantCode(t, err, chartctl.ECONFLICT)
	stored, created, orphans, err = s.PutChartVersion(ctx, other, chartctl.PutVersionOptions{Overwrite: true})
	must(t, err)
	if !created {
		t.Fatal("overwrite: created = false")
	}
	wantStrings(t, "overwrite orphans", orphans, []string{want.Digest})
	wantChart(t, stored, other)
	got, err = s.ChartVersion(ctx, "charts", "web", "1.0.0")
	must(t, err)
	wantChart(t, got, other)

	// Overwriting with the same digest is the identical case.
	_, created, orphans, err = s.PutChartVersion(ctx, other, chartctl.PutVersionOptions{Overwrite: true})
	must(t, err)
	if created || len(orphans) != 0 {
		t.Fatalf("identical overwrite: created=%v orphans=%v", created, orphans)
	}

	// A record without keywords, metadata or index entry.
	bare := &chartctl.ChartVersion{Repository: "charts", Name: "bare", Version: "0.1.0", Digest: Digest("bare"), Size: 1, CreatedAt: base}
	mustPut(t, s, bare)
	got, err = s.ChartVersion(ctx, "charts", "bare", "0.1.0")
	must(t, err)
	wantChart(t, got, bare)

	_, err = s.ChartVersion(ctx, "charts", "web", "9.9.9")
	wantCode(t, err, chartctl.ENOTFOUND)
	_, err = s.ChartVersion(ctx, "charts", "nope", "1.0.0")
	wantCode(t, err, chartctl.ENOTFOUND)
	_, err = s.ChartVersion(ctx, "missing", "web", "1.0.0")
	wantCode(t, err, chartctl.ENOTFOUND)
	_, err = s.ChartVersion(ctx, "charts", "", "")
	wantCode(t, err, chartctl.ENOTFOUND)

	// Versions are per repository.
	mustRepo(t, s, "other", "")
	_, err = s.ChartVersion(ctx, "other", "web", "1.0.0")
	wantCode(t, err, chartctl.ENOTFOUND)

	// DeleteChartVersion returns the record and the blobs it freed.
	_, _, err = s.DeleteChartVersion(ctx, "charts", "web", "9.9.9")
	wantCode(t, err, chartctl.ENOTFOUND)
	_, _, err = s.DeleteChartVersion(ctx, "missing", "web", "1.0.0")
	wantCode(t, err, chartctl.ENOTFOUND)
	deleted, orphans, err := s.DeleteChartVersion(ctx, "charts", "web", "1.0.0")
	must(t, err)
	wantChart(t, deleted, other)
	wantStrings(t, "delete orphans", orphans, []string{other.Digest})
	_, err = s.ChartVersion(ctx, "charts", "web", "1.0.0")
	wantCode(t, err, chartctl.ENOTFOUND)
	_, _, err = s.DeleteChartVersion(ctx, "charts", "web", "1.0.0")
	wantCode(t, err, chartctl.ENOTFOUND)
	// A deleted version may be uploaded again.
	mustPut(t, s, chart("charts", "web", "1.0.0"))
}

func testProvenance(t *testing.T, open Open) {
	s := open(t)
	mustRepo(t, s, "charts", "")
	cv := chart("charts", "web", "1.0.0")
	mustPut(t, s, cv)

	// Same archive, now with a provenance file: attached to the record,
	// which keeps its CreatedAt.
	withProv := chart("charts", "web", "1.0.0")
	withProv.ProvDigest = Digest("prov 1")
	withProv.CreatedAt = base.Add(time.Hour)
	stored, created, orphans, err := s.PutChartVersion(ctx, withProv, chartctl.PutVersionOptions{})
	must(t, err)
	if !created || len(orphans) != 0 {
		t.Fatalf("attach provenance: created=%v orphans=%v", created, orphans)
	}
	if stored.ProvDigest != withProv.ProvDigest {
		t.Fatalf("ProvDigest = %q", stored.ProvDigest)
	}
	wantTime(t, "CreatedAt after attaching provenance", stored.CreatedAt, base)
	ok, err := s.BlobReferenced(ctx, withProv.ProvDigest)
	must(t, err)
	if !ok {
		t.Fatal("provenance blob not referenced")
	}

	// The same again, or the archive alone: not created.
	for _, p := range []string{withProv.ProvDigest, ""} {
		again := chart("charts", "web", "1.0.0")
		again.ProvDigest = p
		stored, created, _, err = s.PutChartVersion(ctx, again, chartctl.PutVersionOptions{})
		must(t, err)
		if created || stored.ProvDigest != withProv.ProvDigest {
			t.Fatalf("repeat with prov %q: created=%v stored prov=%q", p, created, stored.ProvDigest)
		}
	}

	// Another provenance file: conflict unless overwriting, which frees
	// the old one.
	prov2 := chart("charts", "web", "1.0.0")
	prov2.ProvDigest = Digest("prov 2")
	_, _, _, err = s.PutChartVersion(ctx, prov2, chartctl.PutVersionOptions{})
	wantCode(t, err, chartctl.ECONFLICT)
	stored, created, orphans, err = s.PutChartVersion(ctx, prov2, chartctl.PutVersionOptions{Overwrite: true})
	must(t, err)
	if !created || stored.ProvDigest != prov2.ProvDigest {
		t.Fatalf("replace provenance: created=%v prov=%q", created, stored.ProvDigest)
	}
	wantStrings(t, "replaced provenance orphans", orphans, []string{Digest("prov 1")})
	got, err := s.ChartVersion(ctx, "charts", "web", "1.0.0")
	must(t, err)
	if got.ProvDigest != prov2.ProvDigest {
		t.Fatalf("stored ProvDigest = %q", got.ProvDigest)
	}

	// Deleting frees archive and provenance file.
	_, orphans, err = s.DeleteChartVersion(ctx, "charts", "web", "1.0.0")
	must(t, err)
	want := []string{cv.Digest, prov2.ProvDigest}
	sort.Strings(want)
	wantStrings(t, "orphans", orphans, want)
}

func testOrdering(t *testing.T, open Open) {
	s := open(t)
	mustRepo(t, s, "charts", "")
	mustRepo(t, s, "empty", "")
	put := map[string][]string{
		"alpha":   {"1.2.0", "1.10.0", "0.1.0", "2.0.0-rc.1", "1.9.0", "2.0.0-beta.2", "not-semver", "also-not"},
		"beta":    {"1.0.0"},
		"alpha-x": {"0.0.1", "v0.0.2"},
	}
	var names []string
	for n := range put {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for _, v := range put[n] {
			mustPut(t, s, chart("charts", n, v))
		}
	}
	all := []string{
		"alpha@2.0.0-rc.1", "alpha@2.0.0-beta.2", "alpha@1.10.0", "alpha@1.9.0", "alpha@1.2.0", "alpha@0.1.0",
		"alpha@not-semver", "alpha@also-not",
		"alpha-x@v0.0.2", "alpha-x@0.0.1",
		"beta@1.0.0",
	}
	cvs, err := s.ChartVersions(ctx, "charts", chartctl.ChartFilter{})
	must(t, err)
	wantStrings(t, "ChartVersions", versionsOf(cvs), all)
	for _, cv := range cvs {
		if cv.Digest != Digest("charts/"+cv.Name+"-"+cv.Version) || !sameJSON(cv.Metadata, chart("charts", cv.Name, cv.Version).Metadata) {
			t.Fatalf("listed record %s@%s is incomplete: %+v", cv.Name, cv.Version, cv)
		}
	}

	cases := []struct {
		name          string
		f             chartctl.ChartFilter
		offset, limit int
		want          []string
		total         int
	}{
		{"name", chartctl.ChartFilter{Name: "alpha-x"}, 0, -1, all[8:10], 2},
		{"name prefix is not a match", chartctl.ChartFilter{Name: "alph"}, 0, -1, nil, 0},
		{"version", chartctl.ChartFilter{Version: "1.0.0"}, 0, -1, []string{"beta@1.0.0"}, 1},
		{"name and version", chartctl.ChartFilter{Name: "alpha", Version: "1.9.0"}, 0, -1, []string{"alpha@1.9.0"}, 1},
		{"name and missing version", chartctl.ChartFilter{Name: "alpha", Version: "1.0.0"}, 0, -1, nil, 0},
		{"latest", chartctl.ChartFilter{Latest: true}, 0, -1, []string{"alpha@2.0.0-rc.1", "alpha-x@v0.0.2", "beta@1.0.0"}, 3},
		{"latest of one", chartctl.ChartFilter{Name: "alpha", Latest: true}, 0, -1, []string{"alpha@2.0.0-rc.1"}, 1},
		{"page", chartctl.ChartFilter{}, 2, 3, all[2:5], len(all)},
		{"last page", chartctl.ChartFilter{}, 9, 5, all[9:], len(all)},
		{"past the end", chartctl.ChartFilter{}, 50, 5, nil, len(all)},
		{"limit zero", chartctl.ChartFilter{}, 0, 0, nil, len(all)},
		{"latest page", chartctl.ChartFilter{Latest: true}, 1, 1, []string{"alpha-x@v0.0.2"}, 3},
		{"filtered page", chartctl.ChartFilter{Name: "alpha"}, 6, 10, all[6:8], 8},
		{"negative offset", chartctl.ChartFilter{}, -5, 2, all[:2], len(all)},
	}
	for _, c := range cases {
		got, total, err := s.ChartVersionPage(ctx, "charts", c.f, c.offset, c.limit)
		must(t, err)
		wantStrings(t, c.name, versionsOf(got), c.want)
		if total != c.total {
			t.Fatalf("%s: total = %d, want %d", c.name, total, c.total)
		}
	}
	got, err := s.ChartVersions(ctx, "charts", chartctl.ChartFilter{Name: "alpha", Latest: true})
	must(t, err)
	wantStrings(t, "ChartVersions latest", versionsOf(got), []string{"alpha@2.0.0-rc.1"})

	got, total, err := s.ChartVersionPage(ctx, "empty", chartctl.ChartFilter{}, 0, 20)
	must(t, err)
	if len(got) != 0 || total != 0 {
		t.Fatalf("empty repository: %v total %d", versionsOf(got), total)
	}
	_, _, err = s.ChartVersionPage(ctx, "missing", chartctl.ChartFilter{}, 0, 20)
	wantCode(t, err, chartctl.ENOTFOUND)
	_, err = s.ChartVersions(ctx, "missing", chartctl.ChartFilter{})
	wantCode(t, err, chartctl.ENOTFOUND)
}

func testOrphans(t *testing.T, open Open) {
	s := open(t)
	mustRepo(t, s, "one", "")
	mustRepo(t, s, "two", "")
	shared := Digest("shared archive")
	prov := Digest("shared prov")
	for _, r := range []string{"one", "two"} {
		cv := chart(r, "web", "1.0.0")
		cv.Digest, cv.ProvDigest = shared, prov
		mustPut(t, s, cv)
	}
	own := chart("one", "api", "1.0.0")
	mustPut(t, s, own)
	same := chart("one", "api", "1.0.1")
	same.Digest = own.Digest // two versions of one repository share bytes
	mustPut(t, s, same)

	for _, d := range []string{shared, prov, own.Digest} {
		ok, err := s.BlobReferenced(ctx, d)
		must(t, err)
		if !ok {
			t.Fatalf("BlobReferenced(%s) = false", d)
		}
	}
	for _, d := range []string{"", Digest("never stored")} {
		ok, err := s.BlobReferenced(ctx, d)
		must(t, err)
		if ok {
			t.Fatalf("BlobReferenced(%q) = true", d)
		}
	}

	_, orphans, err := s.DeleteChartVersion(ctx, "one", "api", "1.0.0")
	must(t, err)
	wantStrings(t, "orphans of a shared archive", orphans, nil)
	orphans, err = s.DeleteRepository(ctx, "one")
	must(t, err)
	wantStrings(t, "orphans of repository one", orphans, []string{own.Digest})
	ok, err := s.BlobReferenced(ctx, own.Digest)
	must(t, err)
	if ok {
		t.Fatal("freed blob still referenced")
	}
	ok, err = s.BlobReferenced(ctx, shared)
	must(t, err)
	if !ok {
		t.Fatal("blob shared with repository two no longer referenced")
	}
	orphans, err = s.DeleteRepository(ctx, "two")
	must(t, err)
	want := []string{shared, prov}
	sort.Strings(want)
	wantStrings(t, "orphans of repository two", orphans, want)
	orphans, err = s.DeleteRepository(ctx, func() string { mustRepo(t, s, "three", ""); return "three" }())
	must(t, err)
	wantStrings(t, "orphans of an empty repository", orphans, nil)
}

// testIndexEntryJSON: the JSON index entry is stored with the YAML one,
// cleared with it, and filled by SetIndexEntriesJSON only where the YAML
// entry is still the one it converts (issue #32).
func testIndexEntryJSON(t *testing.T, open Open) {
	s := open(t)
	mustRepo(t, s, "charts", "")
	jsonOf := func(v string) []byte { return []byte(`{"name":"web","version":"` + v + `"}`) }
	entryJSON := func(v string) (yamlEntry, jsonEntry string) {
		t.Helper()
		e, err := s.IndexEntry(ctx, "charts", "web", v)
		must(t, err)
		all, err := s.IndexEntries(ctx, "charts")
		must(t, err)
		for _, a := range all {
			if a.Version == v && (string(a.IndexEntry) != string(e.IndexEntry) || string(a.IndexEntryJSON) != string(e.IndexEntryJSON)) {
				t.Fatalf("IndexEntries and IndexEntry differ for %s: %q/%q vs %q/%q", v, a.IndexEntry, a.IndexEntryJSON, e.IndexEntry, e.IndexEntryJSON)
			}
		}
		return string(e.IndexEntry), string(e.IndexEntryJSON)
	}

	// Stored with the entry at upload.
	with := chart("charts", "web", "1.0.0")
	with.IndexEntryJSON = jsonOf("1.0.0")
	mustPut(t, s, with)
	if y, j := entryJSON("1.0.0"); y != string(with.IndexEntry) || j != string(with.IndexEntryJSON) {
		t.Fatalf("entry after upload = %q, JSON %q", y, j)
	}
	// An old-style version: entry without JSON.
	old := chart("charts", "web", "2.0.0")
	mustPut(t, s, old)
	if _, j := entryJSON("2.0.0"); j != "" {
		t.Fatalf("JSON of a version stored without one = %q", j)
	}
	// An overwrite without a JSON entry drops the old one (it converted
	// the old entry).
	over := chart("charts", "web", "1.0.0")
	over.Digest = Digest("other bytes")
	over.IndexEntry = []byte("name: web\nversion: 1.0.0\ndigest: other\n")
	_, _, _, err := s.PutChartVersion(ctx, over, chartctl.PutVersionOptions{Overwrite: true})
	must(t, err)
	if y, j := entryJSON("1.0.0"); y != string(over.IndexEntry) || j != "" {
		t.Fatalf("entry after overwrite without JSON = %q, JSON %q", y, j)
	}

	// The backfill: only where the stored entry is the one converted.
	n, err := s.SetIndexEntriesJSON(ctx, "charts", []*chartctl.ChartVersion{
		{Name: "web", Version: "2.0.0", IndexEntry: old.IndexEntry, IndexEntryJSON: jsonOf("2.0.0")},
		{Name: "web", Version: "1.0.0", IndexEntry: with.IndexEntry, IndexEntryJSON: jsonOf("stale")},
		{Name: "web", Version: "9.0.0", IndexEntry: old.IndexEntry, IndexEntryJSON: jsonOf("9.0.0")},
		{Name: "../bad", Version: "1", IndexEntry: old.IndexEntry, IndexEntryJSON: jsonOf("1")},
	})
	must(t, err)
	if n != 1 {
		t.Fatalf("SetIndexEntriesJSON stored %d, want 1", n)
	}
	if y, j := entryJSON("2.0.0"); y != string(old.IndexEntry) || j != string(jsonOf("2.0.0")) {
		t.Fatalf("entry after backfill = %q, JSON %q", y, j)
	}
	if _, j := entryJSON("1.0.0"); j != "" {
		t.Fatalf("backfill of a re-rendered entry stored %q", j)
	}
	got, err := s.ChartVersion(ctx, "charts", "web", "2.0.0")
	must(t, err)
	if got.Digest != old.Digest || !sameJSON(got.Metadata, old.Metadata) {
		t.Fatalf("record after backfill = %+v", got)
	}
	_, err = s.SetIndexEntriesJSON(ctx, "missing", nil)
	wantCode(t, err, chartctl.ENOTFOUND)

	// A verification that re-renders the entry stores the new pair; one
	// without an entry keeps both.
	v := &chartctl.Verification{Status: chartctl.VerificationUnsigned, CheckedAt: base}
	must(t, s.SetVerification(ctx, "charts", "web", "2.0.0", old.Digest, v, nil, nil))
	if y, j := entryJSON("2.0.0"); y != string(old.IndexEntry) || j != string(jsonOf("2.0.0")) {
		t.Fatalf("entry after a verification without one = %q, JSON %q", y, j)
	}
	must(t, s.SetVerification(ctx, "charts", "web", "2.0.0", old.Digest, v, []byte("name: web\nversion: 2.0.0\nsigned: yes\n"), jsonOf("2.0.0-signed")))
	if y, j := entryJSON("2.0.0"); y != "name: web\nversion: 2.0.0\nsigned: yes\n" || j != string(jsonOf("2.0.0-signed")) {
		t.Fatalf("entry after a verification = %q, JSON %q", y, j)
	}
	must(t, s.SetVerification(ctx, "charts", "web", "2.0.0", old.Digest, v, []byte("name: web\nversion: 2.0.0\n"), nil))
	if y, j := entryJSON("2.0.0"); y != "name: web\nversion: 2.0.0\n" || j != "" {
		t.Fatalf("entry after a verification without JSON = %q, JSON %q", y, j)
	}
}

func testIndexEntries(t *testing.T, open Open) {
	s := open(t)
	mustRepo(t, s, "charts", "")
	mustRepo(t, s, "empty", "")
	with := chart("charts", "web", "1.0.0")
	mustPut(t, s, with)
	without := chart("charts", "web", "2.0.0")
	without.IndexEntry = nil
	without.CreatedAt = base.Add(time.Hour)
	mustPut(t, s, without)

	check := func(cv *chartctl.ChartVersion) {
		t.Helper()
		if cv.Repository != "charts" || cv.Name != "web" {
			t.Fatalf("index version = %+v", cv)
		}
		switch cv.Version {
		case "1.0.0":
			if string(cv.IndexEntry) != string(with.IndexEntry) {
				t.Fatalf("IndexEntry = %q, want %q", cv.IndexEntry, with.IndexEntry)
			}
			wantTime(t, "CreatedAt", cv.CreatedAt, with.CreatedAt)
		case "2.0.0":
			if len(cv.IndexEntry) != 0 || !sameJSON(cv.Metadata, without.Metadata) || cv.Digest != without.Digest {
				t.Fatalf("version without an entry should come as its record: %+v", cv)
			}
			wantTime(t, "CreatedAt", cv.CreatedAt, without.CreatedAt)
		default:
			t.Fatalf("unexpected version %s", cv.Version)
		}
	}
	entries, err := s.IndexEntries(ctx, "charts")
	must(t, err)
	if len(entries) != 2 {
		t.Fatalf("IndexEntries = %d entries, want 2", len(entries))
	}
	for _, e := range entries {
		check(e)
	}
	for _, v := range []string{"1.0.0", "2.0.0"} {
		e, err := s.IndexEntry(ctx, "charts", "web", v)
		must(t, err)
		check(e)
	}
	_, err = s.IndexEntry(ctx, "charts", "web", "3.0.0")
	wantCode(t, err, chartctl.ENOTFOUND)
	_, err = s.IndexEntry(ctx, "missing", "web", "1.0.0")
	wantCode(t, err, chartctl.ENOTFOUND)
	_, err = s.IndexEntries(ctx, "missing")
	wantCode(t, err, chartctl.ENOTFOUND)
	entries, err = s.IndexEntries(ctx, "empty")
	must(t, err)
	if len(entries) != 0 {
		t.Fatalf("IndexEntries of an empty repository = %d", len(entries))
	}

	// Overwriting replaces the entry; overwriting without one drops it.
	over := chart("charts", "web", "1.0.0")
	over.Digest = Digest("new bytes")
	over.IndexEntry = []byte("name: web\nversion: 1.0.0\ndigest: new\n")
	_, _, _, err = s.PutChartVersion(ctx, over, chartctl.PutVersionOptions{Overwrite: true})
	must(t, err)
	e, err := s.IndexEntry(ctx, "charts", "web", "1.0.0")
	must(t, err)
	if string(e.IndexEntry) != string(over.IndexEntry) {
		t.Fatalf("IndexEntry after overwrite = %q", e.IndexEntry)
	}
	bare := chart("charts", "web", "1.0.0")
	bare.Digest = Digest("newer bytes")
	bare.IndexEntry = nil
	_, _, _, err = s.PutChartVersion(ctx, bare, chartctl.PutVersionOptions{Overwrite: true})
	must(t, err)
	e, err = s.IndexEntry(ctx, "charts", "web", "1.0.0")
	must(t, err)
	if len(e.IndexEntry) != 0 || e.Digest != bare.Digest {
		t.Fatalf("IndexEntry after overwrite without entry = %+v", e)
	}

	// Deleting a version removes it from the index.
	_, _, err = s.DeleteChartVersion(ctx, "charts", "web", "2.0.0")
	must(t, err)
	entries, err = s.IndexEntries(ctx, "charts")
	must(t, err)
	if len(entries) != 1 || entries[0].Version != "1.0.0" {
		t.Fatalf("IndexEntries after delete = %v", versionsOf(entries))
	}
}

func testTeams(t *testing.T, open Open) {
	s := open(t)
	mustOrg(t, s, "acme", "")
	mustOrg(t, s, "globex", "")

	tm := &chartctl.Team{Name: "platform", Organization: "acme", Description: "Platform team", MemberCount: 7}
	must(t, s.CreateTeam(ctx, tm))
	if !strings.HasPrefix(tm.ID, "team_") || tm.CreatedAt.IsZero() || tm.MemberCount != 0 {
		t.Fatalf("CreateTeam did not fill ID, CreatedAt and a zero MemberCount: %+v", tm)
	}
	got, err := s.Team(ctx, "platform")
	must(t, err)
	if got.ID != tm.ID || got.Organization != "acme" || got.Description != "Platform team" || got.MemberCount != 0 {
		t.Fatalf("Team = %+v, want %+v", got, tm)
	}
	wantTime(t, "CreatedAt", got.CreatedAt, tm.CreatedAt)

	wantCode(t, s.CreateTeam(ctx, &chartctl.Team{Name: "platform", Organization: "globex"}), chartctl.ECONFLICT)
	wantCode(t, s.CreateTeam(ctx, &chartctl.Team{Name: "ops", Organization: "missing"}), chartctl.ENOTFOUND)
	wantCode(t, s.CreateTeam(ctx, &chartctl.Team{Name: "ops"}), chartctl.ENOTFOUND)
	wantCode(t, s.CreateTeam(ctx, &chartctl.Team{Name: "Ops!", Organization: "acme"}), chartctl.EINVALID)
	_, err = s.Team(ctx, "missing")
	wantCode(t, err, chartctl.ENOTFOUND)

	mustTeam(t, s, "web", "globex")
	mustTeam(t, s, "data", "acme")
	mustTeam(t, s, "a-team", "globex")
	teamNames := func(org string) []string {
		t.Helper()
		ts, err := s.Teams(ctx, org)
		must(t, err)
		var out []string
		for _, tm := range ts {
			out = append(out, tm.Name+"/"+tm.Organization)
		}
		return out
	}
	wantStrings(t, "Teams()", teamNames(""), []string{"a-team/globex", "data/acme", "platform/acme", "web/globex"})
	wantStrings(t, "Teams(acme)", teamNames("acme"), []string{"data/acme", "platform/acme"})
	wantStrings(t, "Teams(missing)", teamNames("missing"), nil)

	must(t, s.AddMember(ctx, &chartctl.Member{Team: "web", Email: "ada@example.com"}))
	ts, err := s.Teams(ctx, "globex")
	must(t, err)
	if ts[1].Name != "web" || ts[1].MemberCount != 1 || ts[0].MemberCount != 0 {
		t.Fatalf("Teams member counts = %+v %+v", ts[0], ts[1])
	}
}

func testMembers(t *testing.T, open Open) {
	s := open(t)
	mustOrg(t, s, "acme", "")
	mustTeam(t, s, "platform", "acme")
	mustTeam(t, s, "web", "acme")

	m := &chartctl.Member{Team: "platform", Email: "Ada@Example.com"}
	must(t, s.AddMember(ctx, m))
	if !strings.HasPrefix(m.ID, "mem_") || m.AddedAt.IsZero() || m.Role != chartctl.RoleMember {
		t.Fatalf("AddMember did not fill ID, AddedAt and Role: %+v", m)
	}
	at := base.Add(-time.Hour)
	bob := &chartctl.Member{Team: "platform", Email: "bob@example.com", Role: chartctl.RoleOwner, AddedAt: at}
	must(t, s.AddMember(ctx, bob))
	must(t, s.AddMember(ctx, &chartctl.Member{Team: "platform", Email: "AAA@example.com", Role: chartctl.RoleMaintainer}))
	must(t, s.AddMember(ctx, &chartctl.Member{Team: "web", Email: "ada@example.com"}))

	wantCode(t, s.AddMember(ctx, &chartctl.Member{Team: "platform", Email: "ADA@example.com"}), chartctl.ECONFLICT)
	wantCode(t, s.AddMember(ctx, &chartctl.Member{Team: "missing", Email: "x@example.com"}), chartctl.ENOTFOUND)
	wantCode(t, s.AddMember(ctx, &chartctl.Member{Team: "platform", Email: ""}), chartctl.EINVALID)
	wantCode(t, s.AddMember(ctx, &chartctl.Member{Team: "platform", Email: "x@example.com", Role: "boss"}), chartctl.EINVALID)

	members, err := s.Members(ctx, "platform")
	must(t, err)
	var emails []string
	for _, m := range members {
		emails = append(emails, m.Email+"/"+string(m.Role))
		if m.Team != "platform" {
			t.Fatalf("member %+v: Team = %q", m, m.Team)
		}
	}
	wantStrings(t, "Members", emails, []string{"AAA@example.com/maintainer", "Ada@Example.com/member", "bob@example.com/owner"})
	_, err = s.Members(ctx, "missing")
	wantCode(t, err, chartctl.ENOTFOUND)
	tm, err := s.Team(ctx, "platform")
	must(t, err)
	if tm.MemberCount != 3 {
		t.Fatalf("MemberCount = %d, want 3", tm.MemberCount)
	}

	for _, key := range []string{m.ID, "ada@example.com", "ADA@EXAMPLE.COM"} {
		got, err := s.Member(ctx, "platform", key)
		must(t, err)
		if got.ID != m.ID || got.Email != "Ada@Example.com" || got.Role != chartctl.RoleMember || got.Team != "platform" {
			t.Fatalf("Member(%q) = %+v", key, got)
		}
		wantTime(t, "AddedAt", got.AddedAt, m.AddedAt)
	}
	got, err := s.Member(ctx, "platform", bob.ID)
	must(t, err)
	wantTime(t, "given AddedAt", got.AddedAt, at)
	_, err = s.Member(ctx, "web", m.ID) // another team's member ID
	wantCode(t, err, chartctl.ENOTFOUND)
	_, err = s.Member(ctx, "platform", "nobody@example.com")
	wantCode(t, err, chartctl.ENOTFOUND)
	_, err = s.Member(ctx, "platform", "")
	wantCode(t, err, chartctl.ENOTFOUND)
	_, err = s.Member(ctx, "missing", m.ID)
	wantCode(t, err, chartctl.ENOTFOUND)

	up, err := s.UpdateMemberRole(ctx, "platform", "ada@example.com", chartctl.RoleMaintainer)
	must(t, err)
	if up.ID != m.ID || up.Role != chartctl.RoleMaintainer {
		t.Fatalf("UpdateMemberRole = %+v", up)
	}
	got, err = s.Member(ctx, "platform", m.ID)
	must(t, err)
	if got.Role != chartctl.RoleMaintainer {
		t.Fatalf("role after update = %q", got.Role)
	}
	_, err = s.UpdateMemberRole(ctx, "platform", m.ID, "boss")
	wantCode(t, err, chartctl.EINVALID)
	_, err = s.UpdateMemberRole(ctx, "platform", "nobody@example.com", chartctl.RoleOwner)
	wantCode(t, err, chartctl.ENOTFOUND)
	_, err = s.UpdateMemberRole(ctx, "missing", m.ID, chartctl.RoleOwner)
	wantCode(t, err, chartctl.ENOTFOUND)

	must(t, s.RemoveMember(ctx, "platform", m.ID))
	wantCode(t, s.RemoveMember(ctx, "platform", m.ID), chartctl.ENOTFOUND)
	must(t, s.RemoveMember(ctx, "platform", "BOB@example.com"))
	wantCode(t, s.RemoveMember(ctx, "missing", "bob@example.com"), chartctl.ENOTFOUND)
	tm, err = s.Team(ctx, "platform")
	must(t, err)
	if tm.MemberCount != 1 {
		t.Fatalf("MemberCount after removals = %d, want 1", tm.MemberCount)
	}
	// The membership in the other team is untouched, and a removed
	// member may be added again.
	_, err = s.Member(ctx, "web", "ada@example.com")
	must(t, err)
	must(t, s.AddMember(ctx, &chartctl.Member{Team: "platform", Email: "ada@example.com"}))
}

func testOrgRoles(t *testing.T, open Open) {
	s := open(t)
	ada := mustUser(t, s, "ada@example.com")
	mustOrg(t, s, "acme", ada.ID)
	mustOrg(t, s, "globex", "")
	mustOrg(t, s, "initech", "")
	mustTeam(t, s, "g1", "globex")
	mustTeam(t, s, "g2", "globex")
	mustTeam(t, s, "i1", "initech")
	mustTeam(t, s, "a1", "acme")
	must(t, s.AddMember(ctx, &chartctl.Member{Team: "g1", Email: "ADA@example.com", Role: chartctl.RoleMember}))
	must(t, s.AddMember(ctx, &chartctl.Member{Team: "g2", Email: "ada@example.com", Role: chartctl.RoleMaintainer}))
	must(t, s.AddMember(ctx, &chartctl.Member{Team: "i1", Email: "ada@example.com", Role: chartctl.RoleMember}))
	must(t, s.AddMember(ctx, &chartctl.Member{Team: "a1", Email: "ada@example.com", Role: chartctl.RoleMember}))
	must(t, s.AddMember(ctx, &chartctl.Member{Team: "i1", Email: "bob@example.com", Role: chartctl.RoleOwner}))

	roles, err := s.OrgRoles(ctx, ada.ID, "Ada@Example.com")
	must(t, err)
	want := map[string]chartctl.Role{"acme": chartctl.RoleOwner, "globex": chartctl.RoleMaintainer, "initech": chartctl.RoleMember}
	if !reflect.DeepEqual(roles, want) {
		t.Fatalf("OrgRoles = %v, want %v", roles, want)
	}
	roles, err = s.OrgRoles(ctx, "", "bob@example.com")
	must(t, err)
	if !reflect.DeepEqual(roles, map[string]chartctl.Role{"initech": chartctl.RoleOwner}) {
		t.Fatalf("OrgRoles(bob) = %v", roles)
	}
	roles, err = s.OrgRoles(ctx, ada.ID, "")
	must(t, err)
	if !reflect.DeepEqual(roles, map[string]chartctl.Role{"acme": chartctl.RoleOwner}) {
		t.Fatalf("OrgRoles(creator only) = %v", roles)
	}
	roles, err = s.OrgRoles(ctx, "", "")
	must(t, err)
	if roles == nil || len(roles) != 0 {
		t.Fatalf("OrgRoles of nobody = %#v, want an empty map", roles)
	}
	// Role changes and removals show at once.
	_, err = s.UpdateMemberRole(ctx, "i1", "ada@example.com", chartctl.RoleOwner)
	must(t, err)
	must(t, s.RemoveMember(ctx, "g2", "ada@example.com"))
	roles, err = s.OrgRoles(ctx, "", "ada@example.com")
	must(t, err)
	want = map[string]chartctl.Role{"acme": chartctl.RoleMember, "globex": chartctl.RoleMember, "initech": chartctl.RoleOwner}
	if !reflect.DeepEqual(roles, want) {
		t.Fatalf("OrgRoles after changes = %v, want %v", roles, want)
	}
}

func testOAuthClients(t *testing.T, open Open) {
	s := open(t)
	c := &chartctl.OAuthClient{ID: "cli_1", Name: "CI", RedirectURIs: []string{"http://127.0.0.1/cb", "https://app.example.com/cb"}, SecretHash: []byte("secret")}
	must(t, s.CreateOAuthClient(ctx, c))
	if c.CreatedAt.IsZero() {
		t.Fatal("CreateOAuthClient did not fill CreatedAt")
	}
	must(t, s.CreateOAuthClient(ctx, &chartctl.OAuthClient{ID: "cli_pub", Name: "CLI", Public: true, RedirectURIs: []string{"http://127.0.0.1/"}}))
	got, err := s.OAuthClient(ctx, "cli_1")
	must(t, err)
	if got.ID != "cli_1" || got.Name != "CI" || got.Public || string(got.SecretHash) != "secret" || !slices.Equal(got.RedirectURIs, c.RedirectURIs) {
		t.Fatalf("OAuthClient = %+v, want %+v", got, c)
	}
	wantTime(t, "CreatedAt", got.CreatedAt, c.CreatedAt)
	got, err = s.OAuthClient(ctx, "cli_pub")
	must(t, err)
	if !got.Public || len(got.SecretHash) != 0 {
		t.Fatalf("public client = %+v", got)
	}
	wantCode(t, s.CreateOAuthClient(ctx, &chartctl.OAuthClient{ID: "cli_1"}), chartctl.ECONFLICT)
	wantCode(t, s.CreateOAuthClient(ctx, &chartctl.OAuthClient{ID: ""}), chartctl.EINVALID)
	_, err = s.OAuthClient(ctx, "missing")
	wantCode(t, err, chartctl.ENOTFOUND)
	_, err = s.OAuthClient(ctx, "")
	wantCode(t, err, chartctl.ENOTFOUND)
}

func code(hash, grant string, expires time.Time) *chartctl.AuthorizationCode {
	return &chartctl.AuthorizationCode{
		Hash: []byte(hash), ClientID: "cli_1", UserID: "usr_1", RedirectURI: "http://127.0.0.1/cb",
		Scopes: chartctl.Scopes{chartctl.ScopeRepoRead}, CodeChallenge: "challenge", GrantID: grant,
		CreatedAt: base, ExpiresAt: expires,
	}
}

// tokens returns an access and a refresh token of grant, as a check
// function issues them.
func tokens(prefix, grant, parent string, expires time.Time) []*chartctl.OAuthToken {
	return []*chartctl.OAuthToken{
		{Hash: []byte(prefix + "-access"), Kind: chartctl.AccessToken, GrantID: grant, ParentID: parent, ClientID: "cli_1", UserID: "usr_1", Scopes: chartctl.Scopes{chartctl.ScopeRepoRead}, ExpiresAt: expires},
		{Hash: []byte(prefix + "-refresh"), Kind: chartctl.RefreshToken, GrantID: grant, ParentID: parent, ClientID: "cli_1", UserID: "usr_1", Scopes: chartctl.Scopes{chartctl.ScopeRepoRead}, ExpiresAt: expires.Add(time.Hour)},
	}
}

func mustToken(tb testing.TB, s Store, hash string) *chartctl.OAuthToken {
	tb.Helper()
	tok, err := s.OAuthToken(ctx, []byte(hash))
	must(tb, err)
	return tok
}

func testAuthorizationCodes(t *testing.T, open Open) {
	s := open(t)
	now := base
	exp := now.Add(10 * time.Minute)
	wantCode(t, s.CreateAuthorizationCode(ctx, code("", "g1", exp)), chartctl.EINVALID)
	wantCode(t, s.CreateAuthorizationCode(ctx, code("c1", "", exp)), chartctl.EINVALID)
	must(t, s.CreateAuthorizationCode(ctx, code("c1", "g1", exp)))
	wantCode(t, s.CreateAuthorizationCode(ctx, code("c1", "g9", exp)), chartctl.ECONFLICT)

	never := func(*chartctl.AuthorizationCode) ([]*chartctl.OAuthToken, error) {
		t.Fatal("check called")
		return nil, nil
	}
	wantCode(t, s.RedeemAuthorizationCode(ctx, []byte("nope"), now, never), chartctl.ENOTFOUND)
	wantCode(t, s.RedeemAuthorizationCode(ctx, nil, now, never), chartctl.ENOTFOUND)
	// Expired at now (ExpiresAt is exclusive).
	wantCode(t, s.RedeemAuthorizationCode(ctx, []byte("c1"), exp, never), chartctl.ENOTFOUND)

	// The check's error is returned unchanged and consumes the code: a
	// code is single-use, a refused attempt included (RFC 6749 §4.1.2).
	must(t, s.CreateAuthorizationCode(ctx, code("c0", "g0", exp)))
	refused := chartctl.Errorf(chartctl.EINVALID, "PKCE verifier does not match.")
	err := s.RedeemAuthorizationCode(ctx, []byte("c0"), now, func(c *chartctl.AuthorizationCode) ([]*chartctl.OAuthToken, error) {
		if string(c.Hash) != "c0" || c.ClientID != "cli_1" || c.UserID != "usr_1" || c.RedirectURI != "http://127.0.0.1/cb" ||
			c.Scopes.String() != "repo:read" || c.CodeChallenge != "challenge" || c.GrantID != "g0" || c.RedeemedAt != nil {
			t.Fatalf("check got %+v", c)
		}
		wantTime(t, "code ExpiresAt", c.ExpiresAt, exp)
		wantTime(t, "code CreatedAt", c.CreatedAt, base)
		return tokens("t0", "g0", "", exp), refused
	})
	if err != refused {
		t.Fatalf("check error came back as %v", err)
	}
	wantCode(t, s.RedeemAuthorizationCode(ctx, []byte("c0"), now, never), chartctl.ECONFLICT)
	_, err = s.OAuthToken(ctx, []byte("t0-access"))
	wantCode(t, err, chartctl.ENOTFOUND)

	issued := tokens("t1", "g1", "", now.Add(time.Hour))
	must(t, s.RedeemAuthorizationCode(ctx, []byte("c1"), now, func(*chartctl.AuthorizationCode) ([]*chartctl.OAuthToken, error) {
		return issued, nil
	}))
	for _, want := range issued {
		if !strings.HasPrefix(want.ID, "tok_") || want.CreatedAt.IsZero() {
			t.Fatalf("token not filled: %+v", want)
		}
		got := mustToken(t, s, string(want.Hash))
		if got.ID != want.ID || got.Kind != want.Kind || got.GrantID != "g1" || got.ClientID != "cli_1" || got.UserID != "usr_1" ||
			got.Scopes.String() != "repo:read" || got.Revoked || got.RotatedAt != nil || got.ParentID != "" {
			t.Fatalf("OAuthToken = %+v, want %+v", got, want)
		}
		wantTime(t, "token ExpiresAt", got.ExpiresAt, want.ExpiresAt)
		wantTime(t, "token CreatedAt", got.CreatedAt, want.CreatedAt)
	}
	_, err = s.OAuthToken(ctx, []byte("missing"))
	wantCode(t, err, chartctl.ENOTFOUND)

	// Reuse: ECONFLICT, and the grant's tokens are revoked.
	wantCode(t, s.RedeemAuthorizationCode(ctx, []byte("c1"), now, never), chartctl.ECONFLICT)
	for _, tok := range issued {
		if !mustToken(t, s, string(tok.Hash)).Revoked {
			t.Fatalf("token %s of a reused code is not revoked", tok.Hash)
		}
	}

	// A check returning a bad token fails the whole redemption.
	must(t, s.CreateAuthorizationCode(ctx, code("c2", "g2", exp)))
	bad := tokens("t2", "g2", "", exp)
	bad[1].Hash = nil
	wantCode(t, s.RedeemAuthorizationCode(ctx, []byte("c2"), now, func(*chartctl.AuthorizationCode) ([]*chartctl.OAuthToken, error) { return bad, nil }), chartctl.EINVALID)
	_, err = s.OAuthToken(ctx, []byte("t2-access"))
	wantCode(t, err, chartctl.ENOTFOUND)
	dup := tokens("t1", "g2", "", exp) // hashes already issued
	wantCode(t, s.RedeemAuthorizationCode(ctx, []byte("c2"), now, func(*chartctl.AuthorizationCode) ([]*chartctl.OAuthToken, error) { return dup, nil }), chartctl.ECONFLICT)
	must(t, s.RedeemAuthorizationCode(ctx, []byte("c2"), now, func(*chartctl.AuthorizationCode) ([]*chartctl.OAuthToken, error) {
		return tokens("t2", "g2", "", exp), nil
	}))
}

// testGrantLimit: a user holds at most MaxOAuthGrants live grants per
// client; redeeming one more revokes the oldest with its tokens, and
// leaves other clients' and other users' grants alone.
func testGrantLimit(t *testing.T, open Open) {
	s := open(t)
	exp := base.Add(time.Hour)
	redeem := func(i int, user, client string) string {
		t.Helper()
		tag := fmt.Sprintf("%s-%s-%02d", user, client, i)
		c := code(tag, "g-"+tag, exp)
		c.UserID, c.ClientID = user, client
		must(t, s.CreateAuthorizationCode(ctx, c))
		issued := tokens(tag, c.GrantID, "", exp)
		for _, tok := range issued {
			tok.UserID, tok.ClientID, tok.CreatedAt = user, client, base.Add(time.Duration(i)*time.Second)
		}
		must(t, s.RedeemAuthorizationCode(ctx, c.Hash, base.Add(time.Duration(i)*time.Second), func(*chartctl.AuthorizationCode) ([]*chartctl.OAuthToken, error) {
			return issued, nil
		}))
		return tag
	}
	revoked := func(tag string) bool {
		return mustToken(t, s, tag+"-access").Revoked && mustToken(t, s, tag+"-refresh").Revoked
	}

	other := redeem(0, "usr_1", "cli_2")
	otherUser := redeem(0, "usr_2", "cli_1")
	var tags []string
	for i := range chartctl.MaxOAuthGrants {
		tags = append(tags, redeem(i+1, "usr_1", "cli_1"))
	}
	// A grant revoked on its own does not count towards the limit.
	must(t, s.RevokeGrant(ctx, "g-"+tags[5]))
	tags = append(tags, redeem(20, "usr_1", "cli_1"))
	for i, tag := range tags {
		if i != 5 && revoked(tag) {
			t.Fatalf("grant %d of %d revoked with one revoked by hand among them", i, len(tags))
		}
	}
	tags = append(tags, redeem(21, "usr_1", "cli_1"))
	tags = append(tags, redeem(22, "usr_1", "cli_1"))
	for i, tag := range tags {
		want := i <= 1 || i == 5 // the two oldest go, the one revoked by hand stays revoked
		if got := revoked(tag); got != want {
			t.Errorf("grant %d (%s): revoked %v, want %v", i, tag, got, want)
		}
	}
	if revoked(other) || revoked(otherUser) {
		t.Errorf("another client's or user's grant was revoked")
	}
}

func testRefreshTokens(t *testing.T, open Open) {
	s := open(t)
	now := base
	exp := now.Add(time.Hour)
	must(t, s.CreateAuthorizationCode(ctx, code("c1", "g1", exp)))
	must(t, s.RedeemAuthorizationCode(ctx, []byte("c1"), now, func(*chartctl.AuthorizationCode) ([]*chartctl.OAuthToken, error) {
		return tokens("t1", "g1", "", exp), nil
	}))
	never := func(*chartctl.OAuthToken) ([]*chartctl.OAuthToken, error) {
		t.Fatal("check called")
		return nil, nil
	}
	wantCode(t, s.RotateRefreshToken(ctx, []byte("missing"), now, never), chartctl.ENOTFOUND)
	wantCode(t, s.RotateRefreshToken(ctx, nil, now, never), chartctl.ENOTFOUND)
	wantCode(t, s.RotateRefreshToken(ctx, []byte("t1-access"), now, never), chartctl.ENOTFOUND)
	wantCode(t, s.RotateRefreshToken(ctx, []byte("t1-refresh"), exp.Add(time.Hour), never), chartctl.ENOTFOUND)

	refused := chartctl.Errorf(chartctl.EINVALID, "Wrong client.")
	err := s.RotateRefreshToken(ctx, []byte("t1-refresh"), now, func(tok *chartctl.OAuthToken) ([]*chartctl.OAuthToken, error) {
		if tok.Kind != chartctl.RefreshToken || tok.GrantID != "g1" || tok.Revoked || tok.RotatedAt != nil {
			t.Fatalf("check got %+v", tok)
		}
		return nil, refused
	})
	if err != refused {
		t.Fatalf("check error came back as %v", err)
	}
	old := mustToken(t, s, "t1-refresh")
	must(t, s.RotateRefreshToken(ctx, []byte("t1-refresh"), now, func(tok *chartctl.OAuthToken) ([]*chartctl.OAuthToken, error) {
		return tokens("t2", "g1", tok.ID, exp), nil
	}))
	rotated := mustToken(t, s, "t1-refresh")
	if rotated.RotatedAt == nil {
		t.Fatal("rotated token has no RotatedAt")
	}
	wantTime(t, "RotatedAt", *rotated.RotatedAt, now)
	next := mustToken(t, s, "t2-refresh")
	if next.ParentID != old.ID || next.Revoked {
		t.Fatalf("new refresh token = %+v", next)
	}
	// Reuse of the rotated token revokes the grant: old and new tokens.
	wantCode(t, s.RotateRefreshToken(ctx, []byte("t1-refresh"), now, never), chartctl.ECONFLICT)
	for _, h := range []string{"t1-access", "t2-access", "t2-refresh"} {
		if !mustToken(t, s, h).Revoked {
			t.Fatalf("token %s not revoked after reuse", h)
		}
	}
	// A revoked refresh token cannot be rotated.
	wantCode(t, s.RotateRefreshToken(ctx, []byte("t2-refresh"), now, never), chartctl.ENOTFOUND)
}

func testRevocation(t *testing.T, open Open) {
	s := open(t)
	now := base
	exp := now.Add(time.Hour)
	for _, g := range []string{"g1", "g2"} {
		must(t, s.CreateAuthorizationCode(ctx, code("c-"+g, g, exp)))
		must(t, s.RedeemAuthorizationCode(ctx, []byte("c-"+g), now, func(*chartctl.AuthorizationCode) ([]*chartctl.OAuthToken, error) {
			return tokens(g, g, "", exp), nil
		}))
	}
	// Revoking an access token revokes only it.
	must(t, s.RevokeOAuthToken(ctx, []byte("g1-access")))
	if !mustToken(t, s, "g1-access").Revoked || mustToken(t, s, "g1-refresh").Revoked {
		t.Fatal("revoking an access token must revoke only it")
	}
	// Revoking a refresh token revokes its grant.
	must(t, s.RevokeOAuthToken(ctx, []byte("g2-refresh")))
	if !mustToken(t, s, "g2-access").Revoked || !mustToken(t, s, "g2-refresh").Revoked {
		t.Fatal("revoking a refresh token must revoke its grant")
	}
	wantCode(t, s.RevokeOAuthToken(ctx, []byte("missing")), chartctl.ENOTFOUND)
	wantCode(t, s.RevokeOAuthToken(ctx, nil), chartctl.ENOTFOUND)

	must(t, s.RevokeGrant(ctx, "g1"))
	if !mustToken(t, s, "g1-refresh").Revoked {
		t.Fatal("RevokeGrant left a token live")
	}
	must(t, s.RevokeGrant(ctx, "g1")) // again
	wantCode(t, s.RevokeGrant(ctx, ""), chartctl.EINVALID)

	// A grant revoked before it is used stays revoked: its tokens are
	// revoked when issued.
	must(t, s.RevokeGrant(ctx, "g3"))
	must(t, s.CreateAuthorizationCode(ctx, code("c-g3", "g3", exp)))
	must(t, s.RedeemAuthorizationCode(ctx, []byte("c-g3"), now, func(*chartctl.AuthorizationCode) ([]*chartctl.OAuthToken, error) {
		return tokens("g3", "g3", "", exp), nil
	}))
	if !mustToken(t, s, "g3-access").Revoked {
		t.Fatal("token of a revoked grant is live")
	}
	wantCode(t, s.RotateRefreshToken(ctx, []byte("g3-refresh"), now, func(*chartctl.OAuthToken) ([]*chartctl.OAuthToken, error) {
		t.Fatal("check called for a revoked grant")
		return nil, nil
	}), chartctl.ENOTFOUND)
}

func testWebSessions(t *testing.T, open Open) {
	s := open(t)
	now := base
	exp := now.Add(time.Hour)
	wantCode(t, s.CreateWebSession(ctx, &chartctl.WebSession{UserID: "usr_1", ExpiresAt: exp}), chartctl.EINVALID)
	ws := &chartctl.WebSession{Hash: []byte("s1"), UserID: "usr_1", CSRFToken: "csrf", ExpiresAt: exp}
	must(t, s.CreateWebSession(ctx, ws))
	if ws.CreatedAt.IsZero() {
		t.Fatal("CreateWebSession did not fill CreatedAt")
	}
	got, err := s.WebSession(ctx, []byte("s1"), now)
	must(t, err)
	if string(got.Hash) != "s1" || got.UserID != "usr_1" || got.CSRFToken != "csrf" {
		t.Fatalf("WebSession = %+v", got)
	}
	wantTime(t, "ExpiresAt", got.ExpiresAt, exp)
	wantTime(t, "CreatedAt", got.CreatedAt, ws.CreatedAt)
	_, err = s.WebSession(ctx, []byte("s1"), exp)
	wantCode(t, err, chartctl.ENOTFOUND)
	_, err = s.WebSession(ctx, []byte("missing"), now)
	wantCode(t, err, chartctl.ENOTFOUND)
	_, err = s.WebSession(ctx, nil, now)
	wantCode(t, err, chartctl.ENOTFOUND)
	must(t, s.DeleteWebSession(ctx, []byte("s1")))
	_, err = s.WebSession(ctx, []byte("s1"), now)
	wantCode(t, err, chartctl.ENOTFOUND)
	must(t, s.DeleteWebSession(ctx, []byte("s1")))
	must(t, s.DeleteWebSession(ctx, nil))
}

// DeleteUserWebSessions ends one user's sessions but the one kept (a
// password change signs out the user's other browsers).
func testUserWebSessions(t *testing.T, open Open) {
	s := open(t)
	exp := base.Add(time.Hour)
	for _, h := range []string{"a1", "a2", "a3"} {
		must(t, s.CreateWebSession(ctx, &chartctl.WebSession{Hash: []byte(h), UserID: "usr_a", CSRFToken: "x", ExpiresAt: exp}))
	}
	must(t, s.CreateWebSession(ctx, &chartctl.WebSession{Hash: []byte("b1"), UserID: "usr_b", CSRFToken: "x", ExpiresAt: exp}))
	n, err := s.DeleteUserWebSessions(ctx, "usr_a", []byte("a2"))
	must(t, err)
	if n != 2 {
		t.Fatalf("DeleteUserWebSessions ended %d sessions, want 2", n)
	}
	for h, live := range map[string]bool{"a1": false, "a2": true, "a3": false, "b1": true} {
		_, err := s.WebSession(ctx, []byte(h), base)
		if got := err == nil; got != live {
			t.Errorf("session %s live = %v, want %v (%v)", h, got, live, err)
		}
	}
	n, err = s.DeleteUserWebSessions(ctx, "usr_a", nil)
	must(t, err)
	if n != 1 {
		t.Fatalf("DeleteUserWebSessions(nil keep) ended %d, want 1", n)
	}
	if _, err := s.WebSession(ctx, []byte("b1"), base); err != nil {
		t.Fatalf("another user's session ended: %v", err)
	}
}

// UserGrants lists a user's live grants: not revoked, with a token
// unexpired at now.
func testUserGrants(t *testing.T, open Open) {
	s := open(t)
	now := base
	issue := func(code, grant string, tok []*chartctl.OAuthToken) {
		t.Helper()
		must(t, s.CreateAuthorizationCode(ctx, &chartctl.AuthorizationCode{Hash: []byte(code), ClientID: tok[0].ClientID, UserID: tok[0].UserID,
			RedirectURI: "http://127.0.0.1/cb", Scopes: tok[0].Scopes, GrantID: grant, CreatedAt: now, ExpiresAt: now.Add(time.Minute)}))
		must(t, s.RedeemAuthorizationCode(ctx, []byte(code), now, func(*chartctl.AuthorizationCode) ([]*chartctl.OAuthToken, error) { return tok, nil }))
	}
	live := tokens("g1", "g1", "", now.Add(time.Hour))
	issue("c1", "g1", live)
	revoked := tokens("g2", "g2", "", now.Add(time.Hour))
	issue("c2", "g2", revoked)
	must(t, s.RevokeGrant(ctx, "g2"))
	expired := tokens("g3", "g3", "", now.Add(time.Minute))
	issue("c3", "g3", expired)
	other := tokens("g4", "g4", "", now.Add(time.Hour))
	for _, tk := range other {
		tk.UserID = "usr_2"
	}
	issue("c4", "g4", other)

	// At now+2m grant g3's refresh token (expiry +1m+1h) is still live.
	gs, err := s.UserGrants(ctx, "usr_1", now.Add(2*time.Minute))
	must(t, err)
	if len(gs) != 2 || gs[0].ID == gs[1].ID {
		t.Fatalf("UserGrants = %+v, want g1 and g3", gs)
	}
	ids := map[string]*chartctl.OAuthGrant{gs[0].ID: gs[0], gs[1].ID: gs[1]}
	g := ids["g1"]
	if g == nil || ids["g3"] == nil || g.ClientID != "cli_1" || g.UserID != "usr_1" || g.Scopes.String() != "repo:read" {
		t.Fatalf("UserGrants = %+v", gs)
	}
	wantTime(t, "grant ExpiresAt", g.ExpiresAt, live[1].ExpiresAt)
	// Past every token of g3, only g1 stays.
	gs, err = s.UserGrants(ctx, "usr_1", now.Add(time.Hour+2*time.Minute))
	must(t, err)
	if len(gs) != 1 || gs[0].ID != "g1" {
		t.Fatalf("UserGrants later = %+v, want g1 alone", gs)
	}
	gs, err = s.UserGrants(ctx, "usr_missing", now)
	must(t, err)
	if len(gs) != 0 {
		t.Fatalf("UserGrants of nobody = %+v", gs)
	}
}

func testDeleteExpired(t *testing.T, open Open) {
	s := open(t)
	now := base
	live, dead := now.Add(time.Hour), now.Add(-time.Minute)
	must(t, s.CreateAuthorizationCode(ctx, code("c-dead", "g1", dead)))
	must(t, s.CreateAuthorizationCode(ctx, code("c-live", "g2", live)))
	must(t, s.CreateAuthorizationCode(ctx, code("c-redeem", "g3", live)))
	must(t, s.RedeemAuthorizationCode(ctx, []byte("c-redeem"), now, func(*chartctl.AuthorizationCode) ([]*chartctl.OAuthToken, error) {
		toks := tokens("t", "g3", "", live)
		toks[0].ExpiresAt = dead
		return toks, nil
	}))
	must(t, s.CreateWebSession(ctx, &chartctl.WebSession{Hash: []byte("s-dead"), UserID: "u", ExpiresAt: dead}))
	must(t, s.CreateWebSession(ctx, &chartctl.WebSession{Hash: []byte("s-live"), UserID: "u", ExpiresAt: live}))
	// Expiring exactly at now is not "before now".
	must(t, s.CreateWebSession(ctx, &chartctl.WebSession{Hash: []byte("s-edge"), UserID: "u", ExpiresAt: now}))

	n, err := s.DeleteExpiredOAuth(ctx, now)
	must(t, err)
	if n != 3 {
		t.Fatalf("DeleteExpiredOAuth removed %d records, want 3", n)
	}
	_, err = s.OAuthToken(ctx, []byte("t-access"))
	wantCode(t, err, chartctl.ENOTFOUND)
	mustToken(t, s, "t-refresh")
	_, err = s.WebSession(ctx, []byte("s-live"), now)
	must(t, err)
	wantCode(t, s.RedeemAuthorizationCode(ctx, []byte("c-dead"), dead.Add(-time.Hour), func(*chartctl.AuthorizationCode) ([]*chartctl.OAuthToken, error) {
		return nil, nil
	}), chartctl.ENOTFOUND)
	n, err = s.DeleteExpiredOAuth(ctx, now)
	must(t, err)
	if n != 0 {
		t.Fatalf("second DeleteExpiredOAuth removed %d", n)
	}
}

func testConcurrency(t *testing.T, open Open) {
	t.Run("CreateUser", func(t *testing.T) {
		s := open(t)
		errs := race(Racers, func(int) error { return s.CreateUser(ctx, &chartctl.User{Email: "race@example.com"}) })
		wantWinner(t, errs, chartctl.ECONFLICT)
		n, err := s.UserCount(ctx)
		must(t, err)
		if n != 1 {
			t.Fatalf("UserCount = %d, want 1", n)
		}
	})
	t.Run("CreateOrganization", func(t *testing.T) {
		s := open(t)
		errs := race(Racers, func(int) error { return s.CreateOrganization(ctx, &chartctl.Organization{Name: "race"}) })
		wantWinner(t, errs, chartctl.ECONFLICT)
	})
	t.Run("CreateRepository", func(t *testing.T) {
		s := open(t)
		errs := race(Racers, func(int) error { return s.CreateRepository(ctx, &chartctl.Repository{Name: "race"}) })
		wantWinner(t, errs, chartctl.ECONFLICT)
		repos, err := s.Repositories(ctx)
		must(t, err)
		if len(repos) != 1 {
			t.Fatalf("%d repositories", len(repos))
		}
	})
	t.Run("CreateTeam", func(t *testing.T) {
		s := open(t)
		mustOrg(t, s, "acme", "")
		errs := race(Racers, func(int) error { return s.CreateTeam(ctx, &chartctl.Team{Name: "race", Organization: "acme"}) })
		wantWinner(t, errs, chartctl.ECONFLICT)
	})
	t.Run("AddMember", func(t *testing.T) {
		s := open(t)
		mustOrg(t, s, "acme", "")
		mustTeam(t, s, "team", "acme")
		errs := race(Racers, func(int) error { return s.AddMember(ctx, &chartctl.Member{Team: "team", Email: "race@example.com"}) })
		wantWinner(t, errs, chartctl.ECONFLICT)
		errs = race(Racers, func(i int) error {
			return s.AddMember(ctx, &chartctl.Member{Team: "team", Email: fmt.Sprintf("m%02d@example.com", i)})
		})
		for _, err := range errs {
			must(t, err)
		}
		tm, err := s.Team(ctx, "team")
		must(t, err)
		if tm.MemberCount != Racers+1 {
			t.Fatalf("MemberCount = %d, want %d", tm.MemberCount, Racers+1)
		}
		ms, err := s.Members(ctx, "team")
		must(t, err)
		if len(ms) != Racers+1 {
			t.Fatalf("%d members, want %d", len(ms), Racers+1)
		}
	})
	t.Run("PutSameVersion", func(t *testing.T) {
		s := open(t)
		mustRepo(t, s, "charts", "")
		var mu sync.Mutex
		created := 0
		errs := race(Racers, func(int) error {
			_, c, _, err := s.PutChartVersion(ctx, chart("charts", "web", "1.0.0"), chartctl.PutVersionOptions{})
			if c {
				mu.Lock()
				created++
				mu.Unlock()
			}
			return err
		})
		for _, err := range errs {
			must(t, err)
		}
		if created != 1 {
			t.Fatalf("%d of %d identical puts created the version, want 1", created, Racers)
		}
	})
	t.Run("PutConflictingVersion", func(t *testing.T) {
		s := open(t)
		mustRepo(t, s, "charts", "")
		errs := race(Racers, func(i int) error {
			cv := chart("charts", "web", "1.0.0")
			cv.Digest = Digest(fmt.Sprint("racer ", i))
			_, _, _, err := s.PutChartVersion(ctx, cv, chartctl.PutVersionOptions{})
			return err
		})
		wantWinner(t, errs, chartctl.ECONFLICT)
		cv, err := s.ChartVersion(ctx, "charts", "web", "1.0.0")
		must(t, err)
		for i, err := range errs {
			if err == nil && cv.Digest != Digest(fmt.Sprint("racer ", i)) {
				t.Fatalf("stored digest %s is not the winner's", cv.Digest)
			}
		}
	})
	t.Run("PutManyVersions", func(t *testing.T) {
		s := open(t)
		mustRepo(t, s, "charts", "")
		errs := race(Racers, func(i int) error {
			_, _, _, err := s.PutChartVersion(ctx, chart("charts", "web", fmt.Sprintf("1.0.%d", i)), chartctl.PutVersionOptions{})
			return err
		})
		for _, err := range errs {
			must(t, err)
		}
		_, total, err := s.ChartVersionPage(ctx, "charts", chartctl.ChartFilter{}, 0, 0)
		must(t, err)
		if total != Racers {
			t.Fatalf("%d versions stored, want %d", total, Racers)
		}
	})
	t.Run("OverwriteAndDeleteSharedBlob", func(t *testing.T) {
		// Versions sharing one blob deleted concurrently: exactly one
		// delete reports it orphaned.
		s := open(t)
		mustRepo(t, s, "charts", "")
		shared := Digest("shared")
		for i := range Racers {
			cv := chart("charts", "web", fmt.Sprintf("1.0.%d", i))
			cv.Digest = shared
			mustPut(t, s, cv)
		}
		var mu sync.Mutex
		reported := 0
		errs := race(Racers, func(i int) error {
			_, orphans, err := s.DeleteChartVersion(ctx, "charts", "web", fmt.Sprintf("1.0.%d", i))
			mu.Lock()
			reported += len(orphans)
			mu.Unlock()
			return err
		})
		for _, err := range errs {
			must(t, err)
		}
		if reported != 1 {
			t.Fatalf("shared blob reported orphaned %d times, want 1", reported)
		}
	})
	t.Run("CreateAPIKey", func(t *testing.T) {
		s := open(t)
		u := mustUser(t, s, "ada@example.com")
		errs := race(Racers, func(int) error {
			return s.CreateAPIKey(ctx, &chartctl.APIKey{UserID: u.ID, Name: "k", Hash: []byte("same")})
		})
		wantWinner(t, errs, chartctl.ECONFLICT)
	})
	t.Run("OverwriteVersion", func(t *testing.T) {
		// Racing overwrites of one version: every one succeeds, each blob
		// it replaced is reported orphaned exactly once, and only the
		// final record's blob stays referenced.
		s := open(t)
		mustRepo(t, s, "charts", "")
		var mu sync.Mutex
		orphaned := map[string]int{}
		errs := race(Racers, func(i int) error {
			cv := chart("charts", "web", "1.0.0")
			cv.Digest = Digest(fmt.Sprint("overwrite ", i))
			_, _, orphans, err := s.PutChartVersion(ctx, cv, chartctl.PutVersionOptions{Overwrite: true})
			mu.Lock()
			for _, d := range orphans {
				orphaned[d]++
			}
			mu.Unlock()
			return err
		})
		for _, err := range errs {
			must(t, err)
		}
		final, err := s.ChartVersion(ctx, "charts", "web", "1.0.0")
		must(t, err)
		if len(orphaned) != Racers-1 || orphaned[final.Digest] != 0 {
			t.Fatalf("orphans reported %v, want every digest but the final %s once", orphaned, final.Digest)
		}
		for i := range Racers {
			d := Digest(fmt.Sprint("overwrite ", i))
			ok, err := s.BlobReferenced(ctx, d)
			must(t, err)
			if ok != (d == final.Digest) || (d != final.Digest && orphaned[d] != 1) {
				t.Fatalf("blob %d: referenced=%v, reported orphaned %d times", i, ok, orphaned[d])
			}
		}
	})
	t.Run("PutWhileDeletingRepository", func(t *testing.T) {
		// Uploads racing the deletion of their repository either land
		// before it (and their blobs are among its orphans) or fail with
		// ENOTFOUND; nothing stays referenced.
		s := open(t)
		mustRepo(t, s, "charts", "")
		mustPut(t, s, chart("charts", "web", "0.0.1"))
		var deleteOrphans []string
		errs := race(Racers, func(i int) error {
			if i == Racers/2 {
				var err error
				deleteOrphans, err = s.DeleteRepository(ctx, "charts")
				return err
			}
			_, _, _, err := s.PutChartVersion(ctx, chart("charts", "web", fmt.Sprintf("1.0.%d", i)), chartctl.PutVersionOptions{})
			return err
		})
		for i, err := range errs {
			d := Digest(fmt.Sprintf("charts/web-1.0.%d", i))
			switch {
			case i == Racers/2:
				must(t, err)
			case err == nil:
				if !slices.Contains(deleteOrphans, d) {
					t.Fatalf("upload %d landed but its blob is not among the repository's orphans", i)
				}
			default:
				wantCode(t, err, chartctl.ENOTFOUND)
			}
			ok, err := s.BlobReferenced(ctx, d)
			must(t, err)
			if ok {
				t.Fatalf("blob of upload %d still referenced after its repository was deleted", i)
			}
		}
		_, err := s.Repository(ctx, "charts")
		wantCode(t, err, chartctl.ENOTFOUND)
	})
	t.Run("RedeemCode", func(t *testing.T) {
		s := open(t)
		exp := base.Add(time.Hour)
		must(t, s.CreateAuthorizationCode(ctx, code("c", "g", exp)))
		errs := race(Racers, func(i int) error {
			return s.RedeemAuthorizationCode(ctx, []byte("c"), base, func(*chartctl.AuthorizationCode) ([]*chartctl.OAuthToken, error) {
				return tokens(fmt.Sprint("t", i), "g", "", exp), nil
			})
		})
		wantWinner(t, errs, chartctl.ECONFLICT)
	})
	t.Run("RotateRefreshToken", func(t *testing.T) {
		s := open(t)
		exp := base.Add(time.Hour)
		must(t, s.CreateAuthorizationCode(ctx, code("c", "g", exp)))
		must(t, s.RedeemAuthorizationCode(ctx, []byte("c"), base, func(*chartctl.AuthorizationCode) ([]*chartctl.OAuthToken, error) {
			return tokens("t", "g", "", exp), nil
		}))
		errs := race(Racers, func(i int) error {
			return s.RotateRefreshToken(ctx, []byte("t-refresh"), base, func(tok *chartctl.OAuthToken) ([]*chartctl.OAuthToken, error) {
				return tokens(fmt.Sprint("r", i), "g", tok.ID, exp), nil
			})
		})
		wantWinner(t, errs, chartctl.ECONFLICT)
	})
	t.Run("TouchAPIKeys", func(t *testing.T) {
		s := open(t)
		u := mustUser(t, s, "ada@example.com")
		k := &chartctl.APIKey{UserID: u.ID, Name: "k", Hash: []byte("h")}
		must(t, s.CreateAPIKey(ctx, k))
		errs := race(Racers, func(i int) error {
			return s.TouchAPIKeys(ctx, map[string]time.Time{k.ID: base.Add(time.Duration(i) * time.Second)})
		})
		for _, err := range errs {
			must(t, err)
		}
		got, err := s.APIKeyByHash(ctx, []byte("h"))
		must(t, err)
		if got.LastUsedAt == nil || !sameTime(*got.LastUsedAt, base.Add((Racers-1)*time.Second)) {
			t.Fatalf("LastUsedAt = %v, want the latest touch", got.LastUsedAt)
		}
	})
}

// wantWinner checks that exactly one call succeeded and every other failed
// with code.
func wantWinner(tb testing.TB, errs []error, code string) {
	tb.Helper()
	counts := countCodes(errs)
	if counts[""] != 1 || counts[code] != len(errs)-1 {
		for _, err := range errs {
			if c := chartctl.ErrorCode(err); c != "" && c != code {
				tb.Fatalf("racers: %v; unexpected error: %v", counts, err)
			}
		}
		tb.Fatalf("racers: %v, want one success and %d %s", counts, len(errs)-1, code)
	}
}

// testHostileKeys: lookups by keys no record can have (a NUL, invalid
// UTF-8: what a crafted URL path brings) find nothing, as ENOTFOUND, never
// an internal error; keys that cannot be stored are EINVALID; free text in
// invalid UTF-8 is stored with U+FFFD in place of the bad bytes (as JSON
// does).
func testHostileKeys(t *testing.T, open Open) {
	s := open(t)
	u := mustUser(t, s, "ada@example.com")
	mustOrg(t, s, "acme", u.ID)
	mustRepo(t, s, "charts", "acme")
	mustTeam(t, s, "team", "acme")
	mustPut(t, s, chart("charts", "web", "1.0.0"))
	for _, bad := range []string{"bad\x00key", "bad\xffkey", "\xc3("} {
		notFound := func(what string, err error) {
			t.Helper()
			if chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
				t.Fatalf("%s(%q): %q (%v), want %q", what, bad, chartctl.ErrorCode(err), err, chartctl.ENOTFOUND)
			}
		}
		_, err := s.User(ctx, bad)
		notFound("User", err)
		_, err = s.UserByEmail(ctx, bad)
		notFound("UserByEmail", err)
		notFound("DeleteAPIKey", s.DeleteAPIKey(ctx, u.ID, bad))
		_, err = s.Organization(ctx, bad)
		notFound("Organization", err)
		_, err = s.Repository(ctx, bad)
		notFound("Repository", err)
		_, err = s.DeleteRepository(ctx, bad)
		notFound("DeleteRepository", err)
		_, err = s.ChartVersion(ctx, bad, "web", "1.0.0")
		notFound("ChartVersion repo", err)
		_, err = s.ChartVersion(ctx, "charts", bad, "1.0.0")
		notFound("ChartVersion name", err)
		_, err = s.ChartVersion(ctx, "charts", "web", bad)
		notFound("ChartVersion version", err)
		_, _, err = s.ChartVersionPage(ctx, bad, chartctl.ChartFilter{}, 0, 10)
		notFound("ChartVersionPage", err)
		cvs, total, err := s.ChartVersionPage(ctx, "charts", chartctl.ChartFilter{Name: bad, Version: bad}, 0, 10)
		if err != nil || len(cvs) != 0 || total != 0 {
			t.Fatalf("ChartVersionPage filtered by %q: %d, %d, %v", bad, len(cvs), total, err)
		}
		_, _, err = s.DeleteChartVersion(ctx, "charts", bad, "1.0.0")
		notFound("DeleteChartVersion", err)
		_, err = s.IndexEntries(ctx, bad)
		notFound("IndexEntries", err)
		_, err = s.IndexEntry(ctx, "charts", "web", bad)
		notFound("IndexEntry", err)
		_, err = s.Team(ctx, bad)
		notFound("Team", err)
		_, err = s.Members(ctx, bad)
		notFound("Members", err)
		_, err = s.Member(ctx, "team", bad)
		notFound("Member", err)
		_, err = s.UpdateMemberRole(ctx, "team", bad, chartctl.RoleOwner)
		notFound("UpdateMemberRole", err)
		notFound("RemoveMember", s.RemoveMember(ctx, "team", bad))
		_, err = s.OAuthClient(ctx, bad)
		notFound("OAuthClient", err)

		keys, err := s.APIKeys(ctx, bad)
		if err != nil || len(keys) != 0 {
			t.Fatalf("APIKeys(%q) = %v, %v", bad, keys, err)
		}
		teams, err := s.Teams(ctx, bad)
		if err != nil || len(teams) != 0 {
			t.Fatalf("Teams(%q) = %v, %v", bad, teams, err)
		}
		roles, err := s.OrgRoles(ctx, bad, bad)
		if err != nil || len(roles) != 0 {
			t.Fatalf("OrgRoles(%q) = %v, %v", bad, roles, err)
		}
		ok, err := s.BlobReferenced(ctx, bad)
		if err != nil || ok {
			t.Fatalf("BlobReferenced(%q) = %v, %v", bad, ok, err)
		}
		must(t, s.TouchAPIKeys(ctx, map[string]time.Time{bad: base}))
	}

	wantCode(t, s.CreateUser(ctx, &chartctl.User{Email: "nul\x00@example.com"}), chartctl.EINVALID)
	wantCode(t, s.AddMember(ctx, &chartctl.Member{Team: "team", Email: "nul\x00@example.com"}), chartctl.EINVALID)
	for _, cv := range []*chartctl.ChartVersion{chart("charts", "we\x00b", "1.0.0"), chart("charts", "web", "1.0.\x00")} {
		_, _, _, err := s.PutChartVersion(ctx, cv, chartctl.PutVersionOptions{})
		wantCode(t, err, chartctl.EINVALID)
	}

	r := &chartctl.Repository{Name: "latin1", Description: "caf\xe9 cr\xe8me"}
	must(t, s.CreateRepository(ctx, r))
	got, err := s.Repository(ctx, "latin1")
	must(t, err)
	if got.Description != "caf\uFFFD cr\uFFFDme" {
		t.Fatalf("description stored as %q", got.Description)
	}
}
