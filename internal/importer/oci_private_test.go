package importer_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/internal/cmd/serve"
	"github.com/chartctl/chartctl/internal/importer"
	"github.com/chartctl/chartctl/internal/ratelimit"
	"github.com/chartctl/chartctl/internal/testkit"
)

// startChartctl runs the serve command's composition (the OCI registry
// included) on loopback and returns its URL and its first admin's key.
func startChartctl(t *testing.T) (url, key string) {
	t.Helper()
	cfg := serve.DefaultConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.Data = t.TempDir()
	cfg.RateLimitGlobal, cfg.RateLimitUpload, cfg.RateLimitSearch = ratelimit.Limit{}, ratelimit.Limit{}, ratelimit.Limit{}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- serve.Run(ctx, &serve.Options{Config: cfg, Stderr: io.Discard, Ready: func(u string) { ready <- u }})
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	select {
	case url = <-ready:
	case err := <-done:
		t.Fatalf("chartctl did not start: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(cfg.Data, serve.InitialAdminFile))
	if err != nil {
		t.Fatal(err)
	}
	var admin serve.InitialAdmin
	if err := json.Unmarshal(b, &admin); err != nil {
		t.Fatal(err)
	}
	return url, admin.APIKey
}

// A namespace of a registry whose catalog lists to each caller what it may
// read, and to an anonymous one only public repositories (chartctl's own
// /v2 does): `chartctl import oci://HOST/REPO` with the source's
// credential finds the charts of a private repository, whether the
// credential is a user name and password or a token.
func TestImportOCINamespaceOfPrivateRepository(t *testing.T) {
	helm := testkit.HelmBinary(t)
	srcURL, srcKey := startChartctl(t)
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
