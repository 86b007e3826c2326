package server_test

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/server"
)

type serverT = server.Server

type envelope[T any] struct {
	Data T           `json:"data"`
	Meta client.Meta `json:"meta"`
}

type errBody struct {
	Error client.ErrorDetail `json:"error"`
}

func expectError(t *testing.T, r *testkit.Response, status int, code, param string) {
	t.Helper()
	if r.StatusCode != status {
		t.Fatalf("status = %d, want %d; body %s", r.StatusCode, status, r.Body)
	}
	var e errBody
	r.JSON(t, &e)
	if e.Error.Code != code {
		t.Fatalf("code = %q, want %q; body %s", e.Error.Code, code, r.Body)
	}
	if e.Error.Message == "" {
		t.Fatalf("empty message: %s", r.Body)
	}
	if param != "" && e.Error.Parameter != param {
		t.Fatalf("parameter = %q, want %q; body %s", e.Error.Parameter, param, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Fatalf("Content-Type = %q", ct)
	}
}

func TestRepositoriesCRUD(t *testing.T) {
	s := testkit.StartServer(t)
	r := s.DoJSON(t, "POST", "/v1/repositories", s.AdminKey, map[string]string{"name": "stable", "description": "Stable charts"})
	if r.StatusCode != 200 {
		t.Fatalf("create: %d %s", r.StatusCode, r.Body)
	}
	var created envelope[client.Repository]
	r.JSON(t, &created)
	if created.Data.Name != "stable" || created.Data.Description != "Stable charts" || !strings.HasPrefix(created.Data.ID, "repo_") ||
		created.Data.Visibility != "private" || created.Data.Organization != nil || created.Data.CreatedAt.IsZero() {
		t.Fatalf("created = %+v", created.Data)
	}
	if !strings.HasSuffix(string(r.Body), "\n") || !bytes.Contains(r.Body, []byte(`"created_at":"`)) || !bytes.Contains(r.Body, []byte(`Z"`)) {
		t.Fatalf("timestamp not RFC 3339 UTC: %s", r.Body)
	}
	if r.Header.Get("X-Request-Id") == "" {
		t.Fatal("no X-Request-Id")
	}

	expectError(t, s.DoJSON(t, "POST", "/v1/repositories", s.AdminKey, map[string]string{"name": "stable"}), 409, "conflict", "")

	r = s.Do(t, "GET", "/v1/repositories", s.AdminKey, nil)
	var listed envelope[[]client.Repository]
	r.JSON(t, &listed)
	if len(listed.Data) != 1 || listed.Meta != (client.Meta{Total: 1, Page: 1, Limit: 20}) {
		t.Fatalf("list = %+v", listed)
	}

	r = s.Do(t, "GET", "/v1/repositories/stable", s.AdminKey, nil)
	var got envelope[client.Repository]
	r.JSON(t, &got)
	if got.Data.ID != created.Data.ID {
		t.Fatalf("get = %+v", got.Data)
	}
	if r := s.Do(t, "DELETE", "/v1/repositories/stable", s.AdminKey, nil); r.StatusCode != 200 {
		t.Fatalf("delete: %d %s", r.StatusCode, r.Body)
	}
	expectError(t, s.Do(t, "GET", "/v1/repositories/stable", s.AdminKey, nil), 404, "not_found", "")
}

func TestRequestValidation(t *testing.T) {
	s := testkit.StartServer(t)
	cases := []struct {
		name        string
		body        string
		ctype       string
		status      int
		code, param string
	}{
		{"unknown field", `{"name":"a","colour":"red"}`, "application/json", 400, "invalid_parameter", "colour"},
		{"malformed", `{"name":`, "application/json", 400, "invalid_parameter", "body"},
		{"wrong type", `{"name":42}`, "application/json", 400, "invalid_parameter", "name"},
		{"two values", `{"name":"a"}{"name":"b"}`, "application/json", 400, "invalid_parameter", "body"},
		{"missing name", `{}`, "application/json", 400, "invalid_parameter", "name"},
		{"upper case", `{"name":"Stable"}`, "application/json", 400, "invalid_parameter", "name"},
		{"leading dash", `{"name":"-a"}`, "application/json", 400, "invalid_parameter", "name"},
		{"trailing dot", `{"name":"a."}`, "application/json", 400, "invalid_parameter", "name"},
		{"slash", `{"name":"a/b"}`, "application/json", 400, "invalid_parameter", "name"},
		{"too long", `{"name":"` + strings.Repeat("a", 64) + `"}`, "application/json", 400, "invalid_parameter", "name"},
		{"bad visibility", `{"name":"a","visibility":"secret"}`, "application/json", 400, "invalid_parameter", "visibility"},
		{"not json", `name=a`, "application/x-www-form-urlencoded", 415, "unsupported_media_type", ""},
		{"no content type", `{"name":"a"}`, "", 415, "unsupported_media_type", ""},
		{"too large", `{"name":"a","description":"` + strings.Repeat("x", 1<<20) + `"}`, "application/json", 413, "payload_too_large", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := s.Do(t, "POST", "/v1/repositories", s.AdminKey, strings.NewReader(tc.body), "Content-Type", tc.ctype)
			expectError(t, r, tc.status, tc.code, tc.param)
		})
	}
	// The longest legal name is accepted.
	if r := s.DoJSON(t, "POST", "/v1/repositories", s.AdminKey, map[string]string{"name": "a" + strings.Repeat("-", 61) + "z"}); r.StatusCode != 200 {
		t.Fatalf("63-char name: %d %s", r.StatusCode, r.Body)
	}
	// The server still serves after all that.
	if r := s.Do(t, "GET", "/healthz", "", nil); r.StatusCode != 200 {
		t.Fatalf("healthz: %d", r.StatusCode)
	}
}

