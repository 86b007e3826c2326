package postgres

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/testkit/pgtest"
)

// databaseAt returns a new database migrated to schema version n only, and
// a connection to it.
func databaseAt(t *testing.T, n int) (string, *pgx.Conn) {
	t.Helper()
	ctx := context.Background()
	url := pgtest.Shared(t).NewDatabase(t)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `CREATE TABLE schema_version (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		t.Fatal(err)
	}
	for _, m := range ms[:n] {
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return err
			}
			if fill := migrationFills[m.version]; fill != nil {
				if err := fill(ctx, tx); err != nil {
					return err
				}
			}
			_, err := tx.Exec(ctx, `INSERT INTO schema_version (version) VALUES ($1)`, m.version)
			return err
		})
		if err != nil {
			t.Fatalf("migration %s: %v", m.name, err)
		}
	}
	return url, conn
}

// TestMigrateToSchema6 upgrades a database of schema 5: its repositories
// stay ordinary ones, and a mirror can be made beside them.
func TestMigrateToSchema6(t *testing.T) {
	ctx := context.Background()
	url, conn := databaseAt(t, 5)
	if _, err := conn.Exec(ctx, `INSERT INTO repositories (id, name, visibility, created_at) VALUES
		('repo_1', 'apps', 'private', now()), ('repo_2', 'tools', 'public', now())`); err != nil {
		t.Fatal(err)
	}
	db, err := Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if v, err := db.SchemaVersion(ctx); err != nil || v != LatestSchemaVersion() || v < 6 {
		t.Fatalf("schema version %d, %v", v, err)
	}
	repos, err := db.Repositories(ctx)
	if err != nil || len(repos) != 2 {
		t.Fatalf("repositories %d, %v", len(repos), err)
	}
	for _, r := range repos {
		if r.Mirror != nil {
			t.Errorf("%s became a mirror: %+v", r.Name, r.Mirror)
		}
	}
	m := &chartctl.Repository{Name: "upstream", Mirror: &chartctl.Mirror{
		MirrorSettings: chartctl.MirrorSettings{URL: "https://charts.example.com", Interval: time.Hour},
		MirrorState:    chartctl.MirrorState{Status: chartctl.MirrorSyncing}}}
	if err := db.CreateRepository(ctx, m); err != nil {
		t.Fatal(err)
	}
	got, err := db.Repository(ctx, "upstream")
	if err != nil || got.Mirror == nil || got.Mirror.Interval != time.Hour || got.Mirror.Password != nil {
		t.Fatalf("mirror %+v, %v", got, err)
	}
}

// TestMigrateToSchema4 upgrades a database holding charts at schema 3:
// the usage of its repositories and organizations is counted from the
// stored versions, so quotas hold from the first upload after it.
func TestMigrateToSchema4(t *testing.T) {
	ctx := context.Background()
	url, conn := databaseAt(t, 3)
	if _, err := conn.Exec(ctx, `
		INSERT INTO organizations (id, name, created_at) VALUES ('org_1', 'acme', now());
		INSERT INTO repositories (id, name, organization, visibility, created_at) VALUES
			('repo_1', 'apps', 'acme', 'private', now()), ('repo_2', 'tools', 'acme', 'private', now()),
			('repo_3', 'empty', NULL, 'private', now());
		INSERT INTO chart_versions (repository_id, name, version, digest, size, created_at) VALUES
			('repo_1', 'web', '1.0.0', 'sha256:a', 100, now()), ('repo_1', 'web', '2.0.0', 'sha256:b', 200, now()),
			('repo_2', 'cli', '1.0.0', 'sha256:c', 50, now());`); err != nil {
		t.Fatal(err)
	}

	db, err := Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if v, err := db.SchemaVersion(ctx); err != nil || v != LatestSchemaVersion() || v < 4 {
		t.Fatalf("schema version %d, %v", v, err)
	}
	for _, c := range []struct {
		scope, name string
		want        chartctl.Usage
	}{
		{chartctl.QuotaRepository, "apps", chartctl.Usage{Bytes: 300, Versions: 2}},
		{chartctl.QuotaRepository, "tools", chartctl.Usage{Bytes: 50, Versions: 1}},
		{chartctl.QuotaRepository, "empty", chartctl.Usage{}},
		{chartctl.QuotaOrganization, "acme", chartctl.Usage{Bytes: 350, Versions: 3}},
	} {
		_, u, err := db.Quota(ctx, c.scope, c.name)
		if err != nil || u != c.want {
			t.Errorf("%s %s usage %+v, %v; want %+v", c.scope, c.name, u, err, c.want)
		}
	}
	// The counted usage is what the quota checks.
	two := int64(2)
	if err := db.SetQuota(ctx, chartctl.QuotaRepository, "apps", chartctl.Quota{MaxVersions: &two}); err != nil {
		t.Fatal(err)
	}
	_, _, _, err = db.PutChartVersion(ctx, &chartctl.ChartVersion{Repository: "apps", Name: "web", Version: "3.0.0",
		Digest: "sha256:d", Size: 10}, chartctl.PutVersionOptions{})
	if chartctl.ErrorCode(err) != chartctl.EQUOTA {
		t.Fatalf("upload over the migrated usage: %v", err)
	}

	// Usage rows lost (they never are): a chart write counts them again
	// from the records, its own change once.
	if _, err := db.pool.Exec(ctx, `DELETE FROM usage; DELETE FROM quotas`); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := db.PutChartVersion(ctx, &chartctl.ChartVersion{Repository: "apps", Name: "web", Version: "3.0.0",
		Digest: "sha256:d", Size: 10}, chartctl.PutVersionOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.pool.Exec(ctx, `DELETE FROM usage WHERE scope = 'organization'`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.DeleteRepository(ctx, "tools"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		scope, name string
		want        chartctl.Usage
	}{
		{chartctl.QuotaRepository, "apps", chartctl.Usage{Bytes: 310, Versions: 3}},
		{chartctl.QuotaOrganization, "acme", chartctl.Usage{Bytes: 310, Versions: 3}},
	} {
		_, u, err := db.Quota(ctx, c.scope, c.name)
		if err != nil || u != c.want {
			t.Errorf("recounted %s %s usage %+v, %v; want %+v", c.scope, c.name, u, err, c.want)
		}
	}
}

// TestMigrateToSchema7 upgrades a database of schema 6 holding what the
// webhook bug left: the webhook and upload session of the deleted
// repository "gone" (with a pending delivery) and a quota of its name.
// Those of "kept" are bound to its ID; those of "gone" are dropped, so a
// new repository named "gone" starts with none of them, and deleting
// "kept" takes its webhook and upload session with it.
func TestMigrateToSchema7(t *testing.T) {
	ctx := context.Background()
	url, conn := databaseAt(t, 6)
	if _, err := conn.Exec(ctx, `
		INSERT INTO repositories (id, name, visibility, created_at) VALUES ('repo_1', 'kept', 'private', now());
		INSERT INTO webhooks (id, repository, organization, url, events, active, created_at) VALUES
			('wh_kept', 'kept', '', 'https://hooks.example.com/kept', '{*}', true, now()),
			('wh_gone', 'gone', '', 'https://hooks.example.com/gone', '{*}', true, now()),
			('wh_all', '', '', 'https://hooks.example.com/all', '{*}', true, now());
		INSERT INTO events (id, type, time, repository) VALUES ('evt_1', 'chart.pushed', now(), 'gone');
		INSERT INTO deliveries (webhook_id, event_id, state, created_at) VALUES ('wh_gone', 'evt_1', 'pending', now());
		INSERT INTO oci_uploads (id, name, "offset", created_at, updated_at) VALUES
			('up_kept', 'kept/app', 5, now(), now()), ('up_gone', 'gone/app', 5, now(), now());
		INSERT INTO quotas (scope, name, max_versions) VALUES ('repository', 'kept', 5), ('repository', 'gone', 1);`); err != nil {
		t.Fatal(err)
	}
	db, err := Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if v, err := db.SchemaVersion(ctx); err != nil || v != LatestSchemaVersion() || v < 7 {
		t.Fatalf("schema version %d, %v", v, err)
	}
	if w, err := db.Webhook(ctx, "wh_kept"); err != nil || w.RepositoryID != "repo_1" {
		t.Fatalf("kept's webhook %+v, %v", w, err)
	}
	if _, err := db.Webhook(ctx, "wh_gone"); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Fatalf("gone's webhook survived: %v", err)
	}
	if w, err := db.Webhook(ctx, "wh_all"); err != nil || w.RepositoryID != "" {
		t.Fatalf("server-wide webhook %+v, %v", w, err)
	}
	var n int
	if err := db.pool.QueryRow(ctx, `SELECT count(*) FROM deliveries`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("deliveries left: %d, %v", n, err)
	}
	ups, err := db.Uploads(ctx)
	if err != nil || len(ups) != 1 || ups[0].ID != "up_kept" || ups[0].RepositoryID != "repo_1" {
		t.Fatalf("uploads %+v, %v", ups, err)
	}
	if err := db.CreateRepository(ctx, &chartctl.Repository{Name: "gone", OwnerID: "usr_1"}); err != nil {
		t.Fatal(err)
	}
	if q, _, err := db.Quota(ctx, chartctl.QuotaRepository, "gone"); err != nil || q.MaxVersions != nil {
		t.Fatalf("the new gone inherited a quota %+v, %v", q, err)
	}
	if hooks, err := db.Webhooks(ctx, "gone", ""); err != nil || len(hooks) != 0 {
		t.Fatalf("the new gone inherited webhooks %+v, %v", hooks, err)
	}
	if _, err := db.DeleteRepository(ctx, "kept"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Webhook(ctx, "wh_kept"); chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		t.Fatalf("kept's webhook outlived it: %v", err)
	}
	if ups, err := db.Uploads(ctx); err != nil || len(ups) != 0 {
		t.Fatalf("kept's upload outlived it: %+v, %v", ups, err)
	}
}

// TestMigrateChartAlternates upgrades a database of schema 7, before
// alternate chart manifests: its chart manifests stay the first manifests
// of their versions, and an alternate can be stored beside one.
func TestMigrateChartAlternates(t *testing.T) {
	ctx := context.Background()
	url, conn := databaseAt(t, 7)
	if _, err := conn.Exec(ctx, `INSERT INTO oci_manifests (name, digest, media_type, content, chart_repository, chart_name, chart_version, created_at)
		VALUES ('apps/web', 'sha256:`+strings.Repeat("a", 64)+`', 'application/vnd.oci.image.manifest.v1+json', '\x7b7d', 'apps', 'web', '1.0.0', now())`); err != nil {
		t.Fatal(err)
	}
	db, err := Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	m, err := db.ChartManifest(ctx, "apps", "web", "1.0.0")
	if err != nil || m.Alternate || m.Digest != "sha256:"+strings.Repeat("a", 64) {
		t.Fatalf("first manifest after the migration: %+v, %v", m, err)
	}
	alt := &chartctl.OCIManifest{Name: "apps/web", Digest: "sha256:" + strings.Repeat("b", 64), MediaType: "application/vnd.oci.image.manifest.v1+json",
		Content: []byte(`{"b":1}`), Chart: &chartctl.OCIChartRef{Repository: "apps", Name: "web", Version: "1.0.0"}, Alternate: true}
	if err := db.PutManifest(ctx, alt, ""); err != nil {
		t.Fatal(err)
	}
	if m, err := db.ChartManifest(ctx, "apps", "web", "1.0.0"); err != nil || m.Digest != "sha256:"+strings.Repeat("a", 64) {
		t.Fatalf("first manifest beside an alternate: %+v, %v", m, err)
	}
}

// TestMigrateToAccess upgrades a database of schema 8, before robot
// accounts and repository roles: its API keys stay unrestricted and keep
// authenticating, and grants, robots and publishers can be stored beside
// its users, teams and repositories.
func TestMigrateToAccess(t *testing.T) {
	ctx := context.Background()
	url, conn := databaseAt(t, 8)
	if _, err := conn.Exec(ctx, `
		INSERT INTO users (id, email, email_key, created_at) VALUES ('usr_1', 'ci@example.com', 'ci@example.com', now());
		INSERT INTO api_keys (id, user_id, name, scopes, hash, created_at) VALUES ('key_1', 'usr_1', 'ci', '{repo:read}', '\x01', now());
		INSERT INTO organizations (id, name, created_at) VALUES ('org_1', 'acme', now());
		INSERT INTO teams (id, name, organization, created_at) VALUES ('team_1', 'platform', 'acme', now());
		INSERT INTO members (id, team_id, email, email_key, role, added_at) VALUES ('mem_1', 'team_1', 'ci@example.com', 'ci@example.com', 'member', now());
		INSERT INTO repositories (id, name, organization, visibility, created_at) VALUES ('repo_1', 'acme-charts', 'acme', 'private', now());`); err != nil {
		t.Fatal(err)
	}
	db, err := Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if v, err := db.SchemaVersion(ctx); err != nil || v != LatestSchemaVersion() || v < 9 {
		t.Fatalf("schema version %d, %v", v, err)
	}
	if k, err := db.APIKeyByHash(ctx, []byte{1}); err != nil || k.ID != "key_1" || k.Repositories != nil {
		t.Fatalf("key after the upgrade %+v, %v", k, err)
	}
	if _, err := db.PutGrant(ctx, &chartctl.Grant{RepositoryID: "repo_1", Kind: chartctl.GrantTeam, SubjectID: "team_1", Role: chartctl.RepoRoleWrite}); err != nil {
		t.Fatal(err)
	}
	if roles, err := db.GrantsFor(ctx, "usr_1", "ci@example.com"); err != nil || roles["repo_1"] != chartctl.RepoRoleWrite {
		t.Fatalf("GrantsFor = %v, %v", roles, err)
	}
	robot := &chartctl.Robot{OrganizationID: "org_1", Name: "release", Permissions: chartctl.RobotPermissions{chartctl.RobotPull}, SecretHash: []byte{2}}
	if err := db.CreateRobot(ctx, robot); err != nil {
		t.Fatal(err)
	}
	if err := db.AddPublisher(ctx, &chartctl.TrustedPublisher{RobotID: robot.ID, Issuer: "https://ci.example.com", Audience: "chartctl"}); err != nil {
		t.Fatal(err)
	}
	if r, err := db.RobotBySecretHash(ctx, []byte{2}); err != nil || r.Organization != "acme" {
		t.Fatalf("robot %+v, %v", r, err)
	}
}

// TestMigrateToIdentities: a database of schema 9 (before single sign-on)
// migrates to 10: its users read as local accounts, and can then be bound
// to an identity provider's account, one user per account.
func TestMigrateToIdentities(t *testing.T) {
	ctx := context.Background()
	url, conn := databaseAt(t, 9)
	if _, err := conn.Exec(ctx, `
		INSERT INTO users (id, email, email_key, created_at) VALUES ('usr_1', 'ci@example.com', 'ci@example.com', now());
		INSERT INTO users (id, email, email_key, created_at) VALUES ('usr_2', 'ana@example.com', 'ana@example.com', now());`); err != nil {
		t.Fatal(err)
	}
	db, err := Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if v, err := db.SchemaVersion(ctx); err != nil || v != LatestSchemaVersion() || v < 10 {
		t.Fatalf("schema version %d, %v", v, err)
	}
	u, err := db.User(ctx, "usr_1")
	if err != nil || !u.Identity.Local() {
		t.Fatalf("user after the migration %+v, %v", u, err)
	}
	id := chartctl.Identity{Provider: chartctl.ProviderOIDC, Issuer: "https://dex.example.com", Subject: "ci"}
	if _, err := db.UpdateUser(ctx, "usr_1", chartctl.UserUpdate{Identity: &id}); err != nil {
		t.Fatal(err)
	}
	if got, err := db.UserByIdentity(ctx, id); err != nil || got.ID != "usr_1" {
		t.Fatalf("UserByIdentity = %+v, %v", got, err)
	}
	if _, err := db.UpdateUser(ctx, "usr_2", chartctl.UserUpdate{Identity: &id}); chartctl.ErrorCode(err) != chartctl.ECONFLICT {
		t.Fatalf("a second user bound to the account: %v", err)
	}
}
