package server_test

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/server"
)

func setQuota(t *testing.T, s *testkit.Server, path string, body string) client.Quota {
	t.Helper()
	r := s.Do(t, "PUT", path, s.AdminKey, strings.NewReader(body), "Content-Type", "application/json")
	if r.StatusCode != 200 {
		t.Fatalf("set quota: %d %s", r.StatusCode, r.Body)
	}
	var q envelope[client.Quota]
	r.JSON(t, &q)
	return q.Data
}

// TestQuotaBoundary: an upload that fills a repository's byte quota
// exactly is stored; one byte more is 507 quota_exceeded naming the quota,
// its limit and the current use, on /v1 and on the ChartMuseum API.
func TestQuotaBoundary(t *testing.T) {
	s := testkit.StartServer(t)
	archive := testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "1.0.0"})
	size := int64(len(archive))
	for _, proto := range []string{"v1", "chartmuseum"} {
		t.Run(proto, func(t *testing.T) {
			at, over := "at-"+proto, "over-"+proto
			s.MustRepo(t, at, "")
			s.MustRepo(t, over, "")
			setQuota(t, s, "/v1/repositories/"+at+"/quota", fmt.Sprintf(`{"max_bytes":%d}`, size))
			setQuota(t, s, "/v1/repositories/"+over+"/quota", fmt.Sprintf(`{"max_bytes":%d}`, size-1))
			upload := func(repo string) *testkit.Response {
				if proto == "v1" {
					return s.Upload(t, repo, s.AdminKey, archive, "")
				}
				body, ctype := testkit.Multipart(t, map[string][]byte{"chart": archive})
				return s.Do(t, "POST", "/helm/api/"+repo+"/charts", s.AdminKey, bytes.NewReader(body), "Content-Type", ctype)
			}
			if r := upload(at); r.StatusCode/100 != 2 {
				t.Fatalf("exactly at the quota: %d %s", r.StatusCode, r.Body)
			}
			r := upload(over)
			if r.StatusCode != 507 {
				t.Fatalf("one byte over: %d %s", r.StatusCode, r.Body)
			}
			want := fmt.Sprintf(`the max_bytes quota of repository \"%s\" is %d bytes, with 0 bytes used; this upload needs %d more`, over, size-1, size)
			if !bytes.Contains(r.Body, []byte(want)) {
				t.Fatalf("message %s, want %q", r.Body, want)
			}
			if proto == "v1" {
				expectError(t, r, 507, "quota_exceeded", "")
			}
			c := clientFor(t, s, s.AdminKey)
			q, _, err := c.Repositories.Quota(t.Context(), at)
			if err != nil || *q.MaxBytes != size || q.UsedBytes != size || q.UsedVersions != 1 || q.MaxVersions != nil {
				t.Fatalf("quota %+v %v", q, err)
			}
			q, _, err = c.Repositories.Quota(t.Context(), over)
			if err != nil || q.UsedBytes != 0 || q.UsedVersions != 0 {
				t.Fatalf("nothing stored over quota: %+v %v", q, err)
			}
		})
	}
}

// TestQuotaConcurrentUploadsCannotOvershoot: twenty uploads at once into
// a repository with room for five versions store exactly five. (One
// credential sends them all, so its cap of concurrent uploads is lifted.)
func TestQuotaConcurrentUploadsCannotOvershoot(t *testing.T) {
	s := testkit.StartServer(t, func(srv *server.Server) { srv.Config.MaxConcurrentUploads = 0 })
	s.MustRepo(t, "busy", "")
	setQuota(t, s, "/v1/repositories/busy/quota", `{"max_versions":5}`)
	var archives [][]byte
	for i := 0; i < 20; i++ {
		archives = append(archives, testkit.MakeChart(t, testkit.Chart{Name: "app", Version: fmt.Sprintf("1.0.%d", i)}))
	}
	var (
		wg          sync.WaitGroup
		mu          sync.Mutex
		ok, refused int
	)
	for _, a := range archives {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := s.Upload(t, "busy", s.AdminKey, a, "")
			mu.Lock()
			defer mu.Unlock()
			switch r.StatusCode {
			case 200:
				ok++
			case 507:
				refused++
			default:
				t.Errorf("upload: %d %s", r.StatusCode, r.Body)
			}
		}()
	}
	wg.Wait()
	q, _, err := clientFor(t, s, s.AdminKey).Repositories.Quota(t.Context(), "busy")
	if ok != 5 || refused != 15 || err != nil || q.UsedVersions != 5 {
		t.Fatalf("stored %d, refused %d, usage %+v %v", ok, refused, q, err)
	}
	// Deleting frees room.
	if r := s.Do(t, "DELETE", "/v1/repositories/busy/charts/app/"+firstVersion(t, s), s.AdminKey, nil); r.StatusCode != 200 {
		t.Fatalf("delete: %d %s", r.StatusCode, r.Body)
	}
	if r := s.Upload(t, "busy", s.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "2.0.0"}), ""); r.StatusCode != 200 {
		t.Fatalf("after delete: %d %s", r.StatusCode, r.Body)
	}
}

