package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/helmindex"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/server"
)

// TestUploadStoresJSONEntry: a version uploaded over /v1 or the
// ChartMuseum API is stored with its JSON index entry beside its YAML one
// (issue #32), exactly the conversion of the YAML entry, and the JSON
// index served lists those bytes; a version stored before (YAML entry
// only) is served the same bytes and ETag before and after the backfill
// stores its entry.
func TestUploadStoresJSONEntry(t *testing.T) {
	ctx := context.Background()
	// The server's own backfill waits (it would run at once, and race
	// the checks below of a version stored without a JSON entry); this
	// test runs it.
	noBackfill := func(srv *server.Server) { srv.Config.BackfillDelay = time.Hour }
	s := testkit.StartServer(t, noBackfill)
	s.MustRepo(t, "pub", "public")
	if r := s.Upload(t, "pub", s.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "1.0.0"}), ""); r.StatusCode != 200 {
		t.Fatalf("upload: %d %s", r.StatusCode, r.Body)
	}
	body, ctype := testkit.Multipart(t, map[string][]byte{"chart": testkit.MakeChart(t, testkit.Chart{Name: "api", Version: "0.1.0"})})
	if r := s.Do(t, "POST", "/helm/api/pub/charts", s.AdminKey, bytes.NewReader(body), "Content-Type", ctype); r.StatusCode/100 != 2 {
		t.Fatalf("ChartMuseum upload: %d %s", r.StatusCode, r.Body)
	}
	index := s.Do(t, "GET", "/helm/pub/index.yaml", "", nil)
	if index.StatusCode != 200 || !json.Valid(index.Body) {
		t.Fatalf("index: %d %s", index.StatusCode, index.Body)
	}
	for _, v := range [][2]string{{"web", "1.0.0"}, {"api", "0.1.0"}} {
		e, err := s.Store.IndexEntry(ctx, "pub", v[0], v[1])
		if err != nil {
			t.Fatal(err)
		}
		want := helmindex.RenderEntryJSON(&chartctl.ChartVersion{IndexEntry: e.IndexEntry})
		if len(e.IndexEntryJSON) == 0 || !bytes.Equal(e.IndexEntryJSON, want) {
			t.Fatalf("%s %s: stored JSON entry %q, want %q", v[0], v[1], e.IndexEntryJSON, want)
		}
		if !bytes.Contains(index.Body, e.IndexEntryJSON) {
			t.Fatalf("the JSON index does not list the stored entry of %s %s", v[0], v[1])
		}
	}

	// A version stored before JSON entries were kept: after a restart its
	// JSON entry is converted at load, and the backfill changes no served
	// byte.
	old, err := s.Store.ChartVersion(ctx, "pub", "web", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	old.Version = "0.9.0"
	old.Metadata = json.RawMessage(bytes.Replace(old.Metadata, []byte(`"version":"1.0.0"`), []byte(`"version":"0.9.0"`), 1))
	old.IndexEntry, old.IndexEntryJSON = nil, nil
	old.IndexEntry = helmindex.RenderEntry(old)
	if _, _, _, err := s.Store.PutChartVersion(ctx, old, chartctl.PutVersionOptions{}); err != nil {
		t.Fatal(err)
	}
	restart := func() *testkit.Server {
		t.Helper()
		_ = s.Server.Close()
		_ = s.Store.Close()
		s = testkit.OpenServer(t, s.Dir, noBackfill)
		return s
	}
	restart()
	if e, _ := s.Store.IndexEntry(ctx, "pub", "web", "0.9.0"); len(e.IndexEntryJSON) != 0 {
		t.Fatalf("the old-style version has a JSON entry: %s", e.IndexEntryJSON)
	}
	before := s.Do(t, "GET", "/helm/pub/index.yaml", "", nil)
	if done, err := s.App().BackfillIndexJSON(ctx); err != nil || !done {
		t.Fatalf("BackfillIndexJSON = %v, %v", done, err)
	}
	e, err := s.Store.IndexEntry(ctx, "pub", "web", "0.9.0")
	if err != nil || !bytes.Equal(e.IndexEntryJSON, helmindex.RenderEntryJSON(&chartctl.ChartVersion{IndexEntry: e.IndexEntry})) {
		t.Fatalf("the backfill stored %q (%v)", e.IndexEntryJSON, err)
	}
	restart()
	after := s.Do(t, "GET", "/helm/pub/index.yaml", "", nil)
	if before.StatusCode != 200 || !bytes.Equal(before.Body, after.Body) || before.Header.Get("ETag") != after.Header.Get("ETag") {
		t.Fatalf("the index changed with the backfill:\n%s\n%s", before.Body, after.Body)
	}
	if !bytes.Contains(after.Body, e.IndexEntryJSON) {
		t.Fatal("the index does not list the backfilled entry")
	}
}
