package bolt_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
)

func versionsOf(cvs []*chartctl.ChartVersion) string {
	var parts []string
	for _, cv := range cvs {
		parts = append(parts, cv.Name+"@"+cv.Version)
	}
	return strings.Join(parts, " ")
}

func mustVersions(tb testing.TB, db interface {
	ChartVersions(context.Context, string, chartctl.ChartFilter) ([]*chartctl.ChartVersion, error)
}, repo string, f chartctl.ChartFilter) string {
	tb.Helper()
	cvs, err := db.ChartVersions(context.Background(), repo, f)
	if err != nil {
		tb.Fatalf("ChartVersions(%s, %+v): %v", repo, f, err)
	}
	return versionsOf(cvs)
}

func TestPutChartVersion(t *testing.T) {
	ctx := context.Background()
	db, _ := setup(t)
	mustRepo(t, db, "stable", "")

	cv := chart("stable", "web", "1.0.0", "web-1.0.0")
	cv.Description = "A web app"
	cv.ProvDigest = digest("web-1.0.0.prov")
	stored, created, orphans, err := db.PutChartVersion(ctx, cv, chartctl.PutVersionOptions{})
	if err != nil || !created || len(orphans) != 0 {
		t.Fatalf("first put: created=%v orphans=%v err=%v", created, orphans, err)
	}
	if !stored.CreatedAt.Equal(testTime) || stored.Digest != cv.Digest || stored.Description != "A web app" ||
		stored.AppVersion != "1.0" || stored.Size != cv.Size || stored.ProvDigest != cv.ProvDigest ||
		fmt.Sprint(stored.Keywords) != "[k]" || string(stored.Metadata) != string(cv.Metadata) {
		t.Fatalf("stored = %+v", stored)
	}

	got, err := db.ChartVersion(ctx, "stable", "web", "1.0.0")
	if err != nil || got.Digest != cv.Digest || got.Repository != "stable" || !got.CreatedAt.Equal(testTime) {
		t.Fatalf("ChartVersion = %+v, %v", got, err)
	}

	// A retried push of the same bytes returns the stored record, even with
	// a later clock and other metadata.
	db.Now = func() time.Time { return testTime.Add(time.Hour) }
	retry := chart("stable", "web", "1.0.0", "web-1.0.0")
	retry.Description = "changed"
	stored, created, orphans, err = db.PutChartVersion(ctx, retry, chartctl.PutVersionOptions{})
	if err != nil || created || len(orphans) != 0 {
		t.Fatalf("same-digest put: created=%v orphans=%v err=%v", created, orphans, err)
	}
	if !stored.CreatedAt.Equal(testTime) || stored.Description != "A web app" {
		t.Fatalf("same-digest put returned %+v, want the stored record", stored)
	}
	// Also with overwrite set.
	if _, created, _, err := db.PutChartVersion(ctx, retry, chartctl.PutVersionOptions{Overwrite: true}); err != nil || created {
		t.Fatalf("same-digest overwrite: created=%v err=%v", created, err)
	}

	// Other bytes under the same version conflict.
	_, _, _, err = db.PutChartVersion(ctx, chart("stable", "web", "1.0.0", "other"), chartctl.PutVersionOptions{})
	wantCode(t, err, chartctl.ECONFLICT)
	wantMessage(t, err, "Chart web version 1.0.0 already exists with different content.")
	if got, _ := db.ChartVersion(ctx, "stable", "web", "1.0.0"); got.Digest != cv.Digest {
		t.Fatal("conflicting put changed the record")
	}
	mustReferenced(t, db, digest("other"), false)

	// Errors.
	_, _, _, err = db.PutChartVersion(ctx, chart("ghost", "web", "1.0.0", "x"), chartctl.PutVersionOptions{})
	wantCode(t, err, chartctl.ENOTFOUND)
	wantMessage(t, err, `Repository "ghost" not found.`)
	for _, bad := range []*chartctl.ChartVersion{
		chart("stable", "", "1.0.0", "x"),
		chart("stable", "web", "", "x"),
		chart("stable", "we\x00b", "1.0.0", "x"),
		{Repository: "stable", Name: "web", Version: "2.0.0"},
	} {
		_, _, _, err = db.PutChartVersion(ctx, bad, chartctl.PutVersionOptions{})
		wantCode(t, err, chartctl.EINVALID)
	}

	_, err = db.ChartVersion(ctx, "stable", "web", "9.9.9")
	wantCode(t, err, chartctl.ENOTFOUND)
	wantMessage(t, err, `Chart web version 9.9.9 not found in repository "stable".`)
	_, err = db.ChartVersion(ctx, "ghost", "web", "1.0.0")
	wantCode(t, err, chartctl.ENOTFOUND)
	wantMessage(t, err, `Repository "ghost" not found.`)
	_, err = db.ChartVersion(ctx, "stable", "", "")
	wantCode(t, err, chartctl.ENOTFOUND)
}

