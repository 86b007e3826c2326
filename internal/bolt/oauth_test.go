package bolt_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/bolt"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/token"
)

func mustCode(tb testing.TB, db *bolt.DB, grant string) (string, *chartctl.AuthorizationCode) {
	tb.Helper()
	v, h := token.New("code_")
	c := &chartctl.AuthorizationCode{
		Hash: h, ClientID: "app", UserID: "usr_1", RedirectURI: "https://app.example/cb",
		Scopes: chartctl.Scopes{chartctl.ScopeRepoRead}, CodeChallenge: "challenge", GrantID: grant,
		ExpiresAt: testTime.Add(time.Minute),
	}
	if err := db.CreateAuthorizationCode(context.Background(), c); err != nil {
		tb.Fatalf("CreateAuthorizationCode: %v", err)
	}
	return v, c
}

func newToken(kind chartctl.OAuthTokenKind, grant, parent string) (string, *chartctl.OAuthToken) {
	prefix := token.AccessTokenPrefix
	if kind == chartctl.RefreshToken {
		prefix = token.RefreshTokenPrefix
	}
	v, h := token.New(prefix)
	return v, &chartctl.OAuthToken{
		Hash: h, Kind: kind, GrantID: grant, ParentID: parent, ClientID: "app", UserID: "usr_1",
		Scopes: chartctl.Scopes{chartctl.ScopeRepoRead}, ExpiresAt: testTime.Add(time.Hour),
	}
}

func TestOAuthClientRoundTrip(t *testing.T) {
	db, _ := setup(t)
	ctx := context.Background()
	c := &chartctl.OAuthClient{ID: "app", Name: "App", RedirectURIs: []string{"https://app.example/cb"}, SecretHash: token.Hash("s")}
	if err := db.CreateOAuthClient(ctx, c); err != nil {
		t.Fatal(err)
	}
	wantCode(t, db.CreateOAuthClient(ctx, c), chartctl.ECONFLICT)
	wantCode(t, db.CreateOAuthClient(ctx, &chartctl.OAuthClient{}), chartctl.EINVALID)
	got, err := db.OAuthClient(ctx, "app")
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "App" || len(got.RedirectURIs) != 1 || string(got.SecretHash) != string(token.Hash("s")) || !got.CreatedAt.Equal(testTime) {
		t.Errorf("got %+v", got)
	}
	_, err = db.OAuthClient(ctx, "other")
	wantCode(t, err, chartctl.ENOTFOUND)
}

func TestRedeemCodeOnce(t *testing.T) {
	db, _ := setup(t)
	ctx := context.Background()
	v, _ := mustCode(t, db, "grant_1")
	at, atRec := newToken(chartctl.AccessToken, "grant_1", "")
	issue := func(c *chartctl.AuthorizationCode) ([]*chartctl.OAuthToken, error) {
		if c.ClientID != "app" || c.CodeChallenge != "challenge" || c.RedeemedAt != nil {
			t.Errorf("check saw %+v", c)
		}
		return []*chartctl.OAuthToken{atRec}, nil
	}
	if err := db.RedeemAuthorizationCode(ctx, token.Hash(v), testTime, issue); err != nil {
		t.Fatal(err)
	}
	tok, err := db.OAuthToken(ctx, token.Hash(at))
	if err != nil {
		t.Fatal(err)
	}
	if tok.Revoked || tok.ID == "" || tok.Kind != chartctl.AccessToken {
		t.Fatalf("token %+v", tok)
	}
	// A second redemption fails and revokes what the first issued.
	err = db.RedeemAuthorizationCode(ctx, token.Hash(v), testTime, func(*chartctl.AuthorizationCode) ([]*chartctl.OAuthToken, error) {
		t.Error("check called for a redeemed code")
		return nil, nil
	})
	wantCode(t, err, chartctl.ECONFLICT)
	tok, err = db.OAuthToken(ctx, token.Hash(at))
	if err != nil {
		t.Fatal(err)
	}
	if !tok.Revoked {
		t.Error("token of a reused code not revoked")
	}
}

func TestRedeemCodeRejected(t *testing.T) {
	db, _ := setup(t)
	ctx := context.Background()
	v, _ := mustCode(t, db, "grant_1")
	refuse := errors.New("wrong verifier")
	err := db.RedeemAuthorizationCode(ctx, token.Hash(v), testTime, func(*chartctl.AuthorizationCode) ([]*chartctl.OAuthToken, error) {
		return nil, refuse
	})
	if !errors.Is(err, refuse) {
		t.Fatalf("err = %v, want the check's error", err)
	}
	// A refused exchange (a wrong PKCE verifier) uses the code up: it is
	// single-use (RFC 6749 §4.1.2), so a second try is a reuse.
	wantCode(t, db.RedeemAuthorizationCode(ctx, token.Hash(v), testTime, func(*chartctl.AuthorizationCode) ([]*chartctl.OAuthToken, error) {
		t.Error("check called for a used code")
		return nil, nil
	}), chartctl.ECONFLICT)
	// Expired and unknown codes are ENOTFOUND.
	v2, _ := mustCode(t, db, "grant_2")
	wantCode(t, db.RedeemAuthorizationCode(ctx, token.Hash(v2), testTime.Add(time.Minute), nil), chartctl.ENOTFOUND)
	wantCode(t, db.RedeemAuthorizationCode(ctx, token.Hash("nope"), testTime, nil), chartctl.ENOTFOUND)
}

