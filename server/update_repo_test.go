package server_test

import (
	"net/http"
	"testing"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/testkit"
)

func TestUpdateRepository(t *testing.T) {
	s := testkit.StartServer(t)
	owner := s.MustUser(t, "owner@example.com", false)
	ownerKey := s.MustKey(t, owner, chartctl.ScopeRepoWrite)
	readKey := s.MustKey(t, owner, chartctl.ScopeRepoRead)
	other := s.MustKey(t, s.MustUser(t, "other@example.com", false), chartctl.AllScopes...)
	if r := s.DoJSON(t, http.MethodPost, "/v1/repositories", ownerKey, map[string]string{"name": "mine"}); r.StatusCode != 200 {
		t.Fatalf("create: %d %s", r.StatusCode, r.Body)
	}

	r := s.DoJSON(t, http.MethodPatch, "/v1/repositories/mine", ownerKey, map[string]string{"description": "  Our charts ", "visibility": "public"})
	var got struct {
		Data struct{ Description, Visibility string }
	}
	r.JSON(t, &got)
	if r.StatusCode != 200 || got.Data.Description != "Our charts" || got.Data.Visibility != "public" {
		t.Fatalf("PATCH: %d %s", r.StatusCode, r.Body)
	}
	// The change applies at once, even to a repository just read.
	if r := s.Do(t, http.MethodGet, "/v1/repositories/mine", other, nil); r.StatusCode != 200 {
		t.Fatalf("another user reads the now public repository: %d", r.StatusCode)
	}
	// Fields left out stay as they are.
	s.DoJSON(t, http.MethodPatch, "/v1/repositories/mine", ownerKey, map[string]string{"visibility": "private"}).JSON(t, &got)
	if got.Data.Description != "Our charts" || got.Data.Visibility != "private" {
		t.Fatalf("partial PATCH: %+v", got.Data)
	}
	for _, tc := range []struct {
		name, tok string
		body      any
		status    int
	}{
		{"bad visibility", ownerKey, map[string]string{"visibility": "secret"}, 400},
		{"unknown field", ownerKey, map[string]string{"name": "x"}, 400},
		{"read-only key", readKey, map[string]string{"description": "x"}, 403},
		{"another user", other, map[string]string{"description": "x"}, 404},
		{"no credential", "", map[string]string{"description": "x"}, 401},
	} {
		if r := s.DoJSON(t, http.MethodPatch, "/v1/repositories/mine", tc.tok, tc.body); r.StatusCode != tc.status {
			t.Errorf("%s: %d %s, want %d", tc.name, r.StatusCode, r.Body, tc.status)
		}
	}
}
