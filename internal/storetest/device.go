package storetest

import (
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
)

func device(dc, uc string, exp time.Time) *chartctl.DeviceAuthorization {
	return &chartctl.DeviceAuthorization{
		DeviceCodeHash: []byte(dc), UserCodeHash: []byte(uc), ClientID: "cli_1",
		Scopes: chartctl.Scopes{chartctl.ScopeRepoRead}, Interval: 5 * time.Second, CreatedAt: base, ExpiresAt: exp,
	}
}

// testDeviceAuthorizations covers the RFC 8628 requests: lookup by user
// code, one answer, polls that keep their time and interval, single use.
func testDeviceAuthorizations(t *testing.T, open Open) {
	s := open(t)
	now := base
	exp := now.Add(10 * time.Minute)
	wantCode(t, s.CreateDeviceAuthorization(ctx, device("", "U1", exp)), chartctl.EINVALID)
	wantCode(t, s.CreateDeviceAuthorization(ctx, device("d1", "", exp)), chartctl.EINVALID)
	must(t, s.CreateDeviceAuthorization(ctx, device("d1", "U1", exp)))
	wantCode(t, s.CreateDeviceAuthorization(ctx, device("d1", "U9", exp)), chartctl.ECONFLICT)
	wantCode(t, s.CreateDeviceAuthorization(ctx, device("d9", "U1", exp)), chartctl.ECONFLICT)

	got, err := s.DeviceAuthorizationByUserCode(ctx, []byte("U1"), now)
	must(t, err)
	if string(got.DeviceCodeHash) != "d1" || got.ClientID != "cli_1" || got.Scopes.String() != "repo:read" ||
		got.Interval != 5*time.Second || got.Status != chartctl.DevicePending || got.LastPolledAt != nil || got.RedeemedAt != nil {
		t.Fatalf("DeviceAuthorizationByUserCode = %+v", got)
	}
	wantTime(t, "device ExpiresAt", got.ExpiresAt, exp)
	_, err = s.DeviceAuthorizationByUserCode(ctx, []byte("U1"), exp)
	wantCode(t, err, chartctl.ENOTFOUND)
	_, err = s.DeviceAuthorizationByUserCode(ctx, []byte("nope"), now)
	wantCode(t, err, chartctl.ENOTFOUND)

	// A poll before any answer: its time and the raised interval stay,
	// and the poll's error comes back unchanged.
	pending := chartctl.Errorf(chartctl.EINVALID, "authorization_pending")
	err = s.PollDeviceAuthorization(ctx, []byte("d1"), now, func(d *chartctl.DeviceAuthorization) ([]*chartctl.OAuthToken, error) {
		if d.LastPolledAt != nil || d.Status != chartctl.DevicePending {
			t.Fatalf("first poll saw %+v", d)
		}
		d.Interval += 5 * time.Second
		return nil, pending
	})
	if err != pending {
		t.Fatalf("poll error came back as %v", err)
	}
	later := now.Add(time.Minute)
	err = s.PollDeviceAuthorization(ctx, []byte("d1"), later, func(d *chartctl.DeviceAuthorization) ([]*chartctl.OAuthToken, error) {
		if d.LastPolledAt == nil || d.Interval != 10*time.Second {
			t.Fatalf("second poll saw %+v", d)
		}
		wantTime(t, "LastPolledAt", *d.LastPolledAt, now)
		return nil, pending
	})
	if err != pending {
		t.Fatalf("poll error came back as %v", err)
	}
	wantCode(t, s.PollDeviceAuthorization(ctx, []byte("nope"), now, nil), chartctl.ENOTFOUND)

	// One answer only; a refusing decide stores nothing.
	refused := chartctl.Errorf(chartctl.EFORBIDDEN, "no")
	if err := s.DecideDeviceAuthorization(ctx, []byte("U1"), now, func(d *chartctl.DeviceAuthorization) error {
		d.Status = chartctl.DeviceDenied
		return refused
	}); err != refused {
		t.Fatalf("decide error came back as %v", err)
	}
	must(t, s.DecideDeviceAuthorization(ctx, []byte("U1"), now, func(d *chartctl.DeviceAuthorization) error {
		d.Status, d.UserID, d.GrantID = chartctl.DeviceApproved, "usr_1", "gd1"
		return nil
	}))
	wantCode(t, s.DecideDeviceAuthorization(ctx, []byte("U1"), now, func(d *chartctl.DeviceAuthorization) error {
		d.Status = chartctl.DeviceDenied
		return nil
	}), chartctl.ECONFLICT)
	wantCode(t, s.DecideDeviceAuthorization(ctx, []byte("U1"), exp, nil), chartctl.ENOTFOUND)

	issued := tokens("td1", "gd1", "", now.Add(time.Hour))
	must(t, s.PollDeviceAuthorization(ctx, []byte("d1"), later, func(d *chartctl.DeviceAuthorization) ([]*chartctl.OAuthToken, error) {
		if d.Status != chartctl.DeviceApproved || d.UserID != "usr_1" || d.GrantID != "gd1" {
			t.Fatalf("poll after approval saw %+v", d)
		}
		return issued, nil
	}))
	for _, tok := range issued {
		if got := mustToken(t, s, string(tok.Hash)); got.GrantID != "gd1" || got.Revoked {
			t.Fatalf("token after poll: %+v", got)
		}
	}
	// Single use.
	wantCode(t, s.PollDeviceAuthorization(ctx, []byte("d1"), later, nil), chartctl.ECONFLICT)

	// Expired requests are handed to poll (so it can say expired_token),
	// then removed by DeleteExpiredOAuth, and their user code is free.
	must(t, s.CreateDeviceAuthorization(ctx, device("d2", "U2", now.Add(time.Minute))))
	var sawExpired bool
	_ = s.PollDeviceAuthorization(ctx, []byte("d2"), now.Add(2*time.Minute), func(d *chartctl.DeviceAuthorization) ([]*chartctl.OAuthToken, error) {
		sawExpired = d.Expired(now.Add(2 * time.Minute))
		return nil, pending
	})
	if !sawExpired {
		t.Fatal("poll of an expired request did not see it expired")
	}
	taken := device("d3", "U2", now.Add(10*time.Minute))
	taken.CreatedAt = now.Add(2 * time.Minute)
	must(t, s.CreateDeviceAuthorization(ctx, taken))
	if _, err := s.DeleteExpiredOAuth(ctx, now.Add(20*time.Minute)); err != nil {
		t.Fatal(err)
	}
	wantCode(t, s.PollDeviceAuthorization(ctx, []byte("d2"), now, nil), chartctl.ENOTFOUND)
	wantCode(t, s.PollDeviceAuthorization(ctx, []byte("d3"), now, nil), chartctl.ENOTFOUND)
}
