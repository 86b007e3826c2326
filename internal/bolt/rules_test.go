package bolt_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/chartctl/chartctl/internal/bolt"
	"github.com/chartctl/chartctl/internal/chartctl"
)

// Regression (issue 12): two `helm package` runs of one directory give
// different gzip bytes of the same files; the second upload was a 409.
func TestPutChartVersionSameContentOtherBytes(t *testing.T) {
	ctx := context.Background()
	db, _ := setup(t)
	mustRepo(t, db, "stable", "")

	first := chart("stable", "web", "1.0.0", "archive-a")
	first.ContentDigest = digest("files")
	stored := mustPut(t, db, first)
	if stored.ContentDigest != first.ContentDigest {
		t.Fatalf("stored content digest = %q", stored.ContentDigest)
	}

	again := chart("stable", "web", "1.0.0", "archive-b")
	again.ContentDigest = digest("files")
	got, created, orphans, err := db.PutChartVersion(ctx, again, chartctl.PutVersionOptions{})
	if err != nil || created || len(orphans) != 0 {
		t.Fatalf("same content: created=%v orphans=%v err=%v", created, orphans, err)
	}
	if got.Digest != first.Digest || got.ContentDigest != first.ContentDigest {
		t.Fatalf("returned digest %s, want the stored %s", got.Digest, first.Digest)
	}
	mustReferenced(t, db, digest("archive-b"), false)

	// Other content stays a conflict.
	other := chart("stable", "web", "1.0.0", "archive-c")
	other.ContentDigest = digest("other files")
	_, _, _, err = db.PutChartVersion(ctx, other, chartctl.PutVersionOptions{})
	wantCode(t, err, chartctl.ECONFLICT)
	wantMessage(t, err, "Chart web version 1.0.0 already exists with different content.")

	// A provenance file signs the other archive's bytes, not the stored
	// ones: it cannot be attached.
	signed := chart("stable", "web", "1.0.0", "archive-b")
	signed.ContentDigest = digest("files")
	signed.ProvDigest = digest("prov-b")
	_, _, _, err = db.PutChartVersion(ctx, signed, chartctl.PutVersionOptions{})
	wantCode(t, err, chartctl.ECONFLICT)

	// overwrite keeps its meaning: the new archive replaces the old.
	got, created, orphans, err = db.PutChartVersion(ctx, again, chartctl.PutVersionOptions{Overwrite: true})
	if err != nil || !created || got.Digest != again.Digest || strings.Join(orphans, ",") != first.Digest {
		t.Fatalf("overwrite: %+v created=%v orphans=%v err=%v", got, created, orphans, err)
	}
}

// A version stored before content digests were recorded is compared by
// digest alone: its content is unknown without reading its blob.
func TestPutChartVersionWithoutStoredContentDigest(t *testing.T) {
	ctx := context.Background()
	db, _ := setup(t)
	mustRepo(t, db, "stable", "")
	mustPut(t, db, chart("stable", "web", "1.0.0", "archive-a")) // no content digest

	same := chart("stable", "web", "1.0.0", "archive-a")
	same.ContentDigest = digest("files")
	if _, created, _, err := db.PutChartVersion(ctx, same, chartctl.PutVersionOptions{}); err != nil || created {
		t.Fatalf("same digest: created=%v err=%v", created, err)
	}
	other := chart("stable", "web", "1.0.0", "archive-b")
	other.ContentDigest = digest("files")
	_, _, _, err := db.PutChartVersion(ctx, other, chartctl.PutVersionOptions{})
	wantCode(t, err, chartctl.ECONFLICT)
}

