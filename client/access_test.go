package client

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"testing"
	"time"
)

func TestRepositoriesAccess(t *testing.T) {
	ctx := t.Context()
	e := setup(t)
	team := Grant{Kind: GrantKindTeam, Name: "web", Role: RepoRoleWrite, CreatedAt: created}
	user := Grant{Kind: GrantKindUser, Name: "ada@example.com", Role: RepoRoleAdmin, CreatedAt: created}
	var pages []string
	e.mux.HandleFunc("/v1/repositories/web-charts/access", func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			// AllAccess walks two pages of one grant each.
			pages = append(pages, r.URL.Query().Get("page"))
			if r.URL.Query().Get("page") == "1" {
				writeData(t, w, []Grant{team}, &Meta{Total: 2, Page: 1, Limit: 1})
			} else {
				writeData(t, w, []Grant{user}, &Meta{Total: 2, Page: 2, Limit: 1})
			}
		case http.MethodPost:
			testJSONBody(t, r, `{"team":"web","role":"write"}`)
			writeData(t, w, team, nil)
		default:
			t.Errorf("method %s", r.Method)
		}
	})
	e.mux.HandleFunc("DELETE /v1/repositories/web-charts/access/{kind}/{name}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("kind") != "user" || r.PathValue("name") != "ada@example.com" {
			t.Errorf("revoke %s %s", r.PathValue("kind"), r.PathValue("name"))
		}
		w.WriteHeader(http.StatusNoContent)
	})
	perm := Permission{Role: RepoRoleWrite, Via: []PermissionVia{
		{Kind: ViaOrganization, Name: "acme", Role: RepoRoleRead},
		{Kind: ViaTeam, Name: "web", Role: RepoRoleWrite},
	}}
	e.mux.HandleFunc("GET /v1/repositories/web-charts/permissions", func(w http.ResponseWriter, r *http.Request) {
		testQuery(t, r, url.Values{"user": {"bob+ci@example.com"}})
		writeData(t, w, perm, nil)
	})

	grants, err := Collect(e.client.Repositories.AllAccess(ctx, "web-charts"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(grants, []*Grant{&team, &user}) || !reflect.DeepEqual(pages, []string{"1", "2"}) {
		t.Errorf("AllAccess = %+v over pages %q", grants, pages)
	}
	g, _, err := e.client.Repositories.Grant(ctx, "web-charts", &GrantRequest{Team: "web", Role: RepoRoleWrite})
	if err != nil || !reflect.DeepEqual(g, &team) {
		t.Errorf("Grant = %+v, %v", g, err)
	}
	if _, err := e.client.Repositories.Revoke(ctx, "web-charts", GrantKindUser, "ada@example.com"); err != nil {
		t.Errorf("Revoke: %v", err)
	}
	p, _, err := e.client.Repositories.Permissions(ctx, "web-charts", "bob+ci@example.com")
	if err != nil || !reflect.DeepEqual(p, &perm) {
		t.Errorf("Permissions = %+v, %v", p, err)
	}
}

// A refused grant comes back as the server's *Error, its message intact.
func TestRepositoriesGrantError(t *testing.T) {
	e := setup(t, WithMaxRetries(0))
	e.mux.HandleFunc("POST /v1/repositories/r/access", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusBadRequest, "invalid_parameter", "team other is not a team of organization acme")
	})
	_, _, err := e.client.Repositories.Grant(t.Context(), "r", &GrantRequest{Team: "other", Role: RepoRoleRead})
	var ce *Error
	if !errors.As(err, &ce) || ce.StatusCode != http.StatusBadRequest || ce.Message != "team other is not a team of organization acme" {
		t.Fatalf("err = %v", err)
	}
}

