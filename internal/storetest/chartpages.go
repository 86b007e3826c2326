package storetest

import (
	"testing"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/chartpage"
)

// ChartPages checks an engine's keeping of rendered chart pages
// (chartpage.Backend, not part of Store): a batch is kept whole, a page
// kept again is replaced, a deleted one is gone and deleting it again is
// no error.
func ChartPages(t *testing.T, b chartpage.Backend) {
	d1, d2, d3 := Digest("archive 1"), Digest("archive 2"), Digest("archive 3")
	want := func(d, page string) {
		t.Helper()
		got, err := b.ChartPage(ctx, d)
		if page == "" {
			wantCode(t, err, chartctl.ENOTFOUND)
			return
		}
		must(t, err)
		if string(got) != page {
			t.Fatalf("ChartPage(%s) = %q, want %q", d, got, page)
		}
	}
	want(d1, "")
	must(t, b.SetChartPages(ctx, map[string][]byte{d1: []byte(`{"name":"one"}`), d2: []byte(`{"name":"two"}`)}))
	want(d1, `{"name":"one"}`)
	want(d2, `{"name":"two"}`)
	must(t, b.SetChartPages(ctx, map[string][]byte{d2: []byte(`{"name":"two, again"}`), d3: []byte(`{}`)}))
	want(d1, `{"name":"one"}`)
	want(d2, `{"name":"two, again"}`)
	want(d3, `{}`)
	must(t, b.SetChartPages(ctx, map[string][]byte{}))
	must(t, b.DeleteChartPage(ctx, d2))
	want(d2, "")
	must(t, b.DeleteChartPage(ctx, d2))
	want(d1, `{"name":"one"}`)
}
