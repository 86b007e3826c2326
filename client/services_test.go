package client

import (
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"testing"
	"time"
)

// created is the creation time of every fixture.
var created = time.Date(2026, 11, 21, 22, 33, 45, 0, time.UTC)

func TestRepositoriesService(t *testing.T) {
	ctx := t.Context()
	e := setup(t)
	org := "acme"
	repo := Repository{ID: "repo_1", Name: "stable", Description: "d", Organization: &org, Visibility: "public", CreatedAt: created}
	e.mux.HandleFunc("/v1/repositories", func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			testQuery(t, r, url.Values{"page": {"2"}, "limit": {"5"}})
			writeData(t, w, []Repository{repo}, &Meta{Total: 6, Page: 2, Limit: 5})
		case http.MethodPost:
			testJSONBody(t, r, `{"name":"stable","description":"d","organization":"acme","visibility":"public"}`)
			writeData(t, w, repo, nil)
		default:
			t.Errorf("method %s", r.Method)
		}
	})
	e.mux.HandleFunc("/v1/repositories/{name}", func(w http.ResponseWriter, r *http.Request) {
		if got := r.PathValue("name"); got != "stable" {
			t.Errorf("name = %q", got)
		}
		testQuery(t, r, nil)
		switch r.Method {
		case http.MethodGet:
			writeData(t, w, repo, nil)
		case http.MethodDelete:
			writeData(t, w, nil, nil)
		default:
			t.Errorf("method %s", r.Method)
		}
	})

	list, resp, err := e.client.Repositories.List(ctx, &ListOptions{Page: 2, Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(list, []*Repository{&repo}) || resp.Meta.Total != 6 {
		t.Errorf("List = %+v, meta %+v", list, resp.Meta)
	}
	got, _, err := e.client.Repositories.Create(ctx, &CreateRepositoryRequest{Name: "stable", Description: "d", Organization: "acme", Visibility: "public"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, &repo) {
		t.Errorf("Create = %+v", got)
	}
	got, _, err = e.client.Repositories.Get(ctx, "stable")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, &repo) {
		t.Errorf("Get = %+v", got)
	}
	if _, err := e.client.Repositories.Delete(ctx, "stable"); err != nil {
		t.Fatal(err)
	}
}

func TestPathSegmentsEscaped(t *testing.T) {
	ctx := t.Context()
	e := setup(t)
	var paths []string
	e.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.EscapedPath())
		writeData(t, w, map[string]any{}, nil)
	})
	_, _, _ = e.client.Repositories.Get(ctx, "a/b")
	_, _, _ = e.client.Charts.Get(ctx, "r", "n?x", "1.0.0#y")
	_, _, _ = e.client.Teams.UpdateMember(ctx, "t", "a b@example.com", &UpdateMemberRequest{Role: "owner"})
	want := []string{
		"/v1/repositories/a%2Fb",
		"/v1/repositories/r/charts/n%3Fx/1.0.0%23y",
		"/v1/teams/t/members/a%20b@example.com",
	}
	if !reflect.DeepEqual(paths, want) {
		t.Errorf("paths = %q\nwant    %q", paths, want)
	}
}

