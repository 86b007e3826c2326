package bolt_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/internal/chartctl"
)

func TestChartVersionPageAndLatest(t *testing.T) {
	db, _ := setup(t)
	mustRepo(t, db, "r", "")
	for _, nv := range []string{"web@1.0.0", "web@1.10.0", "web@1.2.0", "api@0.1.0", "api@0.2.0", "db@3.0.0"} {
		name, v, _ := strings.Cut(nv, "@")
		mustPut(t, db, &chartctl.ChartVersion{Repository: "r", Name: name, Version: v, Digest: digest(nv), Size: 1})
	}
	ctx := context.Background()
	ids := func(cvs []*chartctl.ChartVersion) string {
		var out []string
		for _, cv := range cvs {
			out = append(out, cv.Name+"@"+cv.Version)
		}
		return strings.Join(out, " ")
	}
	for _, tc := range []struct {
		f             chartctl.ChartFilter
		offset, limit int
		want          string
		total         int
	}{
		{chartctl.ChartFilter{}, 0, -1, "api@0.2.0 api@0.1.0 db@3.0.0 web@1.10.0 web@1.2.0 web@1.0.0", 6},
		{chartctl.ChartFilter{}, 2, 2, "db@3.0.0 web@1.10.0", 6},
		{chartctl.ChartFilter{}, 6, 2, "", 6},
		{chartctl.ChartFilter{Name: "web"}, 1, 5, "web@1.2.0 web@1.0.0", 3},
		{chartctl.ChartFilter{Version: "1.2.0"}, 0, 10, "web@1.2.0", 1},
		{chartctl.ChartFilter{Name: "web", Version: "1.0.0"}, 0, 10, "web@1.0.0", 1},
		{chartctl.ChartFilter{Name: "web", Version: "9.9.9"}, 0, 10, "", 0},
		{chartctl.ChartFilter{Latest: true}, 0, -1, "api@0.2.0 db@3.0.0 web@1.10.0", 3},
	} {
		got, total, err := db.ChartVersionPage(ctx, "r", tc.f, tc.offset, tc.limit)
		if err != nil {
			t.Fatal(err)
		}
		if ids(got) != tc.want || total != tc.total {
			t.Errorf("%+v from %d limit %d = %q (total %d), want %q (total %d)", tc.f, tc.offset, tc.limit, ids(got), total, tc.want, tc.total)
		}
	}
	if got, err := db.ChartVersions(ctx, "r", chartctl.ChartFilter{Latest: true}); err != nil || len(got) != 3 || got[0].Digest == "" {
		t.Fatalf("latest = %v, %v", ids(got), err)
	}
	_, _, err := db.ChartVersionPage(ctx, "ghost", chartctl.ChartFilter{}, 0, 1)
	wantCode(t, err, chartctl.ENOTFOUND)
}

func BenchmarkChartVersionPage(b *testing.B) {
	db, _ := setup(b)
	mustRepo(b, db, "r", "")
	for i := 0; i < 2000; i++ {
		mustPut(b, db, &chartctl.ChartVersion{Repository: "r", Name: fmt.Sprintf("chart-%d", i%50), Version: fmt.Sprintf("1.%d.0", i), Digest: digest(fmt.Sprint(i)), Size: 1, Metadata: []byte(`{"name":"x","version":"1.0.0","description":"a chart"}`)})
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := db.ChartVersionPage(ctx, "r", chartctl.ChartFilter{}, 100, 100); err != nil {
			b.Fatal(err)
		}
	}
}