func firstVersion(t *testing.T, s *testkit.Server) string {
	var env envelope[[]client.Chart]
	s.Do(t, "GET", "/v1/repositories/busy/charts/app", s.AdminKey, nil).JSON(t, &env)
	return env.Data[0].Version
}

// TestOrganizationQuota: an organization's quota counts every repository
// of it; its owners set their repositories' quotas but not its own.
func TestOrganizationQuota(t *testing.T) {
	s := testkit.StartServer(t)
	owner := s.MustUser(t, "owner@example.com", false)
	ownerKey := s.MustKey(t, owner, chartctl.AllScopes...)
	if r := s.DoJSON(t, "POST", "/v1/organizations", ownerKey, map[string]string{"name": "acme"}); r.StatusCode != 200 {
		t.Fatalf("org: %d %s", r.StatusCode, r.Body)
	}
	for _, n := range []string{"a", "b"} {
		if r := s.DoJSON(t, "POST", "/v1/repositories", ownerKey, map[string]string{"name": n, "organization": "acme"}); r.StatusCode != 200 {
			t.Fatalf("repo: %d %s", r.StatusCode, r.Body)
		}
	}
	expectError(t, s.DoJSON(t, "PUT", "/v1/organizations/acme/quota", ownerKey, map[string]any{"max_versions": 10}), 403, "forbidden", "")
	if r := s.DoJSON(t, "PUT", "/v1/repositories/a/quota", ownerKey, map[string]any{"max_versions": 10}); r.StatusCode != 200 {
		t.Fatalf("owner sets a repository quota: %d %s", r.StatusCode, r.Body)
	}
	setQuota(t, s, "/v1/organizations/acme/quota", `{"max_versions":2}`)
	for i, repo := range []string{"a", "b"} {
		if r := s.Upload(t, repo, ownerKey, testkit.MakeChart(t, testkit.Chart{Name: "x", Version: fmt.Sprintf("1.%d.0", i)}), ""); r.StatusCode != 200 {
			t.Fatalf("upload: %d %s", r.StatusCode, r.Body)
		}
	}
	r := s.Upload(t, "b", ownerKey, testkit.MakeChart(t, testkit.Chart{Name: "x", Version: "9.0.0"}), "")
	expectError(t, r, 507, "quota_exceeded", "")
	if !bytes.Contains(r.Body, []byte(`the max_versions quota of organization \"acme\" is 2 chart versions, with 2 stored`)) {
		t.Fatalf("message %s", r.Body)
	}
	var q envelope[client.Quota]
	s.Do(t, "GET", "/v1/organizations/acme/quota", ownerKey, nil).JSON(t, &q)
	if q.Data.UsedVersions != 2 || *q.Data.MaxVersions != 2 || q.Data.MaxBytes != nil {
		t.Fatalf("org quota %+v", q.Data)
	}
	// Deleting a repository gives its room back to the organization.
	if r := s.Do(t, "DELETE", "/v1/repositories/a", ownerKey, nil); r.StatusCode != 200 {
		t.Fatalf("delete repo: %d %s", r.StatusCode, r.Body)
	}
	s.Do(t, "GET", "/v1/organizations/acme/quota", ownerKey, nil).JSON(t, &q)
	if q.Data.UsedVersions != 1 {
		t.Fatalf("after delete %+v", q.Data)
	}
	dev := s.MustUser(t, "dev@example.com", false)
	devKey := s.MustKey(t, dev, chartctl.AllScopes...)
	if r := s.DoJSON(t, "POST", "/v1/repositories", devKey, map[string]string{"name": "mine"}); r.StatusCode != 200 {
		t.Fatalf("personal repo: %d %s", r.StatusCode, r.Body)
	}
	expectError(t, s.DoJSON(t, "PUT", "/v1/repositories/mine/quota", devKey, map[string]any{"max_bytes": 1}), 403, "forbidden", "")
	expectError(t, s.DoJSON(t, "PUT", "/v1/repositories/mine/quota", s.AdminKey, map[string]any{"max_bytes": -1}), 400, "invalid_parameter", "max_bytes")
}