func TestOverwrite(t *testing.T) {
	ctx := context.Background()
	db, _ := setup(t)
	mustRepo(t, db, "stable", "")

	prov := digest("shared.prov")
	v1 := chart("stable", "web", "1.0.0", "v1")
	v1.ProvDigest = prov
	mustPut(t, db, v1)

	db.Now = func() time.Time { return testTime.Add(time.Minute) }
	v2 := chart("stable", "web", "1.0.0", "v2")
	v2.ProvDigest = prov // the same provenance blob stays referenced
	stored, created, orphans, err := db.PutChartVersion(ctx, v2, chartctl.PutVersionOptions{Overwrite: true})
	if err != nil || !created {
		t.Fatalf("overwrite: created=%v err=%v", created, err)
	}
	if stored.Digest != v2.Digest || !stored.CreatedAt.Equal(testTime.Add(time.Minute)) {
		t.Fatalf("overwrite stored %+v", stored)
	}
	if fmt.Sprint(orphans) != fmt.Sprint([]string{v1.Digest}) {
		t.Fatalf("orphans = %v, want [%s]", orphans, v1.Digest)
	}
	mustReferenced(t, db, v1.Digest, false)
	mustReferenced(t, db, v2.Digest, true)
	mustReferenced(t, db, prov, true)

	// Overwriting with a record that has no provenance orphans it too.
	v3 := chart("stable", "web", "1.0.0", "v3")
	_, _, orphans, err = db.PutChartVersion(ctx, v3, chartctl.PutVersionOptions{Overwrite: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{v2.Digest, prov}
	if v2.Digest > prov {
		want = []string{prov, v2.Digest}
	}
	if fmt.Sprint(orphans) != fmt.Sprint(want) {
		t.Fatalf("orphans = %v, want %v", orphans, want)
	}
	if got, _ := db.ChartVersion(ctx, "stable", "web", "1.0.0"); got.Digest != v3.Digest || got.ProvDigest != "" {
		t.Fatalf("after overwrite: %+v", got)
	}
}

func TestBlobRefcountsAcrossRepositories(t *testing.T) {
	ctx := context.Background()
	db, _ := setup(t)
	mustRepo(t, db, "a", "")
	mustRepo(t, db, "b", "")

	shared := chart("a", "web", "1.0.0", "shared bytes")
	shared.ProvDigest = digest("shared prov")
	onlyA := chart("a", "api", "2.0.0", "only in a")
	mustPut(t, db, shared)
	mustPut(t, db, onlyA)
	inB := *shared
	inB.Repository = "b"
	mustPut(t, db, &inB)
	// The same bytes under another name in the same repository.
	alias := *shared
	alias.Version = "1.0.1"
	alias.ProvDigest = ""
	mustPut(t, db, &alias)

	mustReferenced(t, db, shared.Digest, true)
	mustReferenced(t, db, digest("never"), false)
	mustReferenced(t, db, "", false)

	// Deleting repository a: only its exclusive blob is orphaned.
	orphans, err := db.DeleteRepository(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(orphans) != fmt.Sprint([]string{onlyA.Digest}) {
		t.Fatalf("DeleteRepository(a) orphans = %v, want [%s]", orphans, onlyA.Digest)
	}
	mustReferenced(t, db, shared.Digest, true)
	mustReferenced(t, db, shared.ProvDigest, true)
	mustReferenced(t, db, onlyA.Digest, false)

	// Deleting the last reference orphans archive and provenance.
	deleted, orphans, err := db.DeleteChartVersion(ctx, "b", "web", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if deleted.Digest != shared.Digest || deleted.Repository != "b" {
		t.Fatalf("deleted = %+v", deleted)
	}
	want := []string{shared.Digest, shared.ProvDigest}
	if want[0] > want[1] {
		want[0], want[1] = want[1], want[0]
	}
	if fmt.Sprint(orphans) != fmt.Sprint(want) {
		t.Fatalf("DeleteChartVersion orphans = %v, want %v", orphans, want)
	}
	mustReferenced(t, db, shared.Digest, false)
	mustReferenced(t, db, shared.ProvDigest, false)

	_, _, err = db.DeleteChartVersion(ctx, "b", "web", "1.0.0")
	wantCode(t, err, chartctl.ENOTFOUND)
	_, _, err = db.DeleteChartVersion(ctx, "a", "web", "1.0.0")
	wantCode(t, err, chartctl.ENOTFOUND)
	wantMessage(t, err, `Repository "a" not found.`)
}

func TestDeleteChartVersionKeepsSharedBlob(t *testing.T) {
	ctx := context.Background()
	db, _ := setup(t)
	mustRepo(t, db, "a", "")
	mustRepo(t, db, "b", "")
	mustPut(t, db, chart("a", "web", "1.0.0", "same"))
	mustPut(t, db, chart("b", "web", "1.0.0", "same"))
	_, orphans, err := db.DeleteChartVersion(ctx, "a", "web", "1.0.0")
	if err != nil || len(orphans) != 0 {
		t.Fatalf("orphans = %v, err = %v", orphans, err)
	}
	mustReferenced(t, db, digest("same"), true)
	orphans, err = db.DeleteRepository(ctx, "b")
	if err != nil || fmt.Sprint(orphans) != fmt.Sprint([]string{digest("same")}) {
		t.Fatalf("orphans = %v, err = %v", orphans, err)
	}
}

func TestChartVersionsOrderAndFilters(t *testing.T) {
	ctx := context.Background()
	db, _ := setup(t)
	mustRepo(t, db, "stable", "")
	mustRepo(t, db, "empty", "")
	for _, nv := range [][2]string{
		{"web", "1.0.0"}, {"web", "1.10.0"}, {"web", "1.2.0"}, {"web", "2.0.0-rc.1"},
		{"web", "2.0.0"}, {"web", "0.9.0"}, {"web", "not-semver"}, {"web", "also-not"},
		{"api", "0.1.0"}, {"api", "0.1.0-alpha"}, {"api", "1.0.0"},
		{"web-ui", "1.0.0"}, {"a", "3.0.0"},
	} {
		mustPut(t, db, chart("stable", nv[0], nv[1], nv[0]+nv[1]))
	}

	tests := []struct {
		f    chartctl.ChartFilter
		want string
	}{
		{chartctl.ChartFilter{}, "a@3.0.0 api@1.0.0 api@0.1.0 api@0.1.0-alpha " +
			"web@2.0.0 web@2.0.0-rc.1 web@1.10.0 web@1.2.0 web@1.0.0 web@0.9.0 web@not-semver web@also-not " +
			"web-ui@1.0.0"},
		// A name filter does not match names it prefixes.
		{chartctl.ChartFilter{Name: "web"}, "web@2.0.0 web@2.0.0-rc.1 web@1.10.0 web@1.2.0 web@1.0.0 web@0.9.0 web@not-semver web@also-not"},
		{chartctl.ChartFilter{Name: "we"}, ""},
		{chartctl.ChartFilter{Version: "1.0.0"}, "api@1.0.0 web@1.0.0 web-ui@1.0.0"},
		{chartctl.ChartFilter{Name: "api", Version: "0.1.0"}, "api@0.1.0"},
		{chartctl.ChartFilter{Name: "api", Version: "9.0.0"}, ""},
		{chartctl.ChartFilter{Name: "nope"}, ""},
	}
	for _, tt := range tests {
		if got := mustVersions(t, db, "stable", tt.f); got != tt.want {
			t.Errorf("ChartVersions(%+v)\n got %s\nwant %s", tt.f, got, tt.want)
		}
	}
	if got := mustVersions(t, db, "empty", chartctl.ChartFilter{}); got != "" {
		t.Errorf("empty repository: %s", got)
	}
	_, err := db.ChartVersions(ctx, "ghost", chartctl.ChartFilter{})
	wantCode(t, err, chartctl.ENOTFOUND)
	wantMessage(t, err, `Repository "ghost" not found.`)
}

func TestConcurrentPutChartVersion(t *testing.T) {
	ctx := context.Background()
	db, _ := setup(t)
	mustRepo(t, db, "stable", "")
	const n = 20
	errs := make([]error, n)
	created := make([]bool, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cv := chart("stable", "web", fmt.Sprintf("1.0.%d", i), fmt.Sprintf("web-%d", i))
			cv.ProvDigest = digest("shared-prov")
			_, created[i], _, errs[i] = db.PutChartVersion(ctx, cv, chartctl.PutVersionOptions{})
		}()
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || !created[i] {
			t.Fatalf("put %d: created=%v err=%v", i, created[i], errs[i])
		}
	}
	cvs, err := db.ChartVersions(ctx, "stable", chartctl.ChartFilter{})
	if err != nil || len(cvs) != n {
		t.Fatalf("%d versions stored, err %v", len(cvs), err)
	}
	if cvs[0].Version != "1.0.19" || cvs[n-1].Version != "1.0.0" {
		t.Fatalf("order: first %s, last %s", cvs[0].Version, cvs[n-1].Version)
	}
	// The shared provenance blob was counted once per record: it is
	// orphaned only by the last deletion.
	for i := range n {
		_, orphans, err := db.DeleteChartVersion(ctx, "stable", "web", fmt.Sprintf("1.0.%d", i))
		if err != nil {
			t.Fatal(err)
		}
		want := []string{digest(fmt.Sprintf("web-%d", i))}
		if i == n-1 {
			want = append(want, digest("shared-prov"))
			sort.Strings(want)
		}
		if fmt.Sprint(orphans) != fmt.Sprint(want) {
			t.Fatalf("delete %d: orphans %v, want %v", i, orphans, want)
		}
	}
}

func TestConcurrentPutSameVersion(t *testing.T) {
	ctx := context.Background()
	db, _ := setup(t)
	mustRepo(t, db, "stable", "")
	// Half the uploads carry the same bytes, half other bytes: exactly one
	// record is created, identical retries succeed, the others conflict.
	const n = 20
	var wg sync.WaitGroup
	type result struct {
		created bool
		digest  string
		err     error
	}
	results := make([]result, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			content := "same"
			if i%2 == 1 {
				content = fmt.Sprintf("different-%d", i)
			}
			stored, created, _, err := db.PutChartVersion(ctx, chart("stable", "web", "1.0.0", content), chartctl.PutVersionOptions{})
			r := result{created: created, err: err}
			if stored != nil {
				r.digest = stored.Digest
			}
			results[i] = r
		}()
	}
	wg.Wait()
	winner, _ := db.ChartVersion(ctx, "stable", "web", "1.0.0")
	createdCount := 0
	for i, r := range results {
		if r.created {
			createdCount++
		}
		switch chartctl.ErrorCode(r.err) {
		case "":
			if r.digest != winner.Digest {
				t.Errorf("put %d succeeded with digest %s, stored is %s", i, r.digest, winner.Digest)
			}
		case chartctl.ECONFLICT:
		default:
			t.Fatalf("put %d: %v", i, r.err)
		}
	}
	if createdCount != 1 {
		t.Fatalf("%d puts created the record, want 1", createdCount)
	}
}

func BenchmarkPutChartVersion(b *testing.B) {
	db, _ := setup(b)
	mustRepo(b, db, "bench", "")
	ctx := context.Background()
	var mu sync.Mutex
	i := 0
	b.ReportAllocs()
	b.ResetTimer()
	// Parallel uploads (8 per CPU) share commits through bbolt's Batch.
	b.SetParallelism(8)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			mu.Lock()
			i++
			v := i
			mu.Unlock()
			cv := chart("bench", "web", fmt.Sprintf("1.0.%d", v), fmt.Sprint(v))
			if _, _, _, err := db.PutChartVersion(ctx, cv, chartctl.PutVersionOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkChartVersions(b *testing.B) {
	db, _ := setup(b)
	mustRepo(b, db, "bench", "")
	ctx := context.Background()
	var wg sync.WaitGroup
	const n = 1000
	errs := make(chan error, n)
	sem := make(chan struct{}, 64)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			cv := chart("bench", fmt.Sprintf("chart-%d", i%10), fmt.Sprintf("%d.%d.0", i/100, i%100), fmt.Sprint(i))
			if _, _, _, err := db.PutChartVersion(ctx, cv, chartctl.PutVersionOptions{}); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		cvs, err := db.ChartVersions(ctx, "bench", chartctl.ChartFilter{})
		if err != nil || len(cvs) != n {
			b.Fatalf("%d versions, err %v", len(cvs), err)
		}
	}
}