func TestRoutingErrors(t *testing.T) {
	s := testkit.StartServer(t)
	expectError(t, s.Do(t, "GET", "/v1/nope", s.AdminKey, nil), 404, "not_found", "")
	expectError(t, s.Do(t, "GET", "/nope", "", nil), 404, "not_found", "")
	r := s.Do(t, "PUT", "/v1/repositories", s.AdminKey, nil)
	expectError(t, r, 405, "method_not_allowed", "")
	if allow := r.Header.Get("Allow"); !strings.Contains(allow, "GET") || !strings.Contains(allow, "POST") {
		t.Fatalf("Allow = %q", allow)
	}
	r = s.Do(t, "GET", "/v1/repositories", "", nil)
	expectError(t, r, 401, "unauthorized", "")
	if h := r.Header.Get("WWW-Authenticate"); h != `Bearer realm="chartctl"` {
		t.Fatalf("WWW-Authenticate = %q", h)
	}
	r = s.Do(t, "GET", "/v1/repositories", "chartctl_notavalidkey", nil)
	expectError(t, r, 401, "unauthorized", "")
	if h := r.Header.Get("WWW-Authenticate"); !strings.Contains(h, `error="invalid_token"`) {
		t.Fatalf("WWW-Authenticate = %q", h)
	}
	// Tokens in the query string are never accepted.
	expectError(t, s.Do(t, "GET", "/v1/repositories?access_token="+s.AdminKey, "", nil), 401, "unauthorized", "")
	// A sane request id is echoed; an insane one replaced.
	r = s.Do(t, "GET", "/healthz", "", nil, "X-Request-Id", "abc-123")
	if r.Header.Get("X-Request-Id") != "abc-123" {
		t.Fatalf("request id not echoed: %q", r.Header.Get("X-Request-Id"))
	}
	r = s.Do(t, "GET", "/healthz", "", nil, "X-Request-Id", "bad id; DROP"+strings.Repeat("x", 200))
	if got := r.Header.Get("X-Request-Id"); got == "" || strings.Contains(got, " ") {
		t.Fatalf("request id = %q", got)
	}
	// Made IDs are 24 hexadecimal digits, none given twice: the process's
	// random prefix and a counter.
	var ids []string
	for range 3 {
		id := s.Do(t, "GET", "/healthz", "", nil).Header.Get("X-Request-Id")
		if len(id) != 24 || strings.Trim(id, "0123456789abcdef") != "" || slices.Contains(ids, id) {
			t.Fatalf("request id %q after %q", id, ids)
		}
		if len(ids) > 0 && id[:12] != ids[0][:12] {
			t.Fatalf("request ids %q and %q of one process differ in their prefix", ids[0], id)
		}
		ids = append(ids, id)
	}
	if r := s.Do(t, "GET", "/readyz", "", nil); r.StatusCode != 200 {
		t.Fatalf("readyz: %d", r.StatusCode)
	}
}

