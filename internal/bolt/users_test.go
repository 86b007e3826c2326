package bolt_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
)

func TestUsers(t *testing.T) {
	ctx := context.Background()
	db, _ := setup(t)

	if n, err := db.UserCount(ctx); err != nil || n != 0 {
		t.Fatalf("UserCount on empty store = %d, %v", n, err)
	}
	u := &chartctl.User{Email: "Alice@Example.com", PasswordHash: "$argon2id$x", Admin: true}
	if err := db.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	if u.ID == "" || !u.CreatedAt.Equal(testTime) {
		t.Fatalf("ID/CreatedAt not filled: %+v", u)
	}

	got, err := db.User(ctx, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, u) {
		t.Fatalf("User = %+v, want %+v", got, u)
	}
	for _, e := range []string{"alice@example.com", "ALICE@EXAMPLE.COM", "Alice@Example.com"} {
		got, err := db.UserByEmail(ctx, e)
		if err != nil || got.ID != u.ID {
			t.Fatalf("UserByEmail(%s) = %+v, %v", e, got, err)
		}
	}

	// The email is unique, whatever its case.
	err = db.CreateUser(ctx, &chartctl.User{Email: "ALICE@example.com"})
	wantCode(t, err, chartctl.ECONFLICT)
	wantMessage(t, err, `A user with email "ALICE@example.com" already exists.`)

	err = db.CreateUser(ctx, &chartctl.User{Email: "  "})
	wantCode(t, err, chartctl.EINVALID)

	// A caller-chosen ID and time are kept.
	at := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	svc := &chartctl.User{ID: "usr_fixed", Email: "ci@example.com", CreatedAt: at}
	if err := db.CreateUser(ctx, svc); err != nil {
		t.Fatal(err)
	}
	if got, err := db.User(ctx, "usr_fixed"); err != nil || !got.CreatedAt.Equal(at) || got.PasswordHash != "" {
		t.Fatalf("User(usr_fixed) = %+v, %v", got, err)
	}
	err = db.CreateUser(ctx, &chartctl.User{ID: "usr_fixed", Email: "other@example.com"})
	wantCode(t, err, chartctl.ECONFLICT)

	if n, err := db.UserCount(ctx); err != nil || n != 2 {
		t.Fatalf("UserCount = %d, %v", n, err)
	}

	_, err = db.User(ctx, "usr_missing")
	wantCode(t, err, chartctl.ENOTFOUND)
	wantMessage(t, err, "User not found.")
	_, err = db.User(ctx, "")
	wantCode(t, err, chartctl.ENOTFOUND)
	_, err = db.UserByEmail(ctx, "nobody@example.com")
	wantCode(t, err, chartctl.ENOTFOUND)
}

