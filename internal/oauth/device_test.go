package oauth_test

import (
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/oauth"
	"github.com/chartctl/chartctl/internal/oauth/oauthtest"
)

var userCodeRE = regexp.MustCompile(`^[BCDFGHJKMNPQRSTVWXZ]{4}-[BCDFGHJKMNPQRSTVWXZ]{4}$`)

// startDevice asks for a device code as the CLI does.
func startDevice(t *testing.T, env *oauthtest.Env, scope string) tokenResult {
	t.Helper()
	r := postForm(t, env, "/oauth/device_authorization", url.Values{"client_id": {oauth.BuiltinClientID}, "scope": {scope}}, "", "")
	if r.status != http.StatusOK {
		t.Fatalf("device_authorization: %d %v", r.status, r.body)
	}
	return r
}

func pollDevice(t *testing.T, env *oauthtest.Env, deviceCode string) tokenResult {
	t.Helper()
	return postForm(t, env, "/oauth/token", url.Values{
		"grant_type": {oauth.DeviceGrantType}, "client_id": {oauth.BuiltinClientID}, "device_code": {deviceCode},
	}, "", "")
}

func wantDeviceError(t *testing.T, r tokenResult, code string) {
	t.Helper()
	if r.status != http.StatusBadRequest || r.str("error") != code {
		t.Fatalf("got %d %v, want 400 %s", r.status, r.body, code)
	}
	if r.str("error_description") == "" {
		t.Fatalf("%s without a description", code)
	}
}

// The whole device flow over HTTP: the codes, pending and slow_down while
// nobody answered, the sign-in detour of verification_uri_complete, the
// consent page, the tokens, and the device code refused a second time.
func TestDeviceFlow(t *testing.T) {
	env, _ := setup(t)
	var md struct {
		Endpoint   string   `json:"device_authorization_endpoint"`
		GrantTypes []string `json:"grant_types_supported"`
	}
	env.Do(t, http.MethodGet, "/.well-known/oauth-authorization-server", "", nil).JSON(t, &md)
	if md.Endpoint != env.URL+"/oauth/device_authorization" || !slices.Contains(md.GrantTypes, oauth.DeviceGrantType) {
		t.Errorf("metadata: %+v", md)
	}

	start := startDevice(t, env, "repo:read repo:write")
	if start.header.Get("Cache-Control") != "no-store" {
		t.Errorf("Cache-Control = %q", start.header.Get("Cache-Control"))
	}
	dc, uc := start.str("device_code"), start.str("user_code")
	if !strings.HasPrefix(dc, "chartctl_dc_") || !userCodeRE.MatchString(uc) {
		t.Fatalf("codes: %q %q", dc, uc)
	}
	if start.str("verification_uri") != env.URL+"/device" ||
		start.str("verification_uri_complete") != env.URL+"/device?user_code="+uc ||
		start.body["expires_in"] != float64(600) || start.body["interval"] != float64(5) {
		t.Fatalf("device_authorization answer: %v", start.body)
	}

	wantDeviceError(t, pollDevice(t, env, dc), "authorization_pending")
	// Again at once: too fast. The interval grows by 5 s and stays grown.
	wantDeviceError(t, pollDevice(t, env, dc), "slow_down")
	env.Clock.Advance(6 * time.Second)
	wantDeviceError(t, pollDevice(t, env, dc), "slow_down")
	env.Clock.Advance(16 * time.Second)
	wantDeviceError(t, pollDevice(t, env, dc), "authorization_pending")

	// An anonymous browser following verification_uri_complete signs in
	// first, and comes back to the code.
	b := env.NewBrowser(t)
	r := b.Get(t, start.str("verification_uri_complete"))
	loc, _ := url.Parse(r.Header.Get("Location"))
	if r.StatusCode != http.StatusFound || loc.Path != "/signin" || loc.Query().Get("return_to") != "/device?user_code="+uc {
		t.Fatalf("anonymous device page: %d %q", r.StatusCode, r.Header.Get("Location"))
	}
	b.SignIn(t, userEmail, userPassword)
	if p := b.Get(t, "/device"); p.StatusCode != http.StatusOK || !strings.Contains(p.Body, `id="device-form"`) {
		t.Fatalf("device form: %d %s", p.StatusCode, p.Body)
	}
	// The code may be typed in lower case and without the dash.
	consent := b.Get(t, "/device?user_code="+strings.ToLower(strings.ReplaceAll(uc, "-", "")))
	if consent.StatusCode != http.StatusOK || !strings.Contains(consent.Body, "chartctl CLI") ||
		!strings.Contains(consent.Body, `<code>repo:write</code>`) || !strings.Contains(consent.Body, `id="device-code">`+uc+`<`) {
		t.Fatalf("device consent: %d %s", consent.StatusCode, consent.Body)
	}
	done := b.AnswerDevice(t, uc, "approve")
	if done.StatusCode != http.StatusOK || !strings.Contains(done.Body, "Device connected") {
		t.Fatalf("approve: %d %s", done.StatusCode, done.Body)
	}

	env.Clock.Advance(20 * time.Second)
	tok := pollDevice(t, env, dc)
	if tok.status != http.StatusOK || tok.str("token_type") != "Bearer" || tok.str("refresh_token") == "" || tok.str("scope") != "repo:read repo:write" {
		t.Fatalf("poll after approval: %d %v", tok.status, tok.body)
	}
	if tok.header.Get("Cache-Control") != "no-store" {
		t.Errorf("token Cache-Control = %q", tok.header.Get("Cache-Control"))
	}
	me := env.Do(t, http.MethodGet, "/v1/user", tok.str("access_token"), nil)
	if me.StatusCode != http.StatusOK || !strings.Contains(string(me.Body), userEmail) {
		t.Fatalf("GET /v1/user with the device's token: %d %s", me.StatusCode, me.Body)
	}
	// The refresh token works like the browser login's.
	if rr := refresh(t, env, oauth.BuiltinClientID, tok.str("refresh_token"), ""); rr.status != http.StatusOK {
		t.Fatalf("refresh: %d %v", rr.status, rr.body)
	}

	// Single use: the device code, and the user code on the page.
	env.Clock.Advance(20 * time.Second)
	wantDeviceError(t, pollDevice(t, env, dc), "invalid_grant")
	if p := b.Get(t, "/device?user_code="+uc); p.StatusCode != http.StatusConflict || !strings.Contains(p.Body, "already used") {
		t.Fatalf("used code on the page: %d %s", p.StatusCode, p.Body)
	}
}