func TestPagination(t *testing.T) {
	s := testkit.StartServer(t)
	for i := 0; i < 25; i++ {
		s.MustRepo(t, fmt.Sprintf("repo-%02d", i), "")
	}
	for _, tc := range []struct {
		query string
		param string
	}{{"limit=0", "limit"}, {"limit=101", "limit"}, {"limit=x", "limit"}, {"page=0", "page"}, {"page=abc", "page"}, {"page=-1", "page"}} {
		expectError(t, s.Do(t, "GET", "/v1/repositories?"+tc.query, s.AdminKey, nil), 400, "invalid_parameter", tc.param)
	}
	var p envelope[[]client.Repository]
	s.Do(t, "GET", "/v1/repositories?page=2&limit=10", s.AdminKey, nil).JSON(t, &p)
	if len(p.Data) != 10 || p.Data[0].Name != "repo-10" || p.Meta != (client.Meta{Total: 25, Page: 2, Limit: 10}) {
		t.Fatalf("page 2 = %d items from %q, meta %+v", len(p.Data), p.Data[0].Name, p.Meta)
	}
	s.Do(t, "GET", "/v1/repositories?page=3&limit=10", s.AdminKey, nil).JSON(t, &p)
	if len(p.Data) != 5 {
		t.Fatalf("page 3 = %d items", len(p.Data))
	}
	r := s.Do(t, "GET", "/v1/repositories?page=9&limit=100", s.AdminKey, nil)
	if !bytes.Contains(r.Body, []byte(`"data":[]`)) {
		t.Fatalf("past the end: %s", r.Body)
	}
	s.Do(t, "GET", "/v1/repositories?limit=100", s.AdminKey, nil).JSON(t, &p)
	if len(p.Data) != 25 {
		t.Fatalf("limit 100 = %d items", len(p.Data))
	}
}

func TestConcurrentCreateSameName(t *testing.T) {
	s := testkit.StartServer(t)
	const n = 20
	var wg sync.WaitGroup
	statuses := make([]int, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			statuses[i] = s.DoJSON(t, "POST", "/v1/repositories", s.AdminKey, map[string]string{"name": "race"}).StatusCode
		}(i)
	}
	wg.Wait()
	ok, conflict := 0, 0
	for _, st := range statuses {
		switch st {
		case 200:
			ok++
		case 409:
			conflict++
		}
	}
	if ok != 1 || conflict != n-1 {
		t.Fatalf("ok=%d conflict=%d statuses=%v", ok, conflict, statuses)
	}
}