func TestChartsServiceMetadata(t *testing.T) {
	ctx := t.Context()
	e := setup(t)
	chart := Chart{Name: "nginx", Version: "1.2.3", Description: "web", AppVersion: "1.25", Digest: "sha256:ab", Size: 10, CreatedAt: created}
	e.mux.HandleFunc("GET /v1/repositories/stable/charts", func(w http.ResponseWriter, r *http.Request) {
		testQuery(t, r, url.Values{"name": {"nginx"}, "version": {"1.2.3"}, "page": {"1"}, "limit": {"10"}})
		writeData(t, w, []Chart{chart}, &Meta{Total: 1, Page: 1, Limit: 10})
	})
	e.mux.HandleFunc("GET /v1/repositories/stable/charts/nginx", func(w http.ResponseWriter, r *http.Request) {
		// Versions asks for 3; AllVersions walks from page 1, 100 a page.
		if r.URL.Query().Has("page") {
			testQuery(t, r, url.Values{"page": {"1"}, "limit": {"100"}})
		} else {
			testQuery(t, r, url.Values{"limit": {"3"}})
		}
		writeData(t, w, []Chart{chart}, &Meta{Total: 1, Page: 1, Limit: 3})
	})
	e.mux.HandleFunc("/v1/repositories/stable/charts/nginx/1.2.3", func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			writeData(t, w, chart, nil)
		case http.MethodDelete:
			w.WriteHeader(http.StatusNoContent)
		default:
			t.Errorf("method %s", r.Method)
		}
	})

	list, _, err := e.client.Charts.List(ctx, "stable", &ChartListOptions{Name: "nginx", Version: "1.2.3", ListOptions: ListOptions{Page: 1, Limit: 10}})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(list, []*Chart{&chart}) {
		t.Errorf("List = %+v", list)
	}
	versions, _, err := e.client.Charts.Versions(ctx, "stable", "nginx", &ListOptions{Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(versions, []*Chart{&chart}) {
		t.Errorf("Versions = %+v", versions)
	}
	one, _, err := e.client.Charts.Get(ctx, "stable", "nginx", "1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(one, &chart) {
		t.Errorf("Get = %+v", one)
	}
	resp, err := e.client.Charts.Delete(ctx, "stable", "nginx", "1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusNoContent {
		t.Errorf("Delete status = %d", resp.StatusCode)
	}
	var none []*Chart
	for c, err := range e.client.Charts.AllVersions(ctx, "stable", "nginx") {
		if err != nil {
			t.Fatal(err)
		}
		none = append(none, c)
	}
	if len(none) != 1 {
		t.Errorf("AllVersions yielded %d", len(none))
	}
}

func TestTeamsService(t *testing.T) {
	ctx := t.Context()
	e := setup(t)
	team := Team{ID: "team_1", Name: "core", Description: "d", MemberCount: 2, Organization: "acme"}
	member := Member{ID: "mem_1", Email: "b@example.com", Role: "maintainer", AddedAt: created}
	e.mux.HandleFunc("/v1/teams", func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			testQuery(t, r, url.Values{"organization": {"acme"}, "limit": {"50"}})
			writeData(t, w, []Team{team}, &Meta{Total: 1, Page: 1, Limit: 50})
		case http.MethodPost:
			testJSONBody(t, r, `{"name":"core","organization":"acme","description":"d"}`)
			writeData(t, w, team, nil)
		}
	})
	e.mux.HandleFunc("GET /v1/teams/core", func(w http.ResponseWriter, r *http.Request) {
		writeData(t, w, team, nil)
	})
	e.mux.HandleFunc("/v1/teams/core/members", func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			testQuery(t, r, url.Values{"page": {"3"}})
			writeData(t, w, []Member{member}, &Meta{Total: 41, Page: 3, Limit: 20})
		case http.MethodPost:
			testJSONBody(t, r, `{"email":"b@example.com","role":"maintainer"}`)
			writeData(t, w, member, nil)
		}
	})
	e.mux.HandleFunc("/v1/teams/core/members/{member}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("member") != "b@example.com" {
			t.Errorf("member = %q", r.PathValue("member"))
		}
		switch r.Method {
		case http.MethodPatch:
			testJSONBody(t, r, `{"role":"owner"}`)
			m := member
			m.Role = "owner"
			writeData(t, w, m, nil)
		case http.MethodDelete:
			writeData(t, w, nil, nil)
		default:
			t.Errorf("method %s", r.Method)
		}
	})

	teams, _, err := e.client.Teams.List(ctx, &TeamListOptions{Organization: "acme", ListOptions: ListOptions{Limit: 50}})
	if err != nil || !reflect.DeepEqual(teams, []*Team{&team}) {
		t.Errorf("List = %+v, %v", teams, err)
	}
	got, _, err := e.client.Teams.Create(ctx, &CreateTeamRequest{Name: "core", Organization: "acme", Description: "d"})
	if err != nil || !reflect.DeepEqual(got, &team) {
		t.Errorf("Create = %+v, %v", got, err)
	}
	got, _, err = e.client.Teams.Get(ctx, "core")
	if err != nil || !reflect.DeepEqual(got, &team) {
		t.Errorf("Get = %+v, %v", got, err)
	}
	members, resp, err := e.client.Teams.Members(ctx, "core", &ListOptions{Page: 3})
	if err != nil || !reflect.DeepEqual(members, []*Member{&member}) || resp.NextPage() != 0 {
		t.Errorf("Members = %+v, %v", members, err)
	}
	m, _, err := e.client.Teams.AddMember(ctx, "core", &AddMemberRequest{Email: "b@example.com", Role: "maintainer"})
	if err != nil || !reflect.DeepEqual(m, &member) {
		t.Errorf("AddMember = %+v, %v", m, err)
	}
	m, _, err = e.client.Teams.UpdateMember(ctx, "core", "b@example.com", &UpdateMemberRequest{Role: "owner"})
	if err != nil || m.Role != "owner" {
		t.Errorf("UpdateMember = %+v, %v", m, err)
	}
	if _, err := e.client.Teams.RemoveMember(ctx, "core", "b@example.com"); err != nil {
		t.Errorf("RemoveMember: %v", err)
	}
}