func TestDeviceDenied(t *testing.T) {
	env, _ := setup(t)
	start := startDevice(t, env, "repo:read")
	b := signedIn(t, env)
	done := b.AnswerDevice(t, start.str("user_code"), "deny")
	if done.StatusCode != http.StatusOK || !strings.Contains(done.Body, "Request denied") {
		t.Fatalf("deny: %d %s", done.StatusCode, done.Body)
	}
	wantDeviceError(t, pollDevice(t, env, start.str("device_code")), "access_denied")
}

func TestDeviceExpired(t *testing.T) {
	env, _ := setup(t)
	start := startDevice(t, env, "repo:read")
	env.Clock.Advance(oauth.DeviceCodeTTL)
	wantDeviceError(t, pollDevice(t, env, start.str("device_code")), "expired_token")
	b := signedIn(t, env)
	if p := b.Get(t, "/device?user_code="+start.str("user_code")); p.StatusCode != http.StatusBadRequest || !strings.Contains(p.Body, "not valid or has expired") {
		t.Fatalf("expired code on the page: %d %s", p.StatusCode, p.Body)
	}
}

// Who may start the grant, and what it refuses.
func TestDeviceAuthorizationRefusals(t *testing.T) {
	env, app := setup(t)
	for name, tc := range map[string]struct {
		form url.Values
		want string
	}{
		"registered client": {url.Values{"client_id": {app.ClientID}, "scope": {"repo:read"}}, "unauthorized_client"},
		"no scope":          {url.Values{"client_id": {oauth.BuiltinClientID}}, "invalid_scope"},
		"unknown scope":     {url.Values{"client_id": {oauth.BuiltinClientID}, "scope": {"everything"}}, "invalid_scope"},
	} {
		r := postForm(t, env, "/oauth/device_authorization", tc.form, "", "")
		if r.str("error") != tc.want || r.status != http.StatusBadRequest {
			t.Errorf("%s: %d %v, want %s", name, r.status, r.body, tc.want)
		}
	}
	if r := postForm(t, env, "/oauth/device_authorization", url.Values{"client_id": {"nobody"}, "scope": {"repo:read"}}, "", ""); r.status != http.StatusUnauthorized || r.str("error") != "invalid_client" {
		t.Errorf("unknown client: %d %v", r.status, r.body)
	}
	// A poll by another client, or with a made-up code.
	start := startDevice(t, env, "repo:read")
	r := postForm(t, env, "/oauth/token", url.Values{"grant_type": {oauth.DeviceGrantType}, "client_id": {app.ClientID}, "device_code": {start.str("device_code")}}, "", "")
	if r.str("error") != "unauthorized_client" {
		t.Errorf("poll by a registered client: %d %v", r.status, r.body)
	}
	wantDeviceError(t, pollDevice(t, env, "chartctl_dc_made_up"), "invalid_grant")
	wantDeviceError(t, postForm(t, env, "/oauth/token", url.Values{"grant_type": {oauth.DeviceGrantType}, "client_id": {oauth.BuiltinClientID}}, "", ""), "invalid_request")
	// A non-admin's approval of admin alone grants nothing.
	adm := startDevice(t, env, "admin")
	b := signedIn(t, env)
	if p := b.Get(t, "/device?user_code="+adm.str("user_code")); p.StatusCode != http.StatusForbidden {
		t.Errorf("admin-only request for a non-admin: %d %s", p.StatusCode, p.Body)
	}
}

// Wrong user codes are throttled per address like sign-in: after ten,
// even the right code is refused for a while.
func TestDeviceWrongCodeThrottled(t *testing.T) {
	env, _ := setup(t)
	start := startDevice(t, env, "repo:read")
	b := signedIn(t, env)
	for i := range 10 {
		p := b.Get(t, "/device?user_code=BBBB-BBBB")
		if p.StatusCode != http.StatusBadRequest {
			t.Fatalf("wrong code %d: %d", i, p.StatusCode)
		}
	}
	if p := b.Get(t, "/device?user_code="+start.str("user_code")); p.StatusCode != http.StatusTooManyRequests || !strings.Contains(p.Body, "Too many wrong codes") {
		t.Fatalf("right code after ten wrong ones: %d %s", p.StatusCode, p.Body)
	}
	form := url.Values{"csrf_token": {b.Get(t, "/settings/apps").CSRF(t)}, "user_code": {start.str("user_code")}, "decision": {"approve"}}
	if p := b.PostForm(t, "/device", form); p.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("approving after ten wrong codes: %d", p.StatusCode)
	}
	wantDeviceError(t, pollDevice(t, env, start.str("device_code")), "authorization_pending")
}