func TestChartLifecycle(t *testing.T) {
	s := testkit.StartServer(t)
	s.MustRepo(t, "stable", "")
	v1 := testkit.MakeChart(t, testkit.Chart{Name: "nginx", Version: "1.0.0", Keywords: []string{"web", "proxy"},
		Extra: "home: https://nginx.org\nmaintainers:\n  - name: Jane Doe\n    email: jane@example.com\n"})
	r := s.Upload(t, "stable", s.AdminKey, v1, "")
	if r.StatusCode != 200 {
		t.Fatalf("upload: %d %s", r.StatusCode, r.Body)
	}
	var up envelope[client.ChartUpload]
	r.JSON(t, &up)
	if up.Data.Name != "nginx" || up.Data.Version != "1.0.0" || !strings.HasPrefix(up.Data.Digest, "sha256:") || up.Data.Size != int64(len(v1)) {
		t.Fatalf("upload = %+v", up.Data)
	}
	// Identical bytes again: 200 with the stored record.
	r = s.Upload(t, "stable", s.AdminKey, v1, "")
	var again envelope[client.ChartUpload]
	r.JSON(t, &again)
	if r.StatusCode != 200 || again.Data != up.Data {
		t.Fatalf("re-upload: %d %+v", r.StatusCode, again.Data)
	}
	// Other bytes for the same version: 409; force without --allow-overwrite still 409.
	other := testkit.MakeChart(t, testkit.Chart{Name: "nginx", Version: "1.0.0", Description: "changed"})
	expectError(t, s.Upload(t, "stable", s.AdminKey, other, ""), 409, "conflict", "")
	expectError(t, s.Upload(t, "stable", s.AdminKey, other, "?force=true"), 409, "conflict", "")

	for _, v := range []string{"1.10.0", "1.2.0", "2.0.0-rc.1"} {
		if r := s.Upload(t, "stable", s.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "nginx", Version: v}), ""); r.StatusCode != 200 {
			t.Fatalf("upload %s: %d %s", v, r.StatusCode, r.Body)
		}
	}
	s.Upload(t, "stable", s.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "alpine", Version: "0.1.0"}), "")

	var charts envelope[[]client.Chart]
	s.Do(t, "GET", "/v1/repositories/stable/charts", s.AdminKey, nil).JSON(t, &charts)
	var order []string
	for _, c := range charts.Data {
		order = append(order, c.Name+"@"+c.Version)
	}
	want := "alpine@0.1.0 nginx@2.0.0-rc.1 nginx@1.10.0 nginx@1.2.0 nginx@1.0.0"
	if strings.Join(order, " ") != want {
		t.Fatalf("order = %v, want %s", order, want)
	}
	if charts.Data[4].Description != "A Helm chart for nginx" || charts.Data[4].AppVersion != "1.0.0" || charts.Data[4].Digest != up.Data.Digest {
		t.Fatalf("item = %+v", charts.Data[4])
	}
	s.Do(t, "GET", "/v1/repositories/stable/charts?version=1.2.0", s.AdminKey, nil).JSON(t, &charts)
	if len(charts.Data) != 1 || charts.Data[0].Version != "1.2.0" {
		t.Fatalf("version filter = %+v", charts.Data)
	}
	s.Do(t, "GET", "/v1/repositories/stable/charts?name=alpine", s.AdminKey, nil).JSON(t, &charts)
	if len(charts.Data) != 1 || charts.Data[0].Name != "alpine" {
		t.Fatalf("name filter = %+v", charts.Data)
	}
	expectError(t, s.Do(t, "GET", "/v1/repositories/stable/charts?version=not..semver", s.AdminKey, nil), 400, "invalid_parameter", "version")
	s.Do(t, "GET", "/v1/repositories/stable/charts/nginx", s.AdminKey, nil).JSON(t, &charts)
	if len(charts.Data) != 4 || charts.Meta.Total != 4 {
		t.Fatalf("versions = %+v", charts)
	}
	var one envelope[client.Chart]
	s.Do(t, "GET", "/v1/repositories/stable/charts/nginx/1.0.0", s.AdminKey, nil).JSON(t, &one)
	if one.Data.Digest != up.Data.Digest || one.Data.Home != "https://nginx.org" || len(one.Data.Maintainers) != 1 || one.Data.Maintainers[0].Email != "jane@example.com" {
		t.Fatalf("one = %+v", one.Data)
	}
	r = s.Do(t, "GET", "/v1/repositories/stable/charts/nginx/1.0.0/archive", s.AdminKey, nil)
	if r.StatusCode != 200 || !bytes.Equal(r.Body, v1) || r.Header.Get("ETag") != `"`+up.Data.Digest+`"` {
		t.Fatalf("download: %d etag %q identical=%v", r.StatusCode, r.Header.Get("ETag"), bytes.Equal(r.Body, v1))
	}
	r = s.Do(t, "GET", "/v1/repositories/stable/charts/nginx/1.0.0/archive", s.AdminKey, nil, "If-None-Match", `"`+up.Data.Digest+`"`)
	if r.StatusCode != 304 {
		t.Fatalf("conditional download: %d", r.StatusCode)
	}
	expectError(t, s.Do(t, "GET", "/v1/repositories/stable/charts/nginx/9.9.9", s.AdminKey, nil), 404, "not_found", "")
	expectError(t, s.Do(t, "GET", "/v1/repositories/stable/charts/nope", s.AdminKey, nil), 404, "not_found", "")
	if r := s.Do(t, "DELETE", "/v1/repositories/stable/charts/nginx/1.0.0", s.AdminKey, nil); r.StatusCode != 200 {
		t.Fatalf("delete: %d %s", r.StatusCode, r.Body)
	}
	expectError(t, s.Do(t, "GET", "/v1/repositories/stable/charts/nginx/1.0.0/archive", s.AdminKey, nil), 404, "not_found", "")
	// After deletion the other bytes can take the version.
	if r := s.Upload(t, "stable", s.AdminKey, other, ""); r.StatusCode != 200 {
		t.Fatalf("upload after delete: %d %s", r.StatusCode, r.Body)
	}
}

