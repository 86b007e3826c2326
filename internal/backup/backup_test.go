package backup_test

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/backup"
	"github.com/chartctl/chartctl/internal/blob"
	"github.com/chartctl/chartctl/internal/bolt"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/dump"
	"github.com/chartctl/chartctl/internal/postgres"
	"github.com/chartctl/chartctl/internal/s3blob"
	"github.com/chartctl/chartctl/internal/storetest"
	"github.com/chartctl/chartctl/internal/testkit/enginetest"
	"github.com/chartctl/chartctl/internal/testkit/pgtest"
	"github.com/chartctl/chartctl/internal/testkit/s3test"
)

func TestMain(m *testing.M) { os.Exit(enginetest.Main(m)) }

var ctx = context.Background()

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// boltTarget is a new bolt store and blob directory.
func boltTarget(t *testing.T) (*bolt.DB, *blob.Store) {
	t.Helper()
	dir := t.TempDir()
	db, err := bolt.Open(filepath.Join(dir, "chartctl.db"))
	must(t, err)
	t.Cleanup(func() { db.Close() })
	blobs, err := blob.Open(filepath.Join(dir, "blobs"))
	must(t, err)
	return db, blobs
}

// pgTarget is a new PostgreSQL database and S3 bucket, restored into in
// one transaction.
func pgTarget(t *testing.T) (*postgres.DB, *s3blob.Store, backup.Target) {
	t.Helper()
	db, err := postgres.Open(ctx, pgtest.NewDatabase(t))
	must(t, err)
	t.Cleanup(func() { db.Close() })
	blobs, err := s3blob.Open(ctx, s3test.NewBucket(t))
	must(t, err)
	return db, blobs, backup.Target{Store: db, Blobs: blobs, Transaction: func(ctx context.Context, fn func(dump.Target) error) error {
		return db.Import(ctx, func(tx *postgres.DB) error { return fn(tx) })
	}}
}

// filled is a bolt store holding every kind of record, with its blobs.
func filled(t *testing.T) (*bolt.DB, *blob.Store) {
	t.Helper()
	db, blobs := boltTarget(t)
	for d, content := range storetest.Fill(t, db) {
		alg, _, _ := strings.Cut(d, ":")
		w, err := blobs.CreateAlgorithm(ctx, alg)
		must(t, err)
		w.Write(content)
		got, err := w.Commit()
		must(t, err)
		if got != d {
			t.Fatalf("blob %s stored as %s", d, got)
		}
	}
	return db, blobs
}

func write(t *testing.T, src backup.Source) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := backup.Write(ctx, &buf, src); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func countBlobs(t *testing.T, s chartctl.BlobStore) int {
	t.Helper()
	n := 0
	must(t, s.Walk(ctx, func(string) error { n++; return nil }))
	return n
}

// A backup of a store holding every kind of record reads back as the
// store's dump, and restores into bolt and into PostgreSQL and S3.
func TestEveryKindRoundTrips(t *testing.T) {
	src, srcBlobs := filled(t)
	b := write(t, backup.Source{Store: src, Blobs: srcBlobs})
	want, err := dump.Read(ctx, src)
	must(t, err)
	arch, res := backup.Read(ctx, bytes.NewReader(b), nil)
	if !res.OK {
		t.Fatalf("read: %+v", res.Problems)
	}
	if arch.Version != backup.FormatVersion {
		t.Errorf("version %d", arch.Version)
	}
	if d := dump.Diff(want, arch.Records, 10); d != "" {
		t.Fatalf("the archive's records differ from the store's dump: %s", d)
	}
	if !bytes.Contains(b, []byte("chartctl-backup/blobs/sha512/")) {
		t.Error("the sha512 blob is not in the archive under blobs/sha512/")
	}
	if res.Checked.Blobs != countBlobs(t, srcBlobs) {
		t.Errorf("%d blobs checked, the store has %d", res.Checked.Blobs, countBlobs(t, srcBlobs))
	}

	db, blobs := boltTarget(t)
	if _, counts, err := backup.Restore(ctx, bytes.NewReader(b), backup.Target{Store: db, Blobs: blobs}); err != nil {
		t.Fatalf("restore into bolt: %v", err)
	} else if counts[chartctl.DumpAuditEntry] != 4 || counts[chartctl.DumpOCIManifest] != 4 {
		t.Errorf("restored %v", counts)
	}
	got, err := dump.Read(ctx, db)
	must(t, err)
	if d := dump.Diff(want, got, 10); d != "" {
		t.Fatal(d)
	}
	if res, err := backup.VerifyStore(ctx, db, blobs); err != nil || !res.OK {
		t.Fatalf("verify the restored store: %v %+v", err, res)
	}

	pg, s3, target := pgTarget(t)
	if _, _, err := backup.Restore(ctx, bytes.NewReader(b), target); err != nil {
		t.Fatalf("restore into PostgreSQL and S3: %v", err)
	}
	got, err = dump.Read(ctx, pg)
	must(t, err)
	if d := dump.Diff(want, got, 10); d != "" {
		t.Fatal(d)
	}
	if res, err := backup.VerifyStore(ctx, pg, s3); err != nil || !res.OK {
		t.Fatalf("verify the restored store: %v %+v", err, res)
	}
}