func TestOrganizationsService(t *testing.T) {
	ctx := t.Context()
	e := setup(t)
	org := Organization{ID: "org_1", Name: "acme", Description: "d", CreatedAt: created}
	e.mux.HandleFunc("/v1/organizations", func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			testQuery(t, r, nil)
			writeData(t, w, []Organization{org}, &Meta{Total: 1, Page: 1, Limit: 20})
		case http.MethodPost:
			testJSONBody(t, r, `{"name":"acme","description":"d"}`)
			writeData(t, w, org, nil)
		}
	})
	orgs, _, err := e.client.Organizations.List(ctx, nil)
	if err != nil || !reflect.DeepEqual(orgs, []*Organization{&org}) {
		t.Errorf("List = %+v, %v", orgs, err)
	}
	got, _, err := e.client.Organizations.Create(ctx, &CreateOrganizationRequest{Name: "acme", Description: "d"})
	if err != nil || !reflect.DeepEqual(got, &org) {
		t.Errorf("Create = %+v, %v", got, err)
	}
}

func TestSearchService(t *testing.T) {
	ctx := t.Context()
	e := setup(t)
	res := SearchResult{Repository: "stable", Name: "nginx", Version: "2.0.0", Keywords: []string{"web"}, CreatedAt: created}
	e.mux.HandleFunc("GET /v1/search", func(w http.ResponseWriter, r *http.Request) {
		want := url.Values{"q": {"web server"}, "repository": {"stable"}, "limit": {"7"}}
		if r.URL.Query().Has("page") {
			// All starts at page 1 and keeps the asked page size.
			want.Set("page", "1")
		}
		testQuery(t, r, want)
		writeData(t, w, []SearchResult{res}, &Meta{Total: 1, Page: 1, Limit: 7})
	})
	got, _, err := e.client.Search.Charts(ctx, "web server", &SearchOptions{Repository: "stable", ListOptions: ListOptions{Limit: 7}})
	if err != nil || !reflect.DeepEqual(got, []*SearchResult{&res}) {
		t.Errorf("Charts = %+v, %v", got, err)
	}
	var all []*SearchResult
	for r, err := range e.client.Search.All(ctx, "web server", SearchOptions{Repository: "stable", ListOptions: ListOptions{Limit: 7}}) {
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, r)
	}
	if len(all) != 1 {
		t.Errorf("All yielded %d", len(all))
	}
}

func TestAPIKeysService(t *testing.T) {
	ctx := t.Context()
	e := setup(t)
	exp := created.Add(90 * 24 * time.Hour)
	key := APIKey{ID: "key_1", Name: "ci", Scopes: []string{"repo:read", "repo:write"}, CreatedAt: created, ExpiresAt: &exp}
	e.mux.HandleFunc("/v1/user/api-keys", func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			testQuery(t, r, url.Values{"limit": {"100"}, "page": {"1"}})
			writeData(t, w, []APIKey{key}, &Meta{Total: 1, Page: 1, Limit: 100})
		case http.MethodPost:
			testJSONBody(t, r, `{"name":"ci","scopes":["repo:read","repo:write"],"expires_at":"2027-02-19T22:33:45Z"}`)
			k := key
			k.Key = "chartctl_secret"
			writeData(t, w, k, nil)
		}
	})
	e.mux.HandleFunc("DELETE /v1/user/api-keys/key_1", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	})
	var keys []*APIKey
	for k, err := range e.client.APIKeys.All(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	if !reflect.DeepEqual(keys, []*APIKey{&key}) {
		t.Errorf("All = %+v", keys)
	}
	got, _, err := e.client.APIKeys.Create(ctx, &CreateAPIKeyRequest{Name: "ci", Scopes: []string{"repo:read", "repo:write"}, ExpiresAt: &exp})
	if err != nil || got.Key != "chartctl_secret" {
		t.Errorf("Create = %+v, %v", got, err)
	}
	if _, err := e.client.APIKeys.Revoke(ctx, "key_1"); err != nil {
		t.Errorf("Revoke: %v", err)
	}
}