func TestOverwriteAllowed(t *testing.T) {
	s := testkit.StartServer(t, func(srv *serverT) { srv.Config.AllowOverwrite = true })
	s.MustRepo(t, "r", "")
	a := testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "1.0.0"})
	b := testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "1.0.0", Description: "second"})
	s.Upload(t, "r", s.AdminKey, a, "")
	expectError(t, s.Upload(t, "r", s.AdminKey, b, ""), 409, "conflict", "")
	expectError(t, s.Upload(t, "r", s.AdminKey, b, "?force=maybe"), 400, "invalid_parameter", "force")
	if r := s.Upload(t, "r", s.AdminKey, b, "?force=true"); r.StatusCode != 200 {
		t.Fatalf("forced: %d %s", r.StatusCode, r.Body)
	}
	r := s.Do(t, "GET", "/v1/repositories/r/charts/app/1.0.0/archive", s.AdminKey, nil)
	if !bytes.Equal(r.Body, b) {
		t.Fatal("download after overwrite is not the new archive")
	}
}

func TestUploadErrors(t *testing.T) {
	s := testkit.StartServer(t, func(srv *serverT) { srv.Config.MaxChartSize = 64 << 10 })
	s.MustRepo(t, "r", "")
	good := testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "1.0.0"})

	// Not multipart.
	expectError(t, s.Do(t, "POST", "/v1/repositories/r/charts", s.AdminKey, bytes.NewReader(good), "Content-Type", "application/gzip"), 415, "unsupported_media_type", "")
	// Missing field.
	body, ctype := testkit.Multipart(t, map[string][]byte{"file": good})
	expectError(t, s.Do(t, "POST", "/v1/repositories/r/charts", s.AdminKey, bytes.NewReader(body), "Content-Type", ctype), 400, "invalid_parameter", "file")
	body, ctype = testkit.Multipart(t, map[string][]byte{})
	expectError(t, s.Do(t, "POST", "/v1/repositories/r/charts", s.AdminKey, bytes.NewReader(body), "Content-Type", ctype), 400, "invalid_parameter", "chart")
	// Not an archive.
	expectError(t, s.Upload(t, "r", s.AdminKey, []byte("hello"), ""), 400, "invalid_parameter", "chart")
	// Over the size limit: 413 (random bytes do not compress).
	big := make([]byte, 100<<10)
	for i := range big {
		big[i] = byte(i*7919 + i>>3)
	}
	expectError(t, s.Upload(t, "r", s.AdminKey, big, ""), 413, "payload_too_large", "")
	// Unknown repository.
	expectError(t, s.Upload(t, "nope", s.AdminKey, good, ""), 404, "not_found", "")
	// Path traversal through the archive.
	evil := testkit.Archive(t, "app", map[string]string{"Chart.yaml": "apiVersion: v2\nname: app\nversion: 1.0.0\n", "../../escape": "x"})
	r := s.Upload(t, "r", s.AdminKey, evil, "")
	expectError(t, r, 400, "invalid_parameter", "chart")
	// Nothing was stored by the failures.
	var charts envelope[[]client.Chart]
	s.Do(t, "GET", "/v1/repositories/r/charts", s.AdminKey, nil).JSON(t, &charts)
	if len(charts.Data) != 0 {
		t.Fatalf("stored after failures: %+v", charts.Data)
	}
	if r := s.Upload(t, "r", s.AdminKey, good, ""); r.StatusCode != 200 {
		t.Fatalf("good upload: %d %s", r.StatusCode, r.Body)
	}
}

