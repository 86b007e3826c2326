package importer_test

import (
	"context"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/chartctl/chartctl/internal/importer"
	"github.com/chartctl/chartctl/internal/testkit"
)

// OCI import against a small in-test registry (go-containerregistry's
// pkg/registry), filled by the real `helm push`. chartctl's own /v2
// registry is built elsewhere; once it lands this test can point at it.
func TestImportOCI(t *testing.T) {
	helm := testkit.HelmBinary(t)
	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(reg.Close)
	host := strings.TrimPrefix(reg.URL, "http://")

	work := t.TempDir()
	testkit.RunHelm(t, helm, work, "create", "alpha")
	testkit.RunHelm(t, helm, work, "create", "beta")
	for _, p := range [][]string{{"alpha", "0.1.0"}, {"alpha", "0.2.0"}, {"beta", "1.0.0+meta"}} {
		testkit.RunHelm(t, helm, work, "package", p[0], "--version", p[1], "-d", work)
		testkit.RunHelm(t, helm, work, "push", filepath.Join(work, p[0]+"-"+p[1]+".tgz"), "oci://"+host+"/charts", "--plain-http")
	}

	ts := testkit.StartServer(t)
	ts.MustRepo(t, "stable", "private")
	im := &importer.Importer{Client: newClient(t, ts, ts.AdminKey), Repo: "stable", KeepCreated: true}

	// A namespace: every chart below it, through the catalog.
	src, err := importer.OpenSource("oci://"+host+"/charts", importer.SourceOptions{PlainHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err := im.Run(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names(res.Imported), " "); got != "alpha@0.1.0 alpha@0.2.0 beta@1.0.0+meta" || len(res.Failed) != 0 {
		t.Fatalf("imported %s, failed %+v", got, res.Failed)
	}
	for _, p := range [][]string{{"alpha", "0.1.0"}, {"alpha", "0.2.0"}, {"beta", "1.0.0+meta"}} {
		want, err := os.ReadFile(filepath.Join(work, p[0]+"-"+p[1]+".tgz"))
		if err != nil {
			t.Fatal(err)
		}
		r := ts.Do(t, "GET", "/v1/repositories/stable/charts/"+p[0]+"/"+p[1]+"/archive", ts.AdminKey, nil)
		if r.StatusCode != 200 || string(r.Body) != string(want) {
			t.Errorf("%s %s: the imported archive differs from the pushed one (%d)", p[0], p[1], r.StatusCode)
		}
	}

	// One chart's repository: its tags; all already present.
	src, err = importer.OpenSource("oci://"+host+"/charts/alpha", importer.SourceOptions{PlainHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err = im.Run(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Imported) != 0 || strings.Join(names(res.Skipped), " ") != "alpha@0.1.0 alpha@0.2.0" {
		t.Fatalf("re-run imported %v, skipped %v", names(res.Imported), names(res.Skipped))
	}
}