func TestRateLimitService(t *testing.T) {
	ctx := t.Context()
	e := setup(t)
	want := RateLimits{Resources: map[string]RateLimitResource{
		"global": {Limit: 1000, Remaining: 990, Reset: 1800000000, Used: 10},
		"search": {Limit: 300, Remaining: 300, Reset: 1800000000},
		"upload": {Limit: 100, Remaining: 99, Reset: 1800000000, Used: 1},
	}}
	var queries []url.Values
	e.mux.HandleFunc("GET /v1/rate-limit", func(w http.ResponseWriter, r *http.Request) {
		queries = append(queries, r.URL.Query())
		writeData(t, w, want, nil)
	})
	got, resp, err := e.client.RateLimit.Get(ctx, "stable")
	if err != nil || !reflect.DeepEqual(got, &want) {
		t.Errorf("Get = %+v, %v", got, err)
	}
	if resp.Rate.Limit != 1000 {
		t.Errorf("Rate = %+v", resp.Rate)
	}
	if _, _, err := e.client.RateLimit.Get(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(queries, []url.Values{{"repository": {"stable"}}, {}}) {
		t.Errorf("queries = %v", queries)
	}
}

func TestUsersService(t *testing.T) {
	ctx := t.Context()
	e := setup(t)
	user := User{ID: "user_1", Email: "ci@example.com", Scopes: []string{"repo:write"}, CreatedAt: created}
	e.mux.HandleFunc("GET /v1/user", func(w http.ResponseWriter, r *http.Request) {
		writeData(t, w, user, nil)
	})
	e.mux.HandleFunc("POST /v1/users", func(w http.ResponseWriter, r *http.Request) {
		testJSONBody(t, r, `{"email":"ci@example.com","password":"pw","admin":true}`)
		writeData(t, w, user, nil)
	})
	e.mux.HandleFunc("POST /v1/users/{email}/api-keys", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("email") != "ci@example.com" {
			t.Errorf("email = %q", r.PathValue("email"))
		}
		testJSONBody(t, r, `{"name":"ci","scopes":["repo:write"]}`)
		writeData(t, w, APIKey{ID: "key_2", Name: "ci", Key: "chartctl_x"}, nil)
	})
	me, _, err := e.client.Users.Me(ctx)
	if err != nil || !reflect.DeepEqual(me, &user) {
		t.Errorf("Me = %+v, %v", me, err)
	}
	u, _, err := e.client.Users.Create(ctx, &CreateUserRequest{Email: "ci@example.com", Password: "pw", Admin: true})
	if err != nil || !reflect.DeepEqual(u, &user) {
		t.Errorf("Create = %+v, %v", u, err)
	}
	k, _, err := e.client.Users.CreateAPIKey(ctx, "ci@example.com", &CreateAPIKeyRequest{Name: "ci", Scopes: []string{"repo:write"}})
	if err != nil || k.Key != "chartctl_x" {
		t.Errorf("CreateAPIKey = %+v, %v", k, err)
	}
}

func TestOAuthClientsService(t *testing.T) {
	ctx := t.Context()
	e := setup(t)
	e.mux.HandleFunc("POST /v1/oauth-clients", func(w http.ResponseWriter, r *http.Request) {
		testJSONBody(t, r, `{"name":"ci","redirect_uris":["https://ci.example.com/cb"]}`)
		writeData(t, w, OAuthClient{ClientID: "cid", ClientSecret: "shh", Name: "ci", RedirectURIs: []string{"https://ci.example.com/cb"}, CreatedAt: created}, nil)
	})
	oc, _, err := e.client.OAuthClients.Create(ctx, &CreateOAuthClientRequest{Name: "ci", RedirectURIs: []string{"https://ci.example.com/cb"}})
	if err != nil || oc.ClientID != "cid" || oc.ClientSecret != "shh" {
		t.Errorf("Create = %+v, %v", oc, err)
	}
}