func TestOrganizationsAndTeams(t *testing.T) {
	s := testkit.StartServer(t)
	r := s.DoJSON(t, "POST", "/v1/organizations", s.AdminKey, map[string]string{"name": "acme", "description": "ACME Corp"})
	if r.StatusCode != 200 {
		t.Fatalf("create org: %d %s", r.StatusCode, r.Body)
	}
	expectError(t, s.DoJSON(t, "POST", "/v1/organizations", s.AdminKey, map[string]string{"name": "acme"}), 409, "conflict", "")
	var orgs envelope[[]client.Organization]
	s.Do(t, "GET", "/v1/organizations", s.AdminKey, nil).JSON(t, &orgs)
	if len(orgs.Data) != 1 || orgs.Data[0].Name != "acme" || !strings.HasPrefix(orgs.Data[0].ID, "org_") {
		t.Fatalf("orgs = %+v", orgs)
	}
	r = s.DoJSON(t, "POST", "/v1/teams", s.AdminKey, map[string]string{"name": "platform", "organization": "acme", "description": "Platform team"})
	if r.StatusCode != 200 {
		t.Fatalf("create team: %d %s", r.StatusCode, r.Body)
	}
	expectError(t, s.DoJSON(t, "POST", "/v1/teams", s.AdminKey, map[string]string{"name": "x", "organization": "nope"}), 404, "not_found", "")
	expectError(t, s.DoJSON(t, "POST", "/v1/teams/platform/members", s.AdminKey, map[string]string{"email": "not-an-email"}), 400, "invalid_parameter", "email")
	expectError(t, s.DoJSON(t, "POST", "/v1/teams/platform/members", s.AdminKey, map[string]string{"email": "a@example.com", "role": "boss"}), 400, "invalid_parameter", "role")
	r = s.DoJSON(t, "POST", "/v1/teams/platform/members", s.AdminKey, map[string]string{"email": "dev@example.com"})
	var m envelope[client.Member]
	r.JSON(t, &m)
	if r.StatusCode != 200 || m.Data.Role != "member" || m.Data.Email != "dev@example.com" || !strings.HasPrefix(m.Data.ID, "mem_") {
		t.Fatalf("add member: %d %s", r.StatusCode, r.Body)
	}
	expectError(t, s.DoJSON(t, "POST", "/v1/teams/platform/members", s.AdminKey, map[string]string{"email": "dev@example.com"}), 409, "conflict", "")
	r = s.DoJSON(t, "PATCH", "/v1/teams/platform/members/"+m.Data.ID, s.AdminKey, map[string]string{"role": "maintainer"})
	r.JSON(t, &m)
	if m.Data.Role != "maintainer" {
		t.Fatalf("patch: %s", r.Body)
	}
	var teams envelope[[]client.Team]
	s.Do(t, "GET", "/v1/teams?organization=acme", s.AdminKey, nil).JSON(t, &teams)
	if len(teams.Data) != 1 || teams.Data[0].MemberCount != 1 || teams.Data[0].Organization != "acme" {
		t.Fatalf("teams = %+v", teams.Data)
	}
	expectError(t, s.Do(t, "GET", "/v1/teams?organization=ghost", s.AdminKey, nil), 404, "not_found", "")
	var team envelope[client.Team]
	s.Do(t, "GET", "/v1/teams/platform", s.AdminKey, nil).JSON(t, &team)
	if team.Data.Description != "Platform team" {
		t.Fatalf("team = %+v", team.Data)
	}
	var members envelope[[]client.Member]
	s.Do(t, "GET", "/v1/teams/platform/members", s.AdminKey, nil).JSON(t, &members)
	if len(members.Data) != 1 {
		t.Fatalf("members = %+v", members.Data)
	}
	// Remove by email works as well as by id.
	if r := s.Do(t, "DELETE", "/v1/teams/platform/members/dev@example.com", s.AdminKey, nil); r.StatusCode != 200 {
		t.Fatalf("remove: %d %s", r.StatusCode, r.Body)
	}
	expectError(t, s.Do(t, "DELETE", "/v1/teams/platform/members/dev@example.com", s.AdminKey, nil), 404, "not_found", "")
}

