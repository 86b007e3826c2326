package dump_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/internal/bolt"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/dump"
	"github.com/chartctl/chartctl/internal/postgres"
	"github.com/chartctl/chartctl/internal/storetest"
	"github.com/chartctl/chartctl/internal/testkit/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

var ctx = context.Background()

// engine is one store engine: open gives a fresh empty store, and load
// loads into it the way the commands do (one transaction on PostgreSQL).
type engine struct {
	name string
	open func(t *testing.T) engineStore
}

type engineStore interface {
	dump.Target
	chartctl.Exporter
}

func openBolt(t *testing.T) engineStore {
	db, err := bolt.Open(filepath.Join(t.TempDir(), "chartctl.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func openPostgres(t *testing.T) engineStore {
	url := pgtest.Shared(t).NewDatabaseFrom(t, "chartctl_template", func(url string) error {
		db, err := postgres.Open(ctx, url)
		if err != nil {
			return err
		}
		return db.Close()
	})
	db, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

var engines = []engine{{"bolt", openBolt}, {"postgres", openPostgres}}

// load loads records into s, in one transaction when s is PostgreSQL.
func load(s engineStore, records []chartctl.DumpRecord) (dump.Counts, error) {
	if pg, ok := s.(*postgres.DB); ok {
		var counts dump.Counts
		err := pg.Import(ctx, func(tx *postgres.DB) error {
			var err error
			counts, err = dump.Load(ctx, tx, records)
			return err
		})
		return counts, err
	}
	return dump.Load(ctx, s, records)
}

func mustRead(t *testing.T, e chartctl.Exporter) []chartctl.DumpRecord {
	t.Helper()
	records, err := dump.Read(ctx, e)
	if err != nil {
		t.Fatal(err)
	}
	return records
}

// A store holding every kind of record loads into an empty store of each
// engine, and the dump of the target equals the dump of the source: no
// kind, and no field, is lost on the way, in any direction.
func TestRoundTrip(t *testing.T) {
	for _, from := range engines {
		for _, to := range engines {
			t.Run(from.name+"_to_"+to.name, func(t *testing.T) {
				src := from.open(t)
				storetest.Fill(t, src)
				records := mustRead(t, src)
				kinds := map[string]int{}
				for _, r := range records {
					kinds[r.Kind()]++
				}
				for _, k := range chartctl.DumpKinds {
					if kinds[k] == 0 {
						t.Errorf("%s exported no record of kind %s: extend its Export (or storetest.Fill)", from.name, k)
					}
				}
				dst := to.open(t)
				counts, err := load(dst, records)
				if err != nil {
					t.Fatalf("load: %v", err)
				}
				for k, n := range kinds {
					if counts[k] != n {
						t.Errorf("loaded %d records of kind %s, the dump has %d", counts[k], k, n)
					}
				}
				if d := dump.Diff(records, mustRead(t, dst), 20); d != "" {
					t.Fatalf("the target's dump differs from the source's: %s", d)
				}
				// What the target serves, beyond its dump: the usage
				// counted from the loaded versions, tags, blob links.
				q, u, err := dst.Quota(ctx, chartctl.QuotaOrganization, "acme")
				if err != nil || q.MaxVersions == nil || *q.MaxVersions != 1000 || u.Versions != 3 {
					t.Errorf("organization quota %+v, usage %+v, err %v", q, u, err)
				}
				if d, err := dst.Tag(ctx, "apps/image", "latest"); err != nil || d != storetest.Digest("index manifest") {
					t.Errorf("tag latest = %q, %v", d, err)
				}
				refs, err := dst.Referrers(ctx, "apps/image", storetest.Digest("image manifest"))
				if err != nil || len(refs) != 1 {
					t.Errorf("referrers %v, %v", refs, err)
				}
				if ok, err := dst.BlobReferenced(ctx, storetest.Digest("web signature 1.0.0")); err != nil || !ok {
					t.Errorf("provenance blob referenced = %v, %v", ok, err)
				}
				// A restored robot keeps working with the secret it had,
				// and the one it was rotated from until its grace ends.
				for _, h := range []string{"robot-hash", "robot-hash-old"} {
					if r, err := dst.RobotBySecretHash(ctx, []byte(h)); err != nil || r.ID != "robot_ci" || r.Organization != "acme" {
						t.Errorf("robot by secret hash %s = %+v, %v", h, r, err)
					}
				}
				if k, err := dst.APIKeyByHash(ctx, []byte("hash-ci")); err != nil || len(k.Repositories) != 2 {
					t.Errorf("restricted key = %+v, %v", k, err)
				}
				if roles, err := dst.GrantsFor(ctx, "usr_ci", "ci@example.com"); err != nil || roles["repo_pub"] != chartctl.RepoRoleWrite {
					t.Errorf("GrantsFor(ci) through team devs = %v, %v", roles, err)
				}
				cv, err := dst.ChartVersion(ctx, "apps", "web", "1.0.0")
				if err != nil || cv.Downloads != 7 {
					t.Errorf("downloads of web 1.0.0: %+v, %v", cv, err)
				}
			})
		}
	}
}

// A load that fails part-way inside a PostgreSQL import leaves the
// database as empty as it was.
func TestImportAllOrNothing(t *testing.T) {
	src := openBolt(t)
	storetest.Fill(t, src)
	records := mustRead(t, src)
	// A member of a team the dump lacks: refused after everything before
	// it was written.
	records = append(records, chartctl.DumpRecord{Member: &chartctl.Member{Team: "nobody", Email: "x@example.com", Role: chartctl.RoleMember}})
	dst := openPostgres(t).(*postgres.DB)
	_, err := load(dst, records)
	if err == nil || !strings.Contains(err.Error(), "member x@example.com of team nobody") {
		t.Fatalf("load err = %v, want the member refused", err)
	}
	empty, kind, err := dump.Empty(ctx, dst)
	if err != nil || !empty {
		t.Fatalf("after a failed import the database holds a %s (empty %v, err %v)", kind, empty, err)
	}
	// And the database still works: the same dump, whole, loads.
	if _, err := load(dst, records[:len(records)-1]); err != nil {
		t.Fatal(err)
	}
	if d := dump.Diff(records[:len(records)-1], mustRead(t, dst), 5); d != "" {
		t.Fatal(d)
	}
}

func TestEmptyAndBlobs(t *testing.T) {
	s := openBolt(t)
	if empty, _, err := dump.Empty(ctx, s); err != nil || !empty {
		t.Fatalf("a new store: empty %v, %v", empty, err)
	}
	want := storetest.Fill(t, s)
	if empty, kind, err := dump.Empty(ctx, s); err != nil || empty || kind != chartctl.DumpUser {
		t.Fatalf("a filled store: empty %v, kind %q, %v", empty, kind, err)
	}
	blobs := dump.Blobs(mustRead(t, s))
	if len(blobs) != len(want) {
		t.Errorf("%d blobs referred to, Fill wrote %d", len(blobs), len(want))
	}
	for _, b := range blobs {
		content, ok := want[b.Digest]
		if !ok || b.Size != int64(len(content)) {
			t.Errorf("blob %s of size %d: Fill wrote %d bytes (%v)", b.Digest, b.Size, len(content), ok)
		}
	}
}

// Diff sees a lost record and a changed field, and ignores what Load
// does not keep.
func TestDiff(t *testing.T) {
	s := openBolt(t)
	storetest.Fill(t, s)
	records := mustRead(t, s)
	if d := dump.Diff(records, records, 5); d != "" {
		t.Fatalf("a dump differs from itself: %s", d)
	}
	var changed []chartctl.DumpRecord
	for _, r := range records {
		switch {
		case r.Webhook != nil && r.Webhook.ID == "wh_org":
			w := *r.Webhook
			w.Secret = []byte("another secret")
			r = chartctl.DumpRecord{Webhook: &w}
		case r.Quota != nil:
			continue
		case r.AuditEntry != nil:
			e := *r.AuditEntry
			e.ID = "aud_renumbered"
			r = chartctl.DumpRecord{AuditEntry: &e}
		}
		changed = append(changed, r)
	}
	d := dump.Diff(records, changed, 10)
	for _, want := range []string{"webhook missing", "webhook not expected", "quota missing"} {
		if !strings.Contains(d, want) {
			t.Errorf("Diff = %q, want it to say %q", d, want)
		}
	}
	if strings.Contains(d, "audit_entry") {
		t.Errorf("Diff reports renumbered audit entries: %s", d)
	}
}

// Summaries name kinds in plain English: "3 API keys", not "3 API keies".
func TestPluralAndCount(t *testing.T) {
	want := map[string]string{
		chartctl.DumpUser: "users", chartctl.DumpAPIKey: "API keys", chartctl.DumpOAuthClient: "OAuth clients",
		chartctl.DumpOrganization: "organizations", chartctl.DumpRepository: "repositories", chartctl.DumpTeam: "teams",
		chartctl.DumpMember: "members", chartctl.DumpChartVersion: "chart versions", chartctl.DumpQuota: "quotas",
		chartctl.DumpRetention: "retention policies", chartctl.DumpWebhook: "webhooks",
		chartctl.DumpOCIBlobLink: "OCI blob links", chartctl.DumpOCIManifest: "OCI manifests", chartctl.DumpOCITag: "OCI tags",
		chartctl.DumpAuditEntry: "audit entries", chartctl.DumpGrant: "repository grants", chartctl.DumpRobot: "robot accounts", chartctl.DumpSCIMToken: "SCIM tokens", chartctl.DumpSCIMGroup: "SCIM groups",
		chartctl.DumpPublisher: "trusted publishers", chartctl.DumpTrustEntry: "trust entries", chartctl.DumpPolicy: "admission policies",
		chartctl.DumpReplication: "replications",
	}
	for _, k := range chartctl.DumpKinds {
		w, ok := want[k]
		if !ok {
			t.Errorf("kind %q has no expected plural here; add it", k)
			continue
		}
		if got := dump.Plural(k); got != w {
			t.Errorf("Plural(%q) = %q, want %q", k, got, w)
		}
	}
	if got := dump.Count(2, chartctl.DumpAPIKey); got != "2 API keys" {
		t.Errorf("Count(2, api_key) = %q", got)
	}
	if got := dump.Count(1, chartctl.DumpAPIKey); got != "1 API key" {
		t.Errorf("Count(1, api_key) = %q", got)
	}
}