// The backup made by the first release of the format (testdata/v1.tar,
// written by chartctl before format 2) still reads and restores, into
// either engine.
func TestFormat1StillRestores(t *testing.T) {
	b, err := os.ReadFile("testdata/v1.tar")
	must(t, err)
	arch, res := backup.Read(ctx, bytes.NewReader(b), nil)
	if !res.OK || arch.Version != 1 {
		t.Fatalf("read: version %v, %+v", arch, res.Problems)
	}
	if res.Checked.Repositories != 3 || res.Checked.ChartVersions != 5 || res.Checked.Blobs != 6 {
		t.Errorf("checked %+v", res.Checked)
	}
	for _, r := range arch.Records {
		if cv := r.ChartVersion; cv != nil && cv.ProvDigest != "" && cv.ProvSize != int64(len("signature\n")) {
			t.Errorf("the provenance size of %s %s was not taken from the archive: %d", cv.Name, cv.Version, cv.ProvSize)
		}
	}
	db, blobs := boltTarget(t)
	if _, _, err := backup.Restore(ctx, bytes.NewReader(b), backup.Target{Store: db, Blobs: blobs}); err != nil {
		t.Fatalf("restore into bolt: %v", err)
	}
	u, err := db.UserByEmail(ctx, "dev@example.com")
	if err != nil || u.Admin {
		t.Fatalf("dev: %+v %v", u, err)
	}
	q, usage, err := db.Quota(ctx, chartctl.QuotaRepository, "pub")
	if err != nil || q.MaxBytes != nil || usage.Versions != 3 || usage.Bytes != 346+350+350+10 {
		t.Errorf("usage of pub %+v (quota %+v, %v)", usage, q, err)
	}
	if res, err := backup.VerifyStore(ctx, db, blobs); err != nil || !res.OK {
		t.Fatalf("verify: %v %+v", err, res)
	}
	pg, _, target := pgTarget(t)
	if _, _, err := backup.Restore(ctx, bytes.NewReader(b), target); err != nil {
		t.Fatalf("restore into PostgreSQL: %v", err)
	}
	if cvs, err := pg.ChartVersions(ctx, "pub", chartctl.ChartFilter{}); err != nil || len(cvs) != 3 {
		t.Fatalf("pub on PostgreSQL: %d %v", len(cvs), err)
	}
}

// rewrite returns the archive b with the file name's content replaced by
// edit's result, as a newer or damaged writer would make it (digests are
// not fixed: Read must notice what it can).
func rewrite(t *testing.T, b []byte, name string, edit func([]byte) []byte) []byte {
	t.Helper()
	tr := tar.NewReader(bytes.NewReader(b))
	var out bytes.Buffer
	tw := tar.NewWriter(&out)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		must(t, err)
		content, err := io.ReadAll(tr)
		must(t, err)
		if hdr.Name == name {
			content = edit(content)
			hdr.Size = int64(len(content))
		}
		must(t, tw.WriteHeader(hdr))
		_, err = tw.Write(content)
		must(t, err)
	}
	must(t, tw.Close())
	return out.Bytes()
}

// A backup of a format this chartctl does not know is refused by its
// version, not half read.
func TestNewerFormatRefused(t *testing.T) {
	src, srcBlobs := filled(t)
	b := rewrite(t, write(t, backup.Source{Store: src, Blobs: srcBlobs}), "chartctl-backup/format.json", func(c []byte) []byte {
		return bytes.Replace(c, []byte(`"version":5`), []byte(`"version":6`), 1)
	})
	_, res := backup.Read(ctx, bytes.NewReader(b), nil)
	if res.OK || len(res.Problems) != 1 || !strings.Contains(res.Problems[0].Detail, "format version 6") {
		t.Fatalf("problems %+v", res.Problems)
	}
}

// exporter is a store whose dump is made up, to write backups no real
// store would hold.
type exporter []chartctl.DumpRecord