func TestSearch(t *testing.T) {
	s := testkit.StartServer(t)
	s.MustRepo(t, "a", "")
	s.MustRepo(t, "b", "")
	s.Upload(t, "a", s.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "redis", Version: "1.0.0", Description: "Key-value store"}), "")
	s.Upload(t, "a", s.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "redis", Version: "1.1.0", Description: "Key-value store"}), "")
	s.Upload(t, "b", s.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "cache", Version: "0.1.0", Description: "Wraps redis"}), "")
	s.Upload(t, "b", s.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "0.1.0", Keywords: []string{"redis-backed"}}), "")
	s.Upload(t, "b", s.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "ha-redis", Version: "0.1.0"}), "")
	s.Upload(t, "b", s.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "redis-operator", Version: "0.1.0"}), "")
	var res envelope[[]client.SearchResult]
	s.Do(t, "GET", "/v1/search?q=REDIS", s.AdminKey, nil).JSON(t, &res)
	var got []string
	for _, h := range res.Data {
		got = append(got, h.Repository+"/"+h.Name+"@"+h.Version)
	}
	if strings.Join(got, " ") != "a/redis@1.1.0 b/redis-operator@0.1.0 b/ha-redis@0.1.0 b/cache@0.1.0 b/web@0.1.0" {
		t.Fatalf("search = %v", got)
	}
	s.Do(t, "GET", "/v1/search?q=redis&repository=b", s.AdminKey, nil).JSON(t, &res)
	if len(res.Data) != 4 {
		t.Fatalf("repository filter = %+v", res.Data)
	}
	expectError(t, s.Do(t, "GET", "/v1/search", s.AdminKey, nil), 400, "invalid_parameter", "q")
	expectError(t, s.Do(t, "GET", "/v1/search?q="+strings.Repeat("x", 257), s.AdminKey, nil), 400, "invalid_parameter", "q")
	expectError(t, s.Do(t, "GET", "/v1/search?q=x&repository=ghost", s.AdminKey, nil), 404, "not_found", "")
}