func TestAPIKeys(t *testing.T) {
	ctx := context.Background()
	db, _ := setup(t)
	alice := mustUser(t, db, "alice@example.com")
	bob := mustUser(t, db, "bob@example.com")

	exp := testTime.Add(24 * time.Hour)
	var keys []*chartctl.APIKey
	for i := range 3 {
		// Keys created later sort later, whatever their IDs.
		db.Now = func() time.Time { return testTime.Add(time.Duration(3-i) * time.Minute) }
		k := &chartctl.APIKey{
			ID:     fmt.Sprintf("key_%d", i),
			UserID: alice.ID, Name: fmt.Sprintf("k%d", i),
			Scopes: chartctl.Scopes{chartctl.ScopeRepoRead, chartctl.ScopeTeamWrite},
			Hash:   []byte(fmt.Sprintf("hash-%d", i)), ExpiresAt: &exp,
		}
		if err := db.CreateAPIKey(ctx, k); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	db.Now = func() time.Time { return testTime }
	bobKey := &chartctl.APIKey{UserID: bob.ID, Name: "bob", Hash: []byte("bob-hash")}
	if err := db.CreateAPIKey(ctx, bobKey); err != nil {
		t.Fatal(err)
	}

	got, err := db.APIKeyByHash(ctx, []byte("hash-1"))
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != keys[1].ID || got.UserID != alice.ID || got.Name != "k1" ||
		got.Scopes.String() != "repo:read team:write" || string(got.Hash) != "hash-1" ||
		got.ExpiresAt == nil || !got.ExpiresAt.Equal(exp) || got.LastUsedAt != nil {
		t.Fatalf("APIKeyByHash = %+v", got)
	}
	_, err = db.APIKeyByHash(ctx, []byte("nope"))
	wantCode(t, err, chartctl.ENOTFOUND)
	wantMessage(t, err, "API key not found.")
	_, err = db.APIKeyByHash(ctx, nil)
	wantCode(t, err, chartctl.ENOTFOUND)

	list, err := db.APIKeys(ctx, alice.ID)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, k := range list {
		names = append(names, k.Name)
	}
	if fmt.Sprint(names) != "[k2 k1 k0]" {
		t.Fatalf("APIKeys order = %v, want oldest first [k2 k1 k0]", names)
	}
	if list, err := db.APIKeys(ctx, "usr_nobody"); err != nil || len(list) != 0 {
		t.Fatalf("APIKeys(unknown) = %v, %v", list, err)
	}

	// Errors of CreateAPIKey.
	err = db.CreateAPIKey(ctx, &chartctl.APIKey{UserID: "usr_missing", Hash: []byte("x")})
	wantCode(t, err, chartctl.ENOTFOUND)
	err = db.CreateAPIKey(ctx, &chartctl.APIKey{UserID: alice.ID, Hash: []byte("hash-0")})
	wantCode(t, err, chartctl.ECONFLICT)
	err = db.CreateAPIKey(ctx, &chartctl.APIKey{UserID: alice.ID})
	wantCode(t, err, chartctl.EINVALID)

	// Touch: unknown keys are skipped, times never move back.
	t1 := testTime.Add(time.Hour)
	if err := db.TouchAPIKeys(ctx, map[string]time.Time{keys[0].ID: t1, bobKey.ID: t1, "key_gone": t1}); err != nil {
		t.Fatal(err)
	}
	if err := db.TouchAPIKeys(ctx, map[string]time.Time{keys[0].ID: testTime}); err != nil {
		t.Fatal(err)
	}
	if err := db.TouchAPIKeys(ctx, nil); err != nil {
		t.Fatal(err)
	}
	got, err = db.APIKeyByHash(ctx, []byte("hash-0"))
	if err != nil || got.LastUsedAt == nil || !got.LastUsedAt.Equal(t1) {
		t.Fatalf("LastUsedAt after touch = %+v, %v", got, err)
	}
	got, _ = db.APIKeyByHash(ctx, []byte("hash-2"))
	if got.LastUsedAt != nil {
		t.Fatalf("untouched key has LastUsedAt %v", got.LastUsedAt)
	}

	// Delete: only the owner's key; gone from every index.
	err = db.DeleteAPIKey(ctx, bob.ID, keys[0].ID)
	wantCode(t, err, chartctl.ENOTFOUND)
	if err := db.DeleteAPIKey(ctx, alice.ID, keys[0].ID); err != nil {
		t.Fatal(err)
	}
	err = db.DeleteAPIKey(ctx, alice.ID, keys[0].ID)
	wantCode(t, err, chartctl.ENOTFOUND)
	_, err = db.APIKeyByHash(ctx, []byte("hash-0"))
	wantCode(t, err, chartctl.ENOTFOUND)
	if list, _ := db.APIKeys(ctx, alice.ID); len(list) != 2 {
		t.Fatalf("APIKeys after delete = %d keys", len(list))
	}
	// Touching a deleted key does not bring it back.
	if err := db.TouchAPIKeys(ctx, map[string]time.Time{keys[0].ID: t1}); err != nil {
		t.Fatal(err)
	}
	if list, _ := db.APIKeys(ctx, alice.ID); len(list) != 2 {
		t.Fatalf("APIKeys after touching deleted key = %d keys", len(list))
	}
	// The hash is free again.
	if err := db.CreateAPIKey(ctx, &chartctl.APIKey{UserID: alice.ID, Hash: []byte("hash-0")}); err != nil {
		t.Fatalf("reusing a deleted key's hash: %v", err)
	}
}