func TestRobotsService(t *testing.T) {
	ctx := t.Context()
	e := setup(t)
	exp := created.Add(90 * 24 * time.Hour)
	used := created.Add(time.Hour)
	robot := Robot{Name: "ci-push", Organization: "acme", UserName: "robot$acme+ci-push", Description: "CI",
		Repositories: []string{"acme-*"}, Permissions: []string{RobotPull, RobotPush}, ExpiresAt: &exp, LastUsedAt: &used,
		CreatedBy: "ada@example.com", CreatedAt: created}
	withSecret := robot
	withSecret.Secret = "chartctl_rb_secret"
	e.mux.HandleFunc("/v1/organizations/acme/robots", func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			testQuery(t, r, url.Values{"page": {"1"}, "limit": {"100"}})
			writeData(t, w, []Robot{robot}, &Meta{Total: 1, Page: 1, Limit: 100})
		case http.MethodPost:
			testJSONBody(t, r, `{"name":"ci-push","description":"CI","repositories":["acme-*"],"permissions":["pull","push"],"expires_at":"2027-02-19T22:33:45Z"}`)
			writeData(t, w, withSecret, nil)
		default:
			t.Errorf("method %s", r.Method)
		}
	})
	e.mux.HandleFunc("/v1/organizations/acme/robots/ci-push", func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			writeData(t, w, robot, nil)
		case http.MethodPatch:
			testJSONBody(t, r, `{"disabled":true}`)
			d := robot
			d.Disabled = true
			writeData(t, w, d, nil)
		case http.MethodDelete:
			w.WriteHeader(http.StatusNoContent)
		default:
			t.Errorf("method %s", r.Method)
		}
	})
	var bodies []string
	e.mux.HandleFunc("POST /v1/organizations/acme/robots/ci-push/rotate", func(w http.ResponseWriter, r *http.Request) {
		bodies = append(bodies, readBody(t, r))
		writeData(t, w, withSecret, nil)
	})

	list, err := Collect(e.client.Robots.All(ctx, "acme"))
	if err != nil || !reflect.DeepEqual(list, []*Robot{&robot}) {
		t.Errorf("All = %+v, %v", list, err)
	}
	got, _, err := e.client.Robots.Create(ctx, "acme", &CreateRobotRequest{Name: "ci-push", Description: "CI",
		Repositories: []string{"acme-*"}, Permissions: []string{RobotPull, RobotPush}, ExpiresAt: &exp})
	if err != nil || !reflect.DeepEqual(got, &withSecret) {
		t.Errorf("Create = %+v, %v", got, err)
	}
	got, _, err = e.client.Robots.Get(ctx, "acme", "ci-push")
	if err != nil || !reflect.DeepEqual(got, &robot) {
		t.Errorf("Get = %+v, %v", got, err)
	}
	disabled := true
	got, _, err = e.client.Robots.Update(ctx, "acme", "ci-push", &UpdateRobotRequest{Disabled: &disabled})
	if err != nil || !got.Disabled {
		t.Errorf("Update = %+v, %v", got, err)
	}
	got, _, err = e.client.Robots.Rotate(ctx, "acme", "ci-push", &RotateRobotRequest{Grace: "10m"})
	if err != nil || got.Secret != "chartctl_rb_secret" {
		t.Errorf("Rotate = %+v, %v", got, err)
	}
	if _, _, err := e.client.Robots.Rotate(ctx, "acme", "ci-push", nil); err != nil {
		t.Errorf("Rotate(nil): %v", err)
	}
	if !reflect.DeepEqual(bodies, []string{`{"grace":"10m"}`, `{}`}) {
		t.Errorf("rotate bodies = %q", bodies)
	}
	if _, err := e.client.Robots.Delete(ctx, "acme", "ci-push"); err != nil {
		t.Errorf("Delete: %v", err)
	}
}

func TestOrganizationsDelete(t *testing.T) {
	e := setup(t, WithMaxRetries(0))
	e.mux.HandleFunc("DELETE /v1/organizations/acme", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	})
	e.mux.HandleFunc("DELETE /v1/organizations/busy", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusConflict, "conflict", "organization busy owns 2 repositories: delete them first")
	})
	if _, err := e.client.Organizations.Delete(t.Context(), "acme"); err != nil {
		t.Fatal(err)
	}
	_, err := e.client.Organizations.Delete(t.Context(), "busy")
	var ce *Error
	if !errors.As(err, &ce) || ce.StatusCode != http.StatusConflict {
		t.Fatalf("err = %v, want the 409", err)
	}
}

func TestAPIKeysCreateWithRepositories(t *testing.T) {
	e := setup(t)
	e.mux.HandleFunc("POST /v1/user/api-keys", func(w http.ResponseWriter, r *http.Request) {
		testJSONBody(t, r, `{"name":"ci","scopes":["repo:read"],"repositories":["acme-*","web-charts"]}`)
		writeData(t, w, APIKey{ID: "key_1", Name: "ci", Scopes: []string{"repo:read"}, Repositories: []string{"acme-*", "web-charts"}, Key: "chartctl_x", CreatedAt: created}, nil)
	})
	key, _, err := e.client.APIKeys.Create(t.Context(), &CreateAPIKeyRequest{Name: "ci", Scopes: []string{"repo:read"}, Repositories: []string{"acme-*", "web-charts"}})
	if err != nil || !reflect.DeepEqual(key.Repositories, []string{"acme-*", "web-charts"}) {
		t.Fatalf("Create = %+v, %v", key, err)
	}
}

// The path segments of the access and robot methods are escaped, so a
// user's email or an odd name cannot reach another endpoint.
func TestAccessPathsEscaped(t *testing.T) {
	ctx := t.Context()
	e := setup(t)
	var paths []string
	e.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.Method+" "+r.URL.EscapedPath())
		writeData(t, w, map[string]any{}, nil)
	})
	_, _ = e.client.Repositories.Revoke(ctx, "a/b", GrantKindUser, "x/../y@example.com")
	_, _, _ = e.client.Robots.Get(ctx, "acme", "ci?x")
	_, _ = e.client.Organizations.Delete(ctx, "a b")
	_, _, _ = e.client.Robots.Rotate(ctx, "o/p", "n#1", nil)
	want := []string{
		"DELETE /v1/repositories/a%2Fb/access/user/x%2F..%2Fy@example.com",
		"GET /v1/organizations/acme/robots/ci%3Fx",
		"DELETE /v1/organizations/a%20b",
		"POST /v1/organizations/o%2Fp/robots/n%231/rotate",
	}
	if !reflect.DeepEqual(paths, want) {
		t.Errorf("paths = %q\nwant    %q", paths, want)
	}
}

// readBody returns the request's body as text.
func readBody(tb testing.TB, r *http.Request) string {
	tb.Helper()
	data, err := io.ReadAll(r.Body)
	if err != nil {
		tb.Fatalf("read body: %v", err)
	}
	return string(data)
}