func TestRedeemCodeConcurrently(t *testing.T) {
	db, _ := setup(t)
	ctx := context.Background()
	v, _ := mustCode(t, db, "grant_1")
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, rec := newToken(chartctl.AccessToken, "grant_1", "")
			errs[i] = db.RedeemAuthorizationCode(ctx, token.Hash(v), testTime, func(*chartctl.AuthorizationCode) ([]*chartctl.OAuthToken, error) {
				return []*chartctl.OAuthToken{rec}, nil
			})
		}()
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
		} else if chartctl.ErrorCode(err) != chartctl.ECONFLICT {
			t.Errorf("unexpected error %v", err)
		}
	}
	if ok != 1 {
		t.Fatalf("%d redemptions succeeded, want exactly 1", ok)
	}
}

func TestRotateRefreshToken(t *testing.T) {
	db, _ := setup(t)
	ctx := context.Background()
	v, _ := mustCode(t, db, "grant_1")
	rt1, rt1Rec := newToken(chartctl.RefreshToken, "grant_1", "")
	at1, at1Rec := newToken(chartctl.AccessToken, "grant_1", "")
	if err := db.RedeemAuthorizationCode(ctx, token.Hash(v), testTime, func(*chartctl.AuthorizationCode) ([]*chartctl.OAuthToken, error) {
		return []*chartctl.OAuthToken{at1Rec, rt1Rec}, nil
	}); err != nil {
		t.Fatal(err)
	}
	rt2, rt2Rec := newToken(chartctl.RefreshToken, "grant_1", rt1Rec.ID)
	at2, at2Rec := newToken(chartctl.AccessToken, "grant_1", rt1Rec.ID)
	if err := db.RotateRefreshToken(ctx, token.Hash(rt1), testTime, func(old *chartctl.OAuthToken) ([]*chartctl.OAuthToken, error) {
		if old.ID != rt1Rec.ID {
			t.Errorf("rotating %s, want %s", old.ID, rt1Rec.ID)
		}
		return []*chartctl.OAuthToken{at2Rec, rt2Rec}, nil
	}); err != nil {
		t.Fatal(err)
	}
	// An access token cannot be used as a refresh token.
	wantCode(t, db.RotateRefreshToken(ctx, token.Hash(at2), testTime, nil), chartctl.ENOTFOUND)
	// Reusing rt1 revokes the family.
	wantCode(t, db.RotateRefreshToken(ctx, token.Hash(rt1), testTime, nil), chartctl.ECONFLICT)
	for _, v := range []string{at1, at2, rt2} {
		tok, err := db.OAuthToken(ctx, token.Hash(v))
		if err != nil {
			t.Fatal(err)
		}
		if !tok.Revoked {
			t.Errorf("%s token not revoked after reuse", tok.Kind)
		}
	}
	wantCode(t, db.RotateRefreshToken(ctx, token.Hash(rt2), testTime, nil), chartctl.ENOTFOUND)
}

func TestRevokeOAuthToken(t *testing.T) {
	db, _ := setup(t)
	ctx := context.Background()
	v, _ := mustCode(t, db, "grant_1")
	rt, rtRec := newToken(chartctl.RefreshToken, "grant_1", "")
	at, atRec := newToken(chartctl.AccessToken, "grant_1", "")
	if err := db.RedeemAuthorizationCode(ctx, token.Hash(v), testTime, func(*chartctl.AuthorizationCode) ([]*chartctl.OAuthToken, error) {
		return []*chartctl.OAuthToken{atRec, rtRec}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.RevokeOAuthToken(ctx, token.Hash(rt)); err != nil {
		t.Fatal(err)
	}
	tok, err := db.OAuthToken(ctx, token.Hash(at))
	if err != nil {
		t.Fatal(err)
	}
	if !tok.Revoked {
		t.Error("revoking the refresh token left its access token valid")
	}
	wantCode(t, db.RevokeOAuthToken(ctx, token.Hash("nope")), chartctl.ENOTFOUND)
}

func TestWebSessions(t *testing.T) {
	db, _ := setup(t)
	ctx := context.Background()
	s := &chartctl.WebSession{Hash: token.Hash("sess"), UserID: "usr_1", CSRFToken: "csrf", ExpiresAt: testTime.Add(time.Hour)}
	if err := db.CreateWebSession(ctx, s); err != nil {
		t.Fatal(err)
	}
	got, err := db.WebSession(ctx, token.Hash("sess"), testTime)
	if err != nil {
		t.Fatal(err)
	}
	if got.UserID != "usr_1" || got.CSRFToken != "csrf" {
		t.Errorf("got %+v", got)
	}
	_, err = db.WebSession(ctx, token.Hash("sess"), testTime.Add(time.Hour))
	wantCode(t, err, chartctl.ENOTFOUND)
	if err := db.DeleteWebSession(ctx, token.Hash("sess")); err != nil {
		t.Fatal(err)
	}
	_, err = db.WebSession(ctx, token.Hash("sess"), testTime)
	wantCode(t, err, chartctl.ENOTFOUND)
}

func TestDeleteExpiredOAuth(t *testing.T) {
	db, _ := setup(t)
	ctx := context.Background()
	mustCode(t, db, "grant_1")
	if err := db.CreateWebSession(ctx, &chartctl.WebSession{Hash: token.Hash("s"), ExpiresAt: testTime.Add(2 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	n, err := db.DeleteExpiredOAuth(ctx, testTime.Add(90*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("removed %d records, want 1 (the code)", n)
	}
	if _, err := db.WebSession(ctx, token.Hash("s"), testTime); err != nil {
		t.Errorf("live session removed: %v", err)
	}
}