// pagedRepos serves n repositories honouring page and limit, and counts
// the requests.
func pagedRepos(t *testing.T, e *testEnv, n int, requests *[]string) {
	t.Helper()
	e.mux.HandleFunc("GET /v1/repositories", func(w http.ResponseWriter, r *http.Request) {
		*requests = append(*requests, r.URL.RawQuery)
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
		var items []Repository
		for i := (page - 1) * limit; i < page*limit && i < n; i++ {
			items = append(items, Repository{Name: "r" + strconv.Itoa(i)})
		}
		if items == nil {
			items = []Repository{}
		}
		writeData(t, w, items, &Meta{Total: n, Page: page, Limit: limit})
	})
}

func TestIteratorWalksAllPages(t *testing.T) {
	ctx := t.Context()
	e := setup(t)
	var requests []string
	pagedRepos(t, e, 205, &requests)
	var names []string
	for r, err := range e.client.Repositories.All(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, r.Name)
	}
	if len(names) != 205 || names[0] != "r0" || names[204] != "r204" {
		t.Errorf("got %d names: first %v", len(names), names[:min(3, len(names))])
	}
	want := []string{"limit=100&page=1", "limit=100&page=2", "limit=100&page=3"}
	if !reflect.DeepEqual(requests, want) {
		t.Errorf("requests = %v, want %v", requests, want)
	}
}

func TestIteratorExactMultipleStops(t *testing.T) {
	ctx := t.Context()
	e := setup(t)
	var requests []string
	pagedRepos(t, e, 200, &requests)
	n := 0
	for _, err := range e.client.Repositories.All(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 200 || len(requests) != 2 {
		t.Errorf("got %d items in %d requests, want 200 in 2", n, len(requests))
	}
}

func TestIteratorBreakStopsFetching(t *testing.T) {
	ctx := t.Context()
	e := setup(t)
	var requests []string
	pagedRepos(t, e, 500, &requests)
	n := 0
	for _, err := range e.client.Repositories.All(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if n == 150 {
			break
		}
	}
	if len(requests) != 2 {
		t.Errorf("requests = %v, want 2", requests)
	}
}

func TestIteratorCustomLimitAndFilter(t *testing.T) {
	ctx := t.Context()
	e := setup(t)
	var requests []string
	e.mux.HandleFunc("GET /v1/teams", func(w http.ResponseWriter, r *http.Request) {
		requests = append(requests, r.URL.RawQuery)
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		items := []Team{{Name: "t" + strconv.Itoa(2*page-1)}, {Name: "t" + strconv.Itoa(2*page)}}
		if page == 3 {
			items = items[:1]
		}
		writeData(t, w, items, &Meta{Total: 5, Page: page, Limit: 2})
	})
	var names []string
	for tm, err := range e.client.Teams.All(ctx, TeamListOptions{Organization: "acme", ListOptions: ListOptions{Limit: 2}}) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tm.Name)
	}
	if !reflect.DeepEqual(names, []string{"t1", "t2", "t3", "t4", "t5"}) {
		t.Errorf("names = %v", names)
	}
	want := []string{"limit=2&organization=acme&page=1", "limit=2&organization=acme&page=2", "limit=2&organization=acme&page=3"}
	if !reflect.DeepEqual(requests, want) {
		t.Errorf("requests = %v", requests)
	}
}

func TestIteratorErrorEndsWalk(t *testing.T) {
	ctx := t.Context()
	e := setup(t, WithMaxRetries(0))
	e.mux.HandleFunc("GET /v1/teams/core/members", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("page") == "2" {
			writeError(w, http.StatusForbidden, CodeForbidden, "missing scope team:read")
			return
		}
		writeData(t, w, []Member{{Email: "a@example.com"}}, &Meta{Total: 300, Page: 1, Limit: 100})
	})
	var got []string
	var errs []error
	for m, err := range e.client.Teams.AllMembers(ctx, "core") {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		got = append(got, m.Email)
	}
	if len(got) != 1 || len(errs) != 1 || !IsForbidden(errs[0]) {
		t.Errorf("items %v, errors %v", got, errs)
	}
}

func TestIteratorWithoutMeta(t *testing.T) {
	ctx := t.Context()
	e := setup(t)
	calls := 0
	e.mux.HandleFunc("GET /v1/organizations", func(w http.ResponseWriter, r *http.Request) {
		calls++
		writeData(t, w, []Organization{{Name: "a"}, {Name: "b"}}, nil)
	})
	n := 0
	for _, err := range e.client.Organizations.All(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	// A short page without meta is the last one.
	if n != 2 || calls != 1 {
		t.Errorf("n = %d, calls = %d", n, calls)
	}
}
