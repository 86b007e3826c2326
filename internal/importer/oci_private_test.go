package importer_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/internal/importer"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/internal/testkit/servetest"
)

// A namespace of a registry whose catalog lists to each caller what it may
// read, and to an anonymous one only public repositories (chartctl's own
// /v2 does): `chartctl import oci://HOST/REPO` with the source's
// credential finds the charts of a private repository, whether the
// credential is a user name and password or a token.
func TestImportOCINamespaceOfPrivateRepository(t *testing.T) {
	helm := testkit.HelmBinary(t)
	srcURL, srcKey := servetest.Start(t)
	host := strings.TrimPrefix(srcURL, "http://")
	req, _ := http.NewRequest("POST", srcURL+"/v1/repositories", strings.NewReader(`{"name":"apps","visibility":"private"}`))
	req.Header.Set("Authorization", "Bearer "+srcKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("create the source repository: %d", resp.StatusCode)
	}
	work := t.TempDir()
	for _, p := range [][]string{{"alpha", "0.1.0"}, {"beta", "1.0.0"}} {
		testkit.RunHelm(t, helm, work, "create", p[0])
		testkit.RunHelm(t, helm, work, "package", p[0], "--version", p[1], "-d", work)
		archive, err := os.ReadFile(filepath.Join(work, p[0]+"-"+p[1]+".tgz"))
		if err != nil {
			t.Fatal(err)
		}
		c, err := testkit.NewOCIChart(p[0], p[1], archive)
		if err != nil {
			t.Fatal(err)
		}
		if err := testkit.PushLikeHelm(http.DefaultClient, srcURL, "apps", "ci", srcKey, c); err != nil {
			t.Fatal(err)
		}
	}

	for name, auth := range map[string]importer.Auth{
		"password": {Username: "ci", Password: srcKey},
		"token":    {Token: srcKey},
	} {
		t.Run(name, func(t *testing.T) {
			ts := testkit.StartServer(t)
			ts.MustRepo(t, "copy", "private")
			im := &importer.Importer{Client: newClient(t, ts, ts.AdminKey), Repo: "copy", KeepCreated: true}
			src, err := importer.OpenSource("oci://"+host+"/apps", importer.SourceOptions{Auth: auth, PlainHTTP: true})
			if err != nil {
				t.Fatal(err)
			}
			res, err := im.Run(context.Background(), src)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(names(res.Imported), " "); got != "alpha@0.1.0 beta@1.0.0" || len(res.Failed) != 0 {
				t.Fatalf("imported %s, failed %+v", got, res.Failed)
			}
		})
	}
}