func TestUserAndRateLimitEndpoints(t *testing.T) {
	s := testkit.StartServer(t)
	var u envelope[client.User]
	s.Do(t, "GET", "/v1/user", s.AdminKey, nil).JSON(t, &u)
	if u.Data.Email != "admin@example.com" || !u.Data.Admin || len(u.Data.Scopes) != len(chartctl.AllScopes) {
		t.Fatalf("user = %+v", u.Data)
	}
	r := s.Do(t, "GET", "/v1/rate-limit", s.AdminKey, nil)
	var rl envelope[client.RateLimits]
	r.JSON(t, &rl)
	g, ok := rl.Data.Resources["global"]
	if r.StatusCode != 200 || !ok || g.Limit != 1000 || r.Header.Get("X-RateLimit-Limit") != "1000" {
		t.Fatalf("rate-limit: %d %s", r.StatusCode, r.Body)
	}
	if _, ok := rl.Data.Resources["search"]; !ok {
		t.Fatalf("no search bucket: %s", r.Body)
	}
	s.MustRepo(t, "r", "")
	s.Do(t, "GET", "/v1/rate-limit?repository=r", s.AdminKey, nil).JSON(t, &rl)
	if up, ok := rl.Data.Resources["upload"]; !ok || up.Limit != 100 {
		t.Fatalf("upload bucket: %+v", rl.Data)
	}
}

func TestHealthNeedsNoAuth(t *testing.T) {
	s := testkit.StartServer(t)
	r := s.Do(t, http.MethodGet, "/healthz", "", nil)
	if r.StatusCode != 200 {
		t.Fatalf("healthz: %d", r.StatusCode)
	}
}

func TestMetrics(t *testing.T) {
	s := testkit.StartServer(t)
	s.MustRepo(t, "pub", "public")
	s.Upload(t, "pub", s.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "1.0.0"}), "")
	s.Upload(t, "pub", s.AdminKey, []byte("junk"), "")
	s.Do(t, "GET", "/helm/pub/index.yaml", "", nil)
	s.Do(t, "GET", "/v1/repositories/pub", s.AdminKey, nil)
	r := s.Do(t, "GET", "/metrics", "", nil)
	body := string(r.Body)
	for _, want := range []string{
		`chartctl_http_requests_total{method="GET",route="/v1/repositories/:repo",status="200"} 1`,
		`chartctl_chart_uploads_total{reason="created",result="accepted"} 1`,
		`chartctl_chart_uploads_total{reason="invalid_parameter",result="rejected"} 1`,
		`chartctl_index_render_seconds_count 1`,
		`chartctl_store_bytes`,
		`chartctl_blobs 1`,
		`go_goroutines`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if strings.Contains(body, `route="/v1/repositories/pub"`) {
		t.Error("raw path used as a route label")
	}
}

// A key name over 100 characters is refused as too long (it was "name is
// required (1-100 characters)", which reads as if none was given); a
// blank one as missing. Characters are counted, not bytes.
func TestAPIKeyNameTooLongOrMissing(t *testing.T) {
	s := testkit.StartServer(t)
	for _, c := range []struct {
		name, want string
	}{
		{strings.Repeat("k", 101), "name is too long (101 characters): give the key a name of at most 100 characters."},
		{"  ", `name is required: give the key a name of 1 to 100 characters, such as "CI deploys".`},
	} {
		for _, path := range []string{"/v1/user/api-keys", "/v1/users/admin@example.com/api-keys"} {
			r := s.DoJSON(t, http.MethodPost, path, s.AdminKey, map[string]any{"name": c.name, "scopes": []string{"repo:read"}})
			expectError(t, r, 400, "invalid_parameter", "name")
			var e errBody
			r.JSON(t, &e)
			if e.Error.Message != c.want {
				t.Errorf("POST %s with a %d-character name: %q, want %q", path, len(c.name), e.Error.Message, c.want)
			}
		}
	}
	r := s.DoJSON(t, http.MethodPost, "/v1/user/api-keys", s.AdminKey, map[string]any{"name": strings.Repeat("é", 100), "scopes": []string{"repo:read"}})
	if r.StatusCode != 200 {
		t.Errorf("a name of 100 two-byte characters: %d %s", r.StatusCode, r.Body)
	}
}