func (e exporter) Export(ctx context.Context, snapshot func(), fn func(chartctl.DumpRecord) error) error {
	for _, r := range e {
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

// Records that refer to records the backup lacks are reported by verify
// and refused by restore before anything is written.
func TestDanglingReferencesRefused(t *testing.T) {
	n := int64(3)
	b := write(t, backup.Source{Store: exporter{
		{User: &chartctl.User{ID: "usr_1", Email: "a@example.com", CreatedAt: time.Now()}},
		{Quota: &chartctl.ScopedQuota{Scope: chartctl.QuotaRepository, Name: "gone", Quota: chartctl.Quota{MaxVersions: &n}}},
		{Retention: &chartctl.RepositoryRetention{Repository: "gone"}},
		{OCITag: &chartctl.OCITag{Name: "gone/app", Tag: "v1", Digest: storetest.Digest("nothing")}},
		{Repository: &chartctl.Repository{ID: "repo_new", Name: "reused", Visibility: chartctl.VisibilityPrivate, CreatedAt: time.Now()}},
		{Webhook: &chartctl.Webhook{ID: "wh_gone", Repository: "gone", URL: "https://a.example.com", Events: []string{"*"}}},
		{Webhook: &chartctl.Webhook{ID: "wh_old", Repository: "reused", RepositoryID: "repo_old", URL: "https://a.example.com", Events: []string{"*"}}},
		{Grant: &chartctl.Grant{ID: "grant_1", RepositoryID: "repo_old", Kind: chartctl.GrantUser, SubjectID: "usr_1", Role: chartctl.RepoRoleRead, CreatedAt: time.Now()}},
		{Grant: &chartctl.Grant{ID: "grant_2", RepositoryID: "repo_new", Kind: chartctl.GrantTeam, SubjectID: "team_gone", Role: chartctl.RepoRoleRead, CreatedAt: time.Now()}},
		{Robot: &chartctl.Robot{ID: "robot_1", OrganizationID: "org_gone", Name: "ci", Permissions: chartctl.RobotPermissions{chartctl.RobotPull},
			SecretHash: []byte("h"), CreatedAt: time.Now()}},
		{Publisher: &chartctl.TrustedPublisher{ID: "pub_1", RobotID: "robot_gone", Issuer: "https://ci.example.com", Audience: "x", CreatedAt: time.Now()}},
	}, Blobs: nil})
	_, res := backup.Read(ctx, bytes.NewReader(b), nil)
	refs := 0
	for _, p := range res.Problems {
		if p.Kind == "reference" {
			refs++
		}
	}
	if res.OK || refs != 9 {
		t.Fatalf("problems %+v", res.Problems)
	}
	db, blobs := boltTarget(t)
	if _, _, err := backup.Restore(ctx, bytes.NewReader(b), backup.Target{Store: db, Blobs: blobs}); err == nil || !strings.Contains(err.Error(), "nothing was restored") {
		t.Fatalf("restore: %v", err)
	}
	if empty, _, _ := dump.Empty(ctx, db); !empty {
		t.Error("the refused restore wrote records")
	}
}

// A restore into PostgreSQL and S3 that fails while writing the records
// (two users with one email: the archive is whole, the store refuses the
// second) leaves no record and deletes every blob it stored.
func TestRestoreFailingInTheStoreLeavesNothing(t *testing.T) {
	src, srcBlobs := filled(t)
	records, err := dump.Read(ctx, src)
	must(t, err)
	records = append(records, chartctl.DumpRecord{User: &chartctl.User{ID: "usr_twin", Email: "ADMIN@example.com", CreatedAt: time.Now()}})
	b := write(t, backup.Source{Store: exporter(records), Blobs: srcBlobs})
	if _, res := backup.Read(ctx, bytes.NewReader(b), nil); !res.OK {
		t.Fatalf("the archive does not read: %+v", res.Problems)
	}
	pg, s3, target := pgTarget(t)
	_, _, err = backup.Restore(ctx, bytes.NewReader(b), target)
	if err == nil || !strings.Contains(err.Error(), "user ADMIN@example.com") {
		t.Fatalf("restore: %v", err)
	}
	if empty, kind, err := dump.Empty(ctx, pg); err != nil || !empty {
		t.Errorf("the database holds a %s (%v)", kind, err)
	}
	if n := countBlobs(t, s3); n != 0 {
		t.Errorf("%d blobs left in S3", n)
	}
	// Blobs that were there before stay.
	w, err := s3.Create(ctx)
	must(t, err)
	w.Write([]byte("tool archive"))
	d, err := w.Commit()
	must(t, err)
	if _, _, err := backup.Restore(ctx, bytes.NewReader(b), target); err == nil {
		t.Fatal("the second restore succeeded")
	}
	if _, err := s3.ModTime(ctx, d); err != nil {
		t.Errorf("a blob that was there before the restore is gone: %v", err)
	}
	if n := countBlobs(t, s3); n != 1 {
		t.Errorf("%d blobs in S3, want the one put there before", n)
	}
}

// Live verify checks the OCI registry's blobs too: one removed from the
// blob store is reported against the repository name holding it.
func TestVerifyStoreChecksOCIBlobs(t *testing.T) {
	db, blobs := filled(t)
	if res, err := backup.VerifyStore(ctx, db, blobs); err != nil || !res.OK {
		t.Fatalf("verify: %v %+v", err, res)
	}
	gone := storetest.Digest512("sha512 layer bytes")
	must(t, blobs.Delete(ctx, gone))
	res, err := backup.VerifyStore(ctx, db, blobs)
	must(t, err)
	if res.OK || len(res.Problems) != 1 || res.Problems[0].Kind != "blob_missing" || res.Problems[0].Target != gone ||
		!strings.Contains(res.Problems[0].Detail, "apps/image") {
		t.Fatalf("problems %+v", res.Problems)
	}
}