// Regression (issue 12): 1.0.0, v1.0.0 and 1.0.0+build were stored as
// three versions.
func TestSemverEqualVersionsConflict(t *testing.T) {
	ctx := context.Background()
	db, _ := setup(t)
	mustRepo(t, db, "stable", "")
	mustRepo(t, db, "other", "")
	mustPut(t, db, chart("stable", "web", "1.0.0", "a"))

	for _, v := range []string{"v1.0.0", "1.0.0+build.7", "v1.0.0+x", "1.0", "1"} {
		for _, overwrite := range []bool{false, true} {
			_, _, _, err := db.PutChartVersion(ctx, chart("stable", "web", v, "b"+v), chartctl.PutVersionOptions{Overwrite: overwrite})
			wantCode(t, err, chartctl.ECONFLICT)
			if msg := chartctl.ErrorMessage(err); !strings.Contains(msg, "Chart web version 1.0.0 already exists") || !strings.Contains(msg, v) {
				t.Fatalf("%s: message %q does not name the stored version", v, msg)
			}
		}
	}
	// Not SemVer-equal: another precedence, another chart, another repository.
	mustPut(t, db, chart("stable", "web", "1.0.0-rc.1", "c"))
	mustPut(t, db, chart("stable", "web", "1.0.1", "d"))
	mustPut(t, db, chart("stable", "api", "v1.0.0", "e"))
	mustPut(t, db, chart("other", "web", "v1.0.0", "f"))
	// The same version string is still an ordinary re-upload.
	if _, created, _, err := db.PutChartVersion(ctx, chart("stable", "web", "1.0.0", "a"), chartctl.PutVersionOptions{}); err != nil || created {
		t.Fatalf("re-upload: created=%v err=%v", created, err)
	}
	_, _, _, err := db.PutChartVersion(ctx, chart("stable", "api", "1.0.0+b", "g"), chartctl.PutVersionOptions{})
	wantCode(t, err, chartctl.ECONFLICT)
	wantMessage(t, err, `Chart api version v1.0.0 already exists, and version 1.0.0+b is the same SemVer version (a leading "v" and build metadata after "+" do not make a new version). Use a new version number.`)

	// Once the stored version is deleted the number is free again.
	if _, _, err := db.DeleteChartVersion(ctx, "stable", "web", "1.0.0"); err != nil {
		t.Fatal(err)
	}
	mustPut(t, db, chart("stable", "web", "v1.0.0", "h"))
	// Deleting and re-creating a repository starts its index empty.
	if _, err := db.DeleteRepository(ctx, "other"); err != nil {
		t.Fatal(err)
	}
	mustRepo(t, db, "other", "")
	mustPut(t, db, chart("other", "web", "1.0.0", "i"))
}

