package bolt_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/chartctl/chartctl/internal/bolt"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/token"
)

// copySchema1 copies the data dir written by the release before schema
// versions (testdata/schema1) and returns the database file's path.
func copySchema1(t *testing.T) (dbPath, dataDir string) {
	t.Helper()
	return copyDataDir(t, "schema1")
}

// copyDataDir copies testdata/NAME/data and returns the database file's
// path and the copy's directory.
func copyDataDir(t *testing.T, name string) (dbPath, dataDir string) {
	t.Helper()
	src := filepath.Join("testdata", name, "data")
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o700)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dst, "chartctl.db"), dst
}

// dump returns every key and value of the database file, nested buckets
// included, for comparing two states.
func dump(t *testing.T, path string) map[string]string {
	t.Helper()
	bdb, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	out := map[string]string{}
	var walk func(prefix string, b *bbolt.Bucket) error
	walk = func(prefix string, b *bbolt.Bucket) error {
		return b.ForEach(func(k, v []byte) error {
			if v == nil {
				return walk(prefix+string(k)+"/", b.Bucket(k))
			}
			out[prefix+string(k)] = string(v)
			return nil
		})
	}
	err = bdb.View(func(tx *bbolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bbolt.Bucket) error {
			if string(name) == "index_gen" {
				// Derived and random: Open gives each repository one
				// (TestOpenAssignsIndexGenerations).
				return nil
			}
			return walk(string(name)+"/", b)
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func scopeNames(k *chartctl.APIKey) string { return k.Scopes.String() }

// TestUpgradeFromSchema1 opens a data dir written by the release before
// schema versions: every record stays readable, keys holding the six
// original scopes gain keys:write and admin (CONTRACT §13), narrower keys
// do not, SemVer-equal pairs stay readable, and opening again changes
// nothing.
func TestUpgradeFromSchema1(t *testing.T) {
	path, dir := copySchema1(t)
	before := dump(t, path)
	if _, ok := before["meta/schema_version"]; ok {
		t.Fatal("test data already has a schema version")
	}
	db := mustOpen(t, path)
	ctx := t.Context()
	if v, err := db.SchemaVersionOf(); err != nil || v != bolt.SchemaVersion {
		t.Fatalf("schema version after upgrade = %d, %v", v, err)
	}

	n, err := db.UserCount(ctx)
	if err != nil || n != 4 {
		t.Fatalf("users = %d, %v", n, err)
	}
	users := map[string]*chartctl.User{}
	for _, email := range []string{"admin@localhost", "ada@example.com", "ops@example.com", "ci@example.com"} {
		u, err := db.UserByEmail(ctx, email)
		if err != nil {
			t.Fatalf("user %s: %v", email, err)
		}
		users[email] = u
	}
	if !users["admin@localhost"].Admin || !users["ops@example.com"].Admin || users["ada@example.com"].Admin || users["ci@example.com"].PasswordHash != "" {
		t.Error("user records changed")
	}

	all := "repo:read repo:write team:read team:write org:read org:write keys:write admin"
	wantKeys := map[string]map[string]string{
		"admin@localhost": {"initial admin key": all, "admin read": "repo:read"},
		"ops@example.com": {"ops all": all},
		"ci@example.com":  {"ci narrow": "repo:read repo:write"},
	}
	for email, want := range wantKeys {
		keys, err := db.APIKeys(ctx, users[email].ID)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, k := range keys {
			got[k.Name] = scopeNames(k)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s keys = %v, want %v", email, got, want)
		}
	}
	// The initial key still authenticates, now with admin.
	var initial struct {
		APIKey string `json:"api_key"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "initial-admin.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &initial); err != nil {
		t.Fatal(err)
	}
	k, err := db.APIKeyByHash(ctx, token.Hash(initial.APIKey))
	if err != nil || !k.Scopes.Allows(chartctl.ScopeAdmin) || !k.Scopes.Allows(chartctl.ScopeKeysWrite) {
		t.Fatalf("initial key after upgrade: %+v, %v", k, err)
	}

	if o, err := db.Organization(ctx, "acme"); err != nil || o.Description != "Acme Inc." {
		t.Errorf("organization: %+v, %v", o, err)
	}
	roles, err := db.OrgRoles(ctx, users["ada@example.com"].ID, "ada@example.com")
	if err != nil || roles["acme"] != chartctl.RoleMaintainer {
		t.Errorf("ada's roles = %v, %v", roles, err)
	}
	members, err := db.Members(ctx, "platform")
	if err != nil || len(members) != 2 {
		t.Errorf("members = %v, %v", members, err)
	}
	repos, err := db.Repositories(ctx)
	if err != nil || len(repos) != 3 {
		t.Fatalf("repositories = %v, %v", repos, err)
	}
	wantVersions := map[string]string{
		"public-charts":  "web-1.1.0 web-1.0.0 web-v1.0.0",
		"acme-private":   "api-0.1.0 api-0.1.0+build.7",
		"admin-personal": "tool-2.0.0",
	}
	for repo, want := range wantVersions {
		cvs, err := db.ChartVersions(ctx, repo, chartctl.ChartFilter{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, cv := range cvs {
			got = append(got, cv.Name+"-"+cv.Version)
			if _, err := db.ChartVersion(ctx, repo, cv.Name, cv.Version); err != nil {
				t.Errorf("%s %s %s: %v", repo, cv.Name, cv.Version, err)
			}
			if ok, err := db.BlobReferenced(ctx, cv.Digest); err != nil || !ok {
				t.Errorf("blob of %s %s not referenced", cv.Name, cv.Version)
			}
		}
		if g := strings.Join(got, " "); !sameWords(g, want) {
			t.Errorf("%s versions = %s, want %s", repo, g, want)
		}
		entries, err := db.IndexEntries(ctx, repo)
		if err != nil || len(entries) != len(cvs) {
			t.Errorf("%s index entries = %d, %v", repo, len(entries), err)
		}
	}
	prov, err := db.ChartVersion(ctx, "public-charts", "web", "1.1.0")
	if err != nil || prov.ProvDigest == "" {
		t.Errorf("provenance of web 1.1.0: %+v, %v", prov, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	// Opening again is a no-op.
	upgraded := dump(t, path)
	db2, err := bolt.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := db2.Close(); err != nil {
		t.Fatal(err)
	}
	if again := dump(t, path); !reflect.DeepEqual(upgraded, again) {
		t.Error("re-opening an upgraded database changed it")
	}
}

func sameWords(a, b string) bool {
	x, y := strings.Fields(a), strings.Fields(b)
	if len(x) != len(y) {
		return false
	}
	seen := map[string]int{}
	for _, w := range x {
		seen[w]++
	}
	for _, w := range y {
		seen[w]--
	}
	for _, n := range seen {
		if n != 0 {
			return false
		}
	}
	return true
}

// TestNewStoreHasCurrentSchema: a new database is stamped with the current
// version and needs no upgrade.
func TestNewStoreHasCurrentSchema(t *testing.T) {
	db, _ := setup(t)
	if v, err := db.SchemaVersionOf(); err != nil || v != bolt.SchemaVersion {
		t.Fatalf("schema version = %d, %v", v, err)
	}
}

// TestNewerSchemaRefused: a data dir written by a newer chartctl is
// refused with a message that says to upgrade, and is left untouched.
func TestNewerSchemaRefused(t *testing.T) {
	db, path := setup(t)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	bdb, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = bdb.Update(func(tx *bbolt.Tx) error {
		var buf [8]byte
		binary.BigEndian.PutUint64(buf[:], bolt.SchemaVersion+1)
		return tx.Bucket([]byte("meta")).Put([]byte("schema_version"), buf[:])
	})
	if err != nil {
		t.Fatal(err)
	}
	bdb.Close()
	before, _ := os.ReadFile(path)

	_, err = bolt.Open(path)
	if !errors.Is(err, bolt.ErrNewerSchema) {
		t.Fatalf("Open = %v, want ErrNewerSchema", err)
	}
	for _, want := range []string{fmt.Sprintf("written by a newer chartctl (schema %d)", bolt.SchemaVersion+1), fmt.Sprintf("this binary supports up to %d", bolt.SchemaVersion), "upgrade chartctl"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("a refused open changed the file")
	}
}

// TestUpgradeFromSchema5BindsToRepositories opens a data dir of the last
// schema-5 release, whose deleted repository "gone" left its webhook (with
// a pending delivery) and an upload session behind: the upgrade binds the
// webhook and the session of "kept" to its ID and drops those of "gone",
// so a new repository named "gone" inherits neither; the server-wide
// webhook, and kept's quota and retention policy, stay.
func TestUpgradeFromSchema5BindsToRepositories(t *testing.T) {
	path, _ := copyDataDir(t, "schema5")
	db := mustOpen(t, path)
	ctx := t.Context()
	if v, err := db.SchemaVersionOf(); err != nil || v != bolt.SchemaVersion || db.UpgradedFrom() != 5 {
		t.Fatalf("schema version after upgrade = %d, %v (from %d)", v, err, db.UpgradedFrom())
	}
	kept, err := db.Repository(ctx, "kept")
	if err != nil {
		t.Fatal(err)
	}
	hooks, err := db.Webhooks(ctx, "kept", "")
	if err != nil || len(hooks) != 1 || hooks[0].RepositoryID != kept.ID || hooks[0].URL != "https://hooks.example.invalid/kept" {
		t.Fatalf("kept's webhooks %+v, %v", hooks, err)
	}
	if hooks, err := db.Webhooks(ctx, "gone", ""); err != nil || len(hooks) != 0 {
		t.Fatalf("gone's webhooks survived the upgrade: %+v, %v", hooks, err)
	}
	if _, err := db.Webhook(ctx, "wh_01M8H9GQS18GVXG049H1E73E2B"); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Fatalf("gone's webhook: %v", err)
	}
	if hooks, err := db.Webhooks(ctx, "", ""); err != nil || len(hooks) != 1 {
		t.Fatalf("server-wide webhooks %+v, %v", hooks, err)
	}
	uploads, err := db.Uploads(ctx)
	if err != nil || len(uploads) != 1 || uploads[0].Name != "kept/app" || uploads[0].RepositoryID != kept.ID || uploads[0].Offset != 5 {
		t.Fatalf("uploads %+v, %v", uploads, err)
	}
	if q, _, err := db.Quota(ctx, chartctl.QuotaRepository, "kept"); err != nil || q.MaxVersions == nil || *q.MaxVersions != 5 {
		t.Fatalf("kept's quota %+v, %v", q, err)
	}
	if ps, err := db.RetentionPolicies(ctx); err != nil || len(ps) != 1 || ps["kept"] == nil || *ps["kept"].KeepLatest != 3 {
		t.Fatalf("retention policies %+v, %v", ps, err)
	}
	// A new repository of the name (its owner may take it at once) starts
	// with nothing of the old one.
	if err := db.CreateRepository(ctx, &chartctl.Repository{Name: "gone", OwnerID: kept.OwnerID}); err != nil {
		t.Fatal(err)
	}
	if hooks, err := db.Webhooks(ctx, "gone", ""); err != nil || len(hooks) != 0 {
		t.Fatalf("the new gone has webhooks %+v, %v", hooks, err)
	}
	// The dropped webhook's deliveries went with it: only the server-wide
	// webhook's delivery is still due.
	ds, err := db.ClaimDeliveries(ctx, time.Now().Add(time.Hour), time.Minute, 10, 10)
	if err != nil || len(ds) != 1 || ds[0].WebhookID != "wh_01M8H9GR11DQFV51BKYXH0JCXZ" {
		for _, d := range ds {
			t.Logf("due: %s of %s", d.ID, d.WebhookID)
		}
		t.Fatalf("due deliveries: %d, %v", len(ds), err)
	}
}

// TestUpgradeFromSchema6: a data dir of the release before alternate
// chart manifests (schema 6) opens at the current schema with nothing but
// its version rewritten: its manifest records are first manifests as they
// were.
func TestUpgradeFromSchema6(t *testing.T) {
	db, path := setup(t)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	bdb, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = bdb.Update(func(tx *bbolt.Tx) error {
		var buf [8]byte
		binary.BigEndian.PutUint64(buf[:], 6)
		return tx.Bucket([]byte("meta")).Put([]byte("schema_version"), buf[:])
	})
	bdb.Close()
	if err != nil {
		t.Fatal(err)
	}
	before := dump(t, path)
	db = mustOpen(t, path)
	if v, err := db.SchemaVersionOf(); err != nil || v != bolt.SchemaVersion || db.UpgradedFrom() != 6 {
		t.Fatalf("schema version after upgrade = %d (%v), upgraded from %d", v, err, db.UpgradedFrom())
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	after := dump(t, path)
	delete(before, "meta/schema_version")
	delete(after, "meta/schema_version")
	dropTagIndex(after) // built by the upgrade to schema 10
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Fatal("the upgrade from schema 6 rewrote records")
	}
}

// TestUpgradeFromSchema7KeepsKeysAndAddsAccess: a data dir of the release
// before robot accounts and repository roles (schema 7) upgrades to
// schema 8 with nothing but its version rewritten: its API keys still
// authenticate (and are unrestricted), its records read as before, and
// the access buckets are there and usable.
func TestUpgradeFromSchema7KeepsKeysAndAddsAccess(t *testing.T) {
	path, dir := copyDataDir(t, "schema7")
	before := dump(t, path)
	db := mustOpen(t, path)
	ctx := t.Context()
	if v, err := db.SchemaVersionOf(); err != nil || v != bolt.SchemaVersion || db.UpgradedFrom() != 7 {
		t.Fatalf("schema version after upgrade = %d, %v (from %d)", v, err, db.UpgradedFrom())
	}
	// Nothing but the version is rewritten: the new buckets start empty.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	after := dump(t, path)
	delete(before, "meta/schema_version")
	delete(after, "meta/schema_version")
	dropTagIndex(after) // built by the upgrade to schema 10
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Fatal("the upgrade from schema 7 rewrote records")
	}
	db = mustOpen(t, path)
	ciKey, err := os.ReadFile(filepath.Join("testdata", "schema7", "ci-key.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var initial struct {
		APIKey string `json:"api_key"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "initial-admin.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &initial); err != nil {
		t.Fatal(err)
	}
	ci, err := db.UserByEmail(ctx, "ci@example.com")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{strings.TrimSpace(string(ciKey)), initial.APIKey} {
		key, err := db.APIKeyByHash(ctx, token.Hash(k))
		if err != nil || key.Repositories != nil {
			t.Fatalf("key %.16s… after the upgrade: %+v, %v", k, key, err)
		}
	}
	repo, err := db.Repository(ctx, "acme-charts")
	if err != nil || repo.Organization != "acme" {
		t.Fatalf("repository %+v, %v", repo, err)
	}
	if cv, err := db.ChartVersion(ctx, "acme-charts", "web", "1.0.0"); err != nil || cv.Size != 292 {
		t.Fatalf("chart %+v, %v", cv, err)
	}

	// The access buckets work on the old data.
	team, err := db.Team(ctx, "platform")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.PutGrant(ctx, &chartctl.Grant{RepositoryID: repo.ID, Kind: chartctl.GrantTeam, SubjectID: team.ID, Role: chartctl.RepoRoleAdmin}); err != nil {
		t.Fatal(err)
	}
	if roles, err := db.GrantsFor(ctx, ci.ID, ci.Email); err != nil || roles[repo.ID] != chartctl.RepoRoleAdmin {
		t.Fatalf("GrantsFor(ci) = %v, %v", roles, err)
	}
	org, err := db.Organization(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	robot := &chartctl.Robot{OrganizationID: org.ID, Name: "release", Repositories: []string{"acme-*"},
		Permissions: chartctl.RobotPermissions{chartctl.RobotPush}, SecretHash: token.Hash("chartctl_rb_secret")}
	if err := db.CreateRobot(ctx, robot); err != nil {
		t.Fatal(err)
	}
	if r, err := db.RobotBySecretHash(ctx, token.Hash("chartctl_rb_secret")); err != nil || r.UserName() != "robot$acme+release" {
		t.Fatalf("robot %+v, %v", r, err)
	}
	pub := &chartctl.TrustedPublisher{RobotID: robot.ID, Issuer: "https://token.actions.githubusercontent.com", Audience: "chartctl",
		Claims: map[string]string{"repository": "acme/charts"}}
	if err := db.AddPublisher(ctx, pub); err != nil {
		t.Fatal(err)
	}
	exp := db.Now().Add(10 * time.Minute)
	if err := db.CreateExchangedCredential(ctx, &chartctl.ExchangedCredential{RobotID: robot.ID, PublisherID: pub.ID,
		Hash: token.Hash("chartctl_ex_x"), ExpiresAt: exp}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExchangedCredentialByHash(ctx, token.Hash("chartctl_ex_x")); err != nil {
		t.Fatal(err)
	}
	if fresh, err := db.RememberTokenID(ctx, pub.Issuer, "jti-1", exp); err != nil || !fresh {
		t.Fatalf("RememberTokenID = %v, %v", fresh, err)
	}
	wantCode(t, db.DeleteOrganization(ctx, "acme"), chartctl.ECONFLICT)
}

// TestUpgradeFromSchema8KeepsUsersAndBindsIdentities: a data dir of the
// release before single sign-on (schema 8) upgrades to schema 9 with
// nothing but its version rewritten: its users read as local accounts,
// their keys still authenticate, and a user can then be bound to an
// identity provider's account and found by it.
func TestUpgradeFromSchema8KeepsUsersAndBindsIdentities(t *testing.T) {
	path, _ := copyDataDir(t, "schema8")
	before := dump(t, path)
	db := mustOpen(t, path)
	ctx := t.Context()
	if v, err := db.SchemaVersionOf(); err != nil || v != bolt.SchemaVersion || db.UpgradedFrom() != 8 {
		t.Fatalf("schema version after upgrade = %d, %v (from %d)", v, err, db.UpgradedFrom())
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	after := dump(t, path)
	delete(before, "meta/schema_version")
	delete(after, "meta/schema_version")
	dropTagIndex(after) // built by the upgrade to schema 10
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Fatal("the upgrade from schema 8 rewrote records")
	}
	db = mustOpen(t, path)
	ciKey, err := os.ReadFile(filepath.Join("testdata", "schema8", "ci-key.txt"))
	if err != nil {
		t.Fatal(err)
	}
	key, err := db.APIKeyByHash(ctx, token.Hash(strings.TrimSpace(string(ciKey))))
	if err != nil {
		t.Fatalf("the CI key after the upgrade: %v", err)
	}
	ci, err := db.User(ctx, key.UserID)
	if err != nil || ci.Email != "ci@example.com" || !ci.Identity.Local() {
		t.Fatalf("CI user after the upgrade: %+v, %v", ci, err)
	}
	id := chartctl.Identity{Provider: chartctl.ProviderOIDC, Issuer: "https://dex.example.com", Subject: "ci"}
	if _, err := db.UpdateUser(ctx, ci.ID, chartctl.UserUpdate{Identity: &id}); err != nil {
		t.Fatal(err)
	}
	if got, err := db.UserByIdentity(ctx, id); err != nil || got.ID != ci.ID {
		t.Fatalf("UserByIdentity after binding: %+v, %v", got, err)
	}
	// The team membership recorded for the email is still there.
	if roles, err := db.OrgRoles(ctx, ci.ID, ci.Email); err != nil || len(roles) == 0 {
		t.Fatalf("org roles of the upgraded user: %v, %v", roles, err)
	}
}

// upgradeAdds opens a copy of testdata/name (a data dir of schema from)
// once and closes it, failing the test if the upgrade wrote or removed
// anything but keys under the prefixes of the indexes it builds; it
// returns the copy's database path and how many keys each prefix gained.
func upgradeAdds(t *testing.T, name string, from int, indexes ...string) (string, map[string]int) {
	t.Helper()
	path, _ := copyDataDir(t, name)
	before := dump(t, path)
	db := mustOpen(t, path)
	if v, err := db.SchemaVersionOf(); err != nil || v != bolt.SchemaVersion || db.UpgradedFrom() != from {
		t.Fatalf("schema version after upgrade = %d, %v (from %d)", v, err, db.UpgradedFrom())
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	after := dump(t, path)
	added := map[string]int{}
	indexed := 0
	for k, v := range after {
		if k == "meta/schema_version" {
			continue
		}
		if i := slices.IndexFunc(indexes, func(p string) bool { return strings.HasPrefix(k, p) }); i >= 0 {
			added[indexes[i]]++
			indexed++
		} else if before[k] != v {
			t.Errorf("the upgrade from schema %d wrote %q", from, k)
		}
	}
	if len(after)-indexed != len(before) {
		t.Errorf("the upgrade from schema %d removed records: %d keys before, %d after (%d of its indexes)", from, len(before), len(after), indexed)
	}
	return path, added
}

// TestUpgradeFromSchema9BuildsTagIndex: a data dir of the release before
// the OCI tag index (schema 9) upgrades to schema 10 in place: the index
// is built from the stored versions (tags in byte order, '+' written
// '_', each chart's own), and nothing but the version and the new
// bucket is written.
func TestUpgradeFromSchema9BuildsTagIndex(t *testing.T) {
	path, _ := upgradeAdds(t, "schema9", 9, "chart_tags/")
	db := mustOpen(t, path)
	ctx := t.Context()
	tags, more, err := db.ChartTags(ctx, "acme-charts", "web", "", -1)
	if want := []string{"1.0.0", "1.1.0_build.7", "1.1.1-rc.1", "2.0.0"}; err != nil || more || !slices.Equal(tags, want) {
		t.Fatalf("ChartTags(web) after the upgrade = %q, %v, %v; want %q", tags, more, err, want)
	}
	tags, more, err = db.ChartTags(ctx, "acme-charts", "web", "1.1.0_build.7", 1)
	if err != nil || !more || !slices.Equal(tags, []string{"1.1.1-rc.1"}) {
		t.Fatalf("ChartTags(web, after 1.1.0_build.7, 1) = %q, %v, %v", tags, more, err)
	}
	if names, err := db.ChartNames(ctx); err != nil || !slices.Equal(names, []string{"acme-charts/web", "acme-charts/web-app"}) {
		t.Fatalf("ChartNames after the upgrade = %q, %v", names, err)
	}
	// A version deleted after the upgrade leaves the index.
	if _, _, err := db.DeleteChartVersion(ctx, "acme-charts", "web", "1.1.0+build.7"); err != nil {
		t.Fatal(err)
	}
	if tags, _, err := db.ChartTags(ctx, "acme-charts", "web", "", -1); err != nil || !slices.Equal(tags, []string{"1.0.0", "1.1.1-rc.1", "2.0.0"}) {
		t.Fatalf("ChartTags(web) after a delete = %q, %v", tags, err)
	}
}

// dropTagIndex removes the keys of the chart tag index (schema 10) from a
// dump: the upgrade to schema 10 builds it from the stored versions, and
// TestUpgradeFromSchema9BuildsTagIndex checks what it holds.
func dropTagIndex(d map[string]string) {
	for k := range d {
		if strings.HasPrefix(k, "chart_tags/") {
			delete(d, k)
		}
	}
}

// TestUpgradeFromSchema9KeepsTeamsUnbound opens a data dir written by the
// release before team sync (schema 9) in place (its own data dir,
// schema9-teams, holds a team): nothing is rewritten, its
// team reads as unbound with its member, the CI key still authenticates,
// and the team can then be bound and SCIM records stored.
func TestUpgradeFromSchema9KeepsTeamsUnbound(t *testing.T) {
	db := upgradedFromSchema9(t, "schema9-teams")
	ctx := t.Context()
	ciKey, err := os.ReadFile(filepath.Join("testdata", "schema9-teams", "ci-key.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.APIKeyByHash(ctx, token.Hash(strings.TrimSpace(string(ciKey)))); err != nil {
		t.Fatalf("the CI key after the upgrade: %v", err)
	}
	team, err := db.Team(ctx, "platform")
	if err != nil || team.Bound() || team.MemberCount != 1 {
		t.Fatalf("team after the upgrade: %+v, %v", team, err)
	}
	if team, err = db.SetTeamIDPGroups(ctx, "platform", []string{"platform-admins"}); err != nil || !team.Bound() {
		t.Fatalf("binding the upgraded team: %+v, %v", team, err)
	}
	if err := db.PutSCIMGroup(ctx, &chartctl.SCIMGroup{DisplayName: "platform-admins"}); err != nil {
		t.Fatalf("a SCIM group in the upgraded store: %v", err)
	}
}

// TestUpgradeKeepsYAMLIndexes: repositories of a schema-9 data dir, stored
// before index formats, read as yaml (the index they served), while new
// ones take the format they are created with.
func TestUpgradeKeepsYAMLIndexes(t *testing.T) {
	path, _ := copyDataDir(t, "schema9")
	db := mustOpen(t, path)
	ctx := t.Context()
	repos, err := db.Repositories(ctx)
	if err != nil || len(repos) == 0 {
		t.Fatalf("repositories: %v (%d)", err, len(repos))
	}
	for _, r := range repos {
		if r.IndexFormat != chartctl.IndexYAML {
			t.Errorf("repository %s of the old data dir: index format %q, want yaml", r.Name, r.IndexFormat)
		}
	}
	if err := db.CreateRepository(ctx, &chartctl.Repository{Name: "fresh", IndexFormat: chartctl.IndexJSON}); err != nil {
		t.Fatal(err)
	}
	if r, err := db.Repository(ctx, "fresh"); err != nil || r.IndexFormat != chartctl.IndexJSON {
		t.Fatalf("new repository: %+v, %v", r, err)
	}
}

// TestUpgradeFromSchema9KeepsChartsAndStoresVerification opens a data dir
// written by the release before issue #30 (testdata/schema9-trust): the upgrade
// rewrites nothing, the stored chart has no verification record until the
// background job verifies it, and trust entries and verification records
// can be stored and read back (and go with their organization).
func TestUpgradeFromSchema9KeepsChartsAndStoresVerification(t *testing.T) {
	db := upgradedFromSchema9(t, "schema9-trust")
	ctx := t.Context()
	cv, err := db.ChartVersion(ctx, "acme-charts", "web", "1.0.0")
	if err != nil || cv.Verification != nil {
		t.Fatalf("chart after the upgrade: %+v, %v", cv, err)
	}
	org, err := db.Organization(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	e := &chartctl.TrustEntry{Scope: chartctl.TrustScopeOrganization, ScopeID: org.ID, Name: "release",
		Kind: chartctl.TrustCosignKey, Key: []byte("-----BEGIN PUBLIC KEY-----\n")}
	if err := db.AddTrustEntry(ctx, e); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	v := &chartctl.Verification{Status: chartctl.VerificationVerified, CheckedAt: now,
		Signatures: []chartctl.Signature{{Kind: chartctl.SignatureCosign, Identity: "release", Trust: "release", VerifiedAt: &now}}}
	if err := db.SetVerification(ctx, "acme-charts", "web", "1.0.0", cv.Digest, v, nil, nil); err != nil {
		t.Fatal(err)
	}
	got, err := db.ChartVersion(ctx, "acme-charts", "web", "1.0.0")
	if err != nil || got.Verification == nil || got.Verification.SignedBy() != "release" {
		t.Fatalf("verification after SetVerification: %+v, %v", got.Verification, err)
	}
	if entries, err := db.TrustEntries(ctx, chartctl.TrustScopeOrganization, org.ID); err != nil || len(entries) != 1 {
		t.Fatalf("trust entries: %v, %v", entries, err)
	}
}

// TestUpgradeFromSchema9KeepsDataAndTakesPolicies: a data dir of the
// release before admission policies (schema 9, testdata/schema9-trust)
// upgrades to the current schema
// with nothing but its version rewritten; its chart stays, and its
// repository and organization can then be given policies.
func TestUpgradeFromSchema9KeepsDataAndTakesPolicies(t *testing.T) {
	db := upgradedFromSchema9(t, "schema9-trust")
	ctx := t.Context()
	if _, err := db.ChartVersion(ctx, "acme-charts", "web", "1.0.0"); err != nil {
		t.Fatalf("the chart after the upgrade: %v", err)
	}
	repo, err := db.Repository(ctx, "acme-charts")
	if err != nil {
		t.Fatal(err)
	}
	org, err := db.Organization(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if p, err := db.Policy(ctx, chartctl.PolicyRepository, repo.ID); err != nil || p != nil {
		t.Fatalf("policy of an upgraded repository: %+v, %v", p, err)
	}
	pol := chartctl.DefaultPolicy()
	pol.Lint = chartctl.LintError
	if err := db.SetPolicy(ctx, chartctl.PolicyOrganization, org.ID, &pol); err != nil {
		t.Fatal(err)
	}
	if err := db.SetPolicy(ctx, chartctl.PolicyRepository, repo.ID, &pol); err != nil {
		t.Fatal(err)
	}
	if all, err := db.Policies(ctx); err != nil || len(all) != 2 {
		t.Fatalf("policies after the upgrade: %+v, %v", all, err)
	}
}

// upgradedFromSchema9 opens a copy of testdata/dir, a data dir of schema
// 9, and checks that the upgrade to this schema rewrote nothing: only the
// version changes and the tag index (schema 10) is built.
func upgradedFromSchema9(t *testing.T, dir string) *bolt.DB {
	t.Helper()
	path, _ := copyDataDir(t, dir)
	before := dump(t, path)
	db := mustOpen(t, path)
	if v, err := db.SchemaVersionOf(); err != nil || v != bolt.SchemaVersion || db.UpgradedFrom() != 9 {
		t.Fatalf("schema version after upgrade = %d, %v (from %d)", v, err, db.UpgradedFrom())
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	after := dump(t, path)
	delete(before, "meta/schema_version")
	delete(after, "meta/schema_version")
	for k := range after {
		if strings.HasPrefix(k, "chart_tags/") {
			delete(after, k)
		}
	}
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Fatal("the upgrade from schema 9 rewrote records")
	}
	return mustOpen(t, path)
}

// TestUpgradeFromSchema9HoldsNothingAndCanHold: an old data dir upgrades
// with no version held and every version listed and indexed as before;
// a version stored held afterwards is left out of listings and the index,
// then released.
func TestUpgradeFromSchema9HoldsNothingAndCanHold(t *testing.T) {
	db := upgradedFromSchema9(t, "schema9-trust")
	ctx := t.Context()
	before, err := db.ChartVersions(ctx, "acme-charts", chartctl.ChartFilter{})
	if err != nil || len(before) == 0 {
		t.Fatalf("versions after the upgrade: %d, %v", len(before), err)
	}
	for _, cv := range before {
		if cv.Held() {
			t.Fatalf("%s@%s is held after the upgrade", cv.Name, cv.Version)
		}
	}
	if held, err := db.HeldChartVersions(ctx, time.Now().Add(24*time.Hour)); err != nil || len(held) != 0 {
		t.Fatalf("held versions after the upgrade: %d, %v", len(held), err)
	}
	until := time.Now().Add(10 * time.Minute).UTC()
	cv := &chartctl.ChartVersion{Repository: "acme-charts", Name: "held", Version: "0.1.0", Digest: "sha256:" + strings.Repeat("ab", 32),
		Size: 10, HeldUntil: &until, IndexEntry: []byte("x")}
	if _, _, _, err := db.PutChartVersion(ctx, cv, chartctl.PutVersionOptions{}); err != nil {
		t.Fatal(err)
	}
	after, err := db.ChartVersions(ctx, "acme-charts", chartctl.ChartFilter{})
	if err != nil || len(after) != len(before) {
		t.Fatalf("versions with one held: %d, %v; want %d", len(after), err, len(before))
	}
	entries, err := db.IndexEntries(ctx, "acme-charts")
	if err != nil || len(entries) != len(before) {
		t.Fatalf("index entries with one held: %d, %v; want %d", len(entries), err, len(before))
	}
	if err := db.ReleaseChartVersion(ctx, "acme-charts", "held", "0.1.0", cv.Digest, []byte("name: held\n"), nil); err != nil {
		t.Fatal(err)
	}
	if entries, err := db.IndexEntries(ctx, "acme-charts"); err != nil || len(entries) != len(before)+1 {
		t.Fatalf("index entries after the release: %d, %v; want %d", len(entries), err, len(before)+1)
	}
}

// TestUpgradeFromSchema9KeepsVersionsAndTakesVerdicts: a data dir of
// schema 9 upgrades with nothing rewritten (upgradedFromSchema9); its
// stored version reads with no admission verdict, and then keeps the
// verdict a policy re-check records, next to its other fields.
func TestUpgradeFromSchema9KeepsVersionsAndTakesVerdicts(t *testing.T) {
	db := upgradedFromSchema9(t, "schema9-trust")
	ctx := t.Context()
	cv, err := db.ChartVersion(ctx, "acme-charts", "web", "1.0.0")
	if err != nil {
		t.Fatalf("the chart after the upgrade: %v", err)
	}
	if cv.Policy != nil {
		t.Fatalf("an upgraded version has a verdict: %+v", cv.Policy)
	}
	at := time.Date(2026, 11, 29, 1, 2, 3, 0, time.UTC)
	verdict := &chartctl.VersionPolicy{CheckedAt: at, PolicyAt: at.Add(-time.Minute), Findings: []chartctl.Finding{
		{Rule: chartctl.RuleRequiredFields, Severity: chartctl.SeverityError, Message: "Chart.yaml lacks sources"},
	}}
	if err := db.SetVersionPolicy(ctx, "acme-charts", "web", "1.0.0", "sha256:0000", verdict); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Fatalf("a verdict for another archive: %v, want ENOTFOUND", err)
	}
	if err := db.SetVersionPolicy(ctx, "acme-charts", "web", "1.0.0", cv.Digest, verdict); err != nil {
		t.Fatal(err)
	}
	got, err := db.ChartVersion(ctx, "acme-charts", "web", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if !got.Policy.Noncompliant() || !got.Policy.CheckedAt.Equal(at) || got.Policy.Findings[0].Message != "Chart.yaml lacks sources" {
		t.Fatalf("verdict after the upgrade: %+v", got.Policy)
	}
	if got.Digest != cv.Digest || got.Size != cv.Size || string(got.Metadata) != string(cv.Metadata) {
		t.Fatalf("recording a verdict changed the version: %+v", got)
	}
}

// TestUpgradeFromSchema9TakesReplications: an upgraded data dir keeps its
// charts and takes replications, whose tasks a new push queues.
func TestUpgradeFromSchema9TakesReplications(t *testing.T) {
	db := upgradedFromSchema9(t, "schema9-trust")
	ctx := t.Context()
	r := &chartctl.Replication{Name: "dr", Source: "acme-charts", Target: "oci://registry.example/acme", On: []chartctl.ReplicationOp{chartctl.ReplicationPush}}
	if err := db.CreateReplication(ctx, r); err != nil {
		t.Fatalf("create a replication after the upgrade: %v", err)
	}
	if err := db.EnqueueReplicationTasks(ctx, "dr", []*chartctl.ReplicationTask{{Op: chartctl.ReplicationPush, Chart: "web", Version: "1.0.0"}}); err != nil {
		t.Fatal(err)
	}
	if st, err := db.ReplicationStatus(ctx, "dr"); err != nil || st.Pending != 1 {
		t.Fatalf("status after the upgrade: %+v, %v", st, err)
	}
}

// TestUpgradeFromSchema9KeepsRenderings: an upgraded data dir starts with
// no rendering kept (the images job renders its versions), keeps one for
// a stored version's archive, and prunes only those of archives no
// version holds.
func TestUpgradeFromSchema9KeepsRenderings(t *testing.T) {
	db := upgradedFromSchema9(t, "schema9-trust")
	ctx := t.Context()
	if got, err := db.RenderedDigests(ctx); err != nil || len(got) != 0 {
		t.Fatalf("renderings after the upgrade: %q, %v", got, err)
	}
	cv, err := db.ChartVersion(ctx, "acme-charts", "web", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	gone := "sha256:" + strings.Repeat("cd", 32)
	for _, d := range []string{cv.Digest, gone} {
		if _, err := db.SaveImages(ctx, []chartctl.FoundImages{{Repository: "x", Name: "x", Version: "1.0.0", Digest: d, Rendered: []byte("rendering of " + d)}}); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := db.PruneRendered(ctx); err != nil || n != 1 {
		t.Fatalf("PruneRendered = %d, %v; want 1", n, err)
	}
	if b, err := db.Rendered(ctx, cv.Digest); err != nil || string(b) != "rendering of "+cv.Digest {
		t.Fatalf("the stored version's rendering: %q, %v", b, err)
	}
	if _, err := db.Rendered(ctx, gone); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Fatalf("a pruned rendering: %v, want ENOTFOUND", err)
	}
}

// TestOpenAssignsIndexGenerations: a data dir of a release before index
// generations (schema9-trust) opens with one for every repository, kept
// across opens and replaced by a change.
func TestOpenAssignsIndexGenerations(t *testing.T) {
	db := upgradedFromSchema9(t, "schema9-trust")
	ctx := t.Context()
	repos, err := db.Repositories(ctx)
	if err != nil || len(repos) == 0 {
		t.Fatalf("repositories: %d, %v", len(repos), err)
	}
	first := map[string]string{}
	for _, r := range repos {
		g, err := db.IndexGeneration(ctx, r.Name)
		if err != nil || g == "" {
			t.Fatalf("%s: index generation %q, %v", r.Name, g, err)
		}
		first[r.Name] = g
	}
	path := db.Path()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = mustOpen(t, path)
	for name, want := range first {
		if g, err := db.IndexGeneration(ctx, name); err != nil || g != want {
			t.Fatalf("%s after another open: %q, %v; want %q", name, g, err, want)
		}
	}
	if _, _, err := db.DeleteChartVersion(ctx, "acme-charts", "web", "1.0.0"); err != nil {
		t.Fatal(err)
	}
	if g, err := db.IndexGeneration(ctx, "acme-charts"); err != nil || g == first["acme-charts"] {
		t.Fatalf("after a delete: %q, %v (was %q)", g, err, first["acme-charts"])
	}
}

// TestUpgradeFromSchema18BuildsOCIIndexes opens a data dir written by the
// release before the OCI tag and alternate indexes (schema18-oci): the
// upgrade adds their keys and writes nothing else; the alternates of a
// version pushed after its /v1 upload are found, and deleting a manifest
// or a version takes its tags and alternates with it.
func TestUpgradeFromSchema18BuildsOCIIndexes(t *testing.T) {
	path, added := upgradeAdds(t, "schema18-oci", 18, "oci_tag_digests/", "oci_chart_alternates/")
	// web's three tags (a version's own tag is its chart tag, not stored
	// here) and api 3.0.0's one alternate.
	if added["oci_tag_digests/"] != 3 || added["oci_chart_alternates/"] != 1 {
		t.Fatalf("after the upgrade: %d tag index keys, %d alternate keys", added["oci_tag_digests/"], added["oci_chart_alternates/"])
	}

	db := mustOpen(t, path)
	ctx := t.Context()
	alts, err := db.ChartAlternates(ctx, "acme-charts", "api", "3.0.0")
	if err != nil || len(alts) != 1 {
		t.Fatalf("api 3.0.0's alternates after the upgrade: %q, %v", alts, err)
	}
	if m, err := db.Manifest(ctx, "acme-charts/api", alts[0]); err != nil || !m.Alternate {
		t.Fatalf("the alternate %s: %+v, %v", alts[0], m, err)
	}
	if alts, err := db.ChartAlternates(ctx, "acme-charts", "web", "2.0.0"); err != nil || len(alts) != 0 {
		t.Fatalf("web 2.0.0's alternates: %q, %v", alts, err)
	}
	// Deleting web 2.0.0's manifest by digest deletes its tag.
	d, err := db.Tag(ctx, "acme-charts/web", "2.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.DeleteManifest(ctx, "acme-charts/web", d); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Tag(ctx, "acme-charts/web", "2.0.0"); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Fatalf("web's tag 2.0.0 after its manifest's delete: %v", err)
	}
	if tags, _, err := db.Tags(ctx, "acme-charts/web", "", -1); err != nil || !slices.Equal(tags, []string{"1.0.0", "1.1.0_build.7"}) {
		t.Fatalf("web's tags after the delete: %q, %v", tags, err)
	}
	// Deleting api 3.0.0 deletes both its manifests.
	if _, _, err := db.DeleteChartVersion(ctx, "acme-charts", "api", "3.0.0"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Manifest(ctx, "acme-charts/api", alts[0]); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Fatalf("the alternate after its version's delete: %v", err)
	}
	if alts, err := db.ChartAlternates(ctx, "acme-charts", "api", "3.0.0"); err != nil || len(alts) != 0 {
		t.Fatalf("api 3.0.0's alternates after its delete: %q, %v", alts, err)
	}
}

// TestUpgradeFromSchema19BuildsArtifactIndex opens a data dir written by
// the release before the OCI artifact index (schema19-artifacts): the
// upgrade adds the image and the SBOM (not the chart version's manifest)
// and writes nothing else; the repository's usage counts both artifacts'
// bytes as before, and deleting one takes it out of the index and the
// count.
func TestUpgradeFromSchema19BuildsArtifactIndex(t *testing.T) {
	path, added := upgradeAdds(t, "schema19-artifacts", 19, "oci_artifacts/")
	if added["oci_artifacts/"] != 2 {
		t.Fatalf("after the upgrade: %d artifact index keys, want 2 (the image and the SBOM)", added["oci_artifacts/"])
	}
	db := mustOpen(t, path)
	ctx := t.Context()
	// The bytes the two artifacts hold: each manifest's content and the
	// blobs it refers to.
	artifactBytes := func(name, digest string) int64 {
		m, err := db.Manifest(ctx, name, digest)
		if err != nil {
			t.Fatal(err)
		}
		n := int64(len(m.Content))
		for _, d := range m.Blobs {
			l, err := db.BlobLink(ctx, name, d)
			if err != nil {
				t.Fatal(err)
			}
			n += l.Size
		}
		return n
	}
	image, err := db.Tag(ctx, "acme-charts/tools", "v1")
	if err != nil {
		t.Fatal(err)
	}
	chartManifest, err := db.Tag(ctx, "acme-charts/web", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	refs, err := db.Referrers(ctx, "acme-charts/web", chartManifest)
	if err != nil || len(refs) != 1 {
		t.Fatalf("the chart's referrers: %+v, %v", refs, err)
	}
	sbom := refs[0].Digest
	chartBytes := func() int64 {
		cv, err := db.ChartVersion(ctx, "acme-charts", "web", "1.0.0")
		if err != nil {
			t.Fatal(err)
		}
		return cv.Size + cv.ProvSize
	}()
	limit := int64(1 << 30)
	if err := db.SetQuota(ctx, chartctl.QuotaRepository, "acme-charts", chartctl.Quota{MaxBytes: &limit}); err != nil {
		t.Fatal(err)
	}
	used := func() int64 {
		_, u, err := db.Quota(ctx, chartctl.QuotaRepository, "acme-charts")
		if err != nil {
			t.Fatal(err)
		}
		return u.Bytes
	}
	want := chartBytes + artifactBytes("acme-charts/tools", image) + artifactBytes("acme-charts/web", sbom)
	if got := used(); got != want {
		t.Fatalf("usage after the upgrade = %d bytes, want %d (the chart's archive and both artifacts)", got, want)
	}
	if _, err := db.DeleteManifest(ctx, "acme-charts/web", sbom); err != nil {
		t.Fatal(err)
	}
	want = chartBytes + artifactBytes("acme-charts/tools", image)
	if got := used(); got != want {
		t.Fatalf("usage after the SBOM's delete = %d bytes, want %d", got, want)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	var index []string
	for k := range dump(t, path) {
		if strings.HasPrefix(k, "oci_artifacts/") {
			index = append(index, k)
		}
	}
	if len(index) != 1 || !strings.HasPrefix(index[0], "oci_artifacts/acme-charts/tools") {
		t.Fatalf("artifact index after the SBOM's delete: %q; want the image alone", index)
	}
}
