package client

import (
	"net/http"
	"testing"
)

func TestUsersServiceOffboarding(t *testing.T) {
	ctx := t.Context()
	e := setup(t)
	e.mux.HandleFunc("GET /v1/users", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("page") != "1" {
			t.Errorf("query %q", r.URL.RawQuery)
		}
		writeData(t, w, []Account{{ID: "usr_1", Email: "ada@example.com", Disabled: true, CreatedAt: created}}, &Meta{Total: 1, Page: 1, Limit: 100})
	})
	e.mux.HandleFunc("PATCH /v1/users/ada@example.com", func(w http.ResponseWriter, r *http.Request) {
		testJSONBody(t, r, `{"disabled":true}`)
		writeData(t, w, Account{ID: "usr_1", Email: "ada@example.com", Disabled: true, CreatedAt: created}, nil)
	})
	e.mux.HandleFunc("DELETE /v1/users/ada@example.com", func(w http.ResponseWriter, r *http.Request) {
		writeData(t, w, map[string]any{"email": "ada@example.com", "deleted": true}, nil)
	})
	e.mux.HandleFunc("GET /v1/users/ada@example.com/api-keys", func(w http.ResponseWriter, r *http.Request) {
		writeData(t, w, []APIKey{{ID: "key_1", Name: "ci", Scopes: []string{"repo:read"}, CreatedAt: created}}, &Meta{Total: 1, Page: 1, Limit: 20})
	})
	e.mux.HandleFunc("DELETE /v1/users/ada@example.com/api-keys/key_1", func(w http.ResponseWriter, r *http.Request) {
		writeData(t, w, map[string]any{"id": "key_1", "revoked": true}, nil)
	})

	users, err := Collect(e.client.Users.All(ctx))
	if err != nil || len(users) != 1 || !users[0].Disabled {
		t.Errorf("All = %+v, %v", users, err)
	}
	yes := true
	a, _, err := e.client.Users.Update(ctx, "ada@example.com", &UpdateUserRequest{Disabled: &yes})
	if err != nil || !a.Disabled {
		t.Errorf("Update = %+v, %v", a, err)
	}
	keys, _, err := e.client.Users.ListAPIKeys(ctx, "ada@example.com", nil)
	if err != nil || len(keys) != 1 || keys[0].ID != "key_1" {
		t.Errorf("ListAPIKeys = %+v, %v", keys, err)
	}
	if _, err := e.client.Users.RevokeAPIKey(ctx, "ada@example.com", "key_1"); err != nil {
		t.Errorf("RevokeAPIKey: %v", err)
	}
	if _, err := e.client.Users.Delete(ctx, "ada@example.com"); err != nil {
		t.Errorf("Delete: %v", err)
	}
}