// A file written before the SemVer index existed gets it at Open, and
// SemVer-equal pairs already stored stay readable.
func TestSemverIndexBuiltForOlderFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "chartctl.db")
	db, err := bolt.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	mustRepo(t, db, "stable", "")
	mustPut(t, db, chart("stable", "web", "1.0.0", "a"))
	mustPut(t, db, chart("stable", "web", "2.0.0", "b"))
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	// Make it look like an older file: no index, and a SemVer-equal pair
	// stored as the old code allowed.
	raw, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = raw.Update(func(tx *bbolt.Tx) error {
		if err := tx.DeleteBucket([]byte("chart_semver")); err != nil {
			return err
		}
		// Schema 2: written before the index existed.
		if err := tx.Bucket([]byte("meta")).Put([]byte("schema_version"), []byte{0, 0, 0, 0, 0, 0, 0, 2}); err != nil {
			return err
		}
		cb := tx.Bucket([]byte("charts")).Bucket([]byte("stable"))
		var rec map[string]any
		if err := json.Unmarshal(cb.Get([]byte("web\x001.0.0")), &rec); err != nil {
			return err
		}
		rec["version"] = "v1.0.0"
		v, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		return cb.Put([]byte("web\x00v1.0.0"), v)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := raw.Close(); err != nil {
		t.Fatal(err)
	}

	db = mustOpen(t, path)
	for _, v := range []string{"1.0.0", "v1.0.0"} {
		if _, err := db.ChartVersion(ctx, "stable", "web", v); err != nil {
			t.Fatalf("stored pair %s: %v", v, err)
		}
	}
	_, _, _, err = db.PutChartVersion(ctx, chart("stable", "web", "v2.0.0", "c"), chartctl.PutVersionOptions{})
	wantCode(t, err, chartctl.ECONFLICT)
	// Both members of the old pair are indexed: deleting one leaves the
	// number taken by the other.
	if _, _, err := db.DeleteChartVersion(ctx, "stable", "web", "1.0.0"); err != nil {
		t.Fatal(err)
	}
	_, _, _, err = db.PutChartVersion(ctx, chart("stable", "web", "1.0.0+b", "d"), chartctl.PutVersionOptions{})
	wantCode(t, err, chartctl.ECONFLICT)
	if !strings.Contains(chartctl.ErrorMessage(err), "version v1.0.0 already exists") {
		t.Fatalf("message = %q", chartctl.ErrorMessage(err))
	}
}

// Regression (issue 12): an upload in flight when its repository was
// deleted and the name re-created landed in the new repository.
func TestPutChartVersionBoundToRepositoryID(t *testing.T) {
	ctx := context.Background()
	db, _ := setup(t)
	old := mustRepo(t, db, "stable", "")
	if _, err := db.DeleteRepository(ctx, "stable"); err != nil {
		t.Fatal(err)
	}
	current := mustRepo(t, db, "stable", "") // the same owner, at once
	if current.ID == old.ID {
		t.Fatal("re-created repository kept its ID")
	}
	cv := chart("stable", "web", "1.0.0", "a")
	cv.RepositoryID = old.ID
	_, _, _, err := db.PutChartVersion(ctx, cv, chartctl.PutVersionOptions{})
	wantCode(t, err, chartctl.ENOTFOUND)
	if cvs, _ := db.ChartVersions(ctx, "stable", chartctl.ChartFilter{}); len(cvs) != 0 {
		t.Fatalf("the refused upload was stored: %v", cvs)
	}
	mustReferenced(t, db, cv.Digest, false)
	cv.RepositoryID = current.ID
	mustPut(t, db, cv)
}

// Regression (issue 12): a deleted repository's name went at once to
// whoever asked, so Helm clients still using its URL pulled a stranger's
// charts.
func TestRepositoryNameGrace(t *testing.T) {
	ctx := context.Background()
	db, _ := setup(t)
	now := testTime
	db.Now = func() time.Time { return now }
	mustOrg(t, db, "acme", "")
	mustOrg(t, db, "umbrella", "")
	create := func(name, owner, org string) error {
		return db.CreateRepository(ctx, &chartctl.Repository{Name: name, OwnerID: owner, Organization: org})
	}
	del := func(name string) {
		t.Helper()
		if _, err := db.DeleteRepository(ctx, name); err != nil {
			t.Fatal(err)
		}
	}

	// A personal repository: another user waits, the owner does not.
	if err := create("mine", "usr_a", ""); err != nil {
		t.Fatal(err)
	}
	del("mine")
	for _, who := range [][2]string{{"usr_b", ""}, {"usr_a", "acme"}} {
		err := create("mine", who[0], who[1])
		wantCode(t, err, chartctl.ECONFLICT)
		wantMessage(t, err, `The name "mine" is not available.`)
	}
	if err := create("mine", "usr_a", ""); err != nil {
		t.Fatalf("owner re-creates at once: %v", err)
	}

	// An organization's repository: any member of that organization may
	// re-create it; another owner only after the grace period.
	if err := create("shared", "usr_a", "acme"); err != nil {
		t.Fatal(err)
	}
	del("shared")
	now = now.Add(bolt.DefaultNameGrace - time.Second)
	wantCode(t, create("shared", "usr_a", "umbrella"), chartctl.ECONFLICT)
	wantCode(t, create("shared", "usr_b", ""), chartctl.ECONFLICT)
	if err := create("shared", "usr_c", "acme"); err != nil {
		t.Fatalf("same organization: %v", err)
	}
	del("shared")
	now = now.Add(bolt.DefaultNameGrace)
	if err := create("shared", "usr_b", "umbrella"); err != nil {
		t.Fatalf("after the grace period: %v", err)
	}
}

func TestNameGraceOption(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		grace  time.Duration
		refuse bool
	}{{0, false}, {time.Hour, true}} {
		db, err := bolt.Open(filepath.Join(t.TempDir(), "chartctl.db"), bolt.NameGrace(tc.grace))
		if err != nil {
			t.Fatal(err)
		}
		now := testTime
		db.Now = func() time.Time { return now }
		if err := db.CreateRepository(ctx, &chartctl.Repository{Name: "x", OwnerID: "usr_a"}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.DeleteRepository(ctx, "x"); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Hour - time.Second)
		err = db.CreateRepository(ctx, &chartctl.Repository{Name: "x", OwnerID: "usr_b"})
		if (chartctl.ErrorCode(err) == chartctl.ECONFLICT) != tc.refuse {
			t.Fatalf("grace %v: err = %v", tc.grace, err)
		}
		_ = db.Close()
	}
}

// Regression (issue 12): the conflict for a taken name said what took it
// ("Repository \"x\" already exists."), confirming private resources.
func TestNameConflictsAreNeutral(t *testing.T) {
	ctx := context.Background()
	db, _ := setup(t)
	mustOrg(t, db, "taken", "")
	mustRepo(t, db, "taken-repo", "")
	mustTeam(t, db, "taken-team", "taken")
	wantMessage(t, db.CreateOrganization(ctx, &chartctl.Organization{Name: "taken"}), `The name "taken" is not available.`)
	wantMessage(t, db.CreateRepository(ctx, &chartctl.Repository{Name: "taken-repo"}), `The name "taken-repo" is not available.`)
	wantMessage(t, db.CreateTeam(ctx, &chartctl.Team{Name: "taken-team", Organization: "taken"}), `The name "taken-team" is not available.`)
}
