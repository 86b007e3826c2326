package serve

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/internal/identity/oidc"
	"github.com/chartctl/chartctl/internal/testkit/oidcissuer"
)

// TestOIDCConfig: the sign-in settings come from flags, CHARTCTL_* and
// the config file alike, with their documented defaults.
func TestOIDCConfig(t *testing.T) {
	c, err := parse(t, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.OIDCIssuer != "" || c.OIDCName != "SSO" || c.OIDCGroupsClaim != "groups" || !c.LocalSignIn {
		t.Fatalf("defaults: %+v", c)
	}
	c, err = parse(t, []string{"--oidc-issuer", "https://dex.example.com", "--oidc-scopes", "groups,offline_access", "--local-signin=false"}, map[string]string{
		"CHARTCTL_OIDC_CLIENT_ID":              "chartctl",
		"CHARTCTL_OIDC_CLIENT_SECRET_FILE":     "/run/secrets/oidc",
		"CHARTCTL_OIDC_NAME":                   "Acme SSO",
		"CHARTCTL_OIDC_ADMIN_GROUP":            "chartctl-admins",
		"CHARTCTL_OIDC_ALLOW_UNVERIFIED_EMAIL": "true",
		"CHARTCTL_OIDC_GROUPS_CLAIM":           "roles",
		"CHARTCTL_BASE_URL":                    "https://charts.example.com",
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.OIDCClientID != "chartctl" || c.OIDCClientSecretFile != "/run/secrets/oidc" || c.OIDCName != "Acme SSO" || c.OIDCAdminGroup != "chartctl-admins" ||
		!c.OIDCAllowUnverifiedEmail || c.OIDCGroupsClaim != "roles" || strings.Join(c.OIDCScopes, " ") != "groups offline_access" || c.LocalSignIn {
		t.Fatalf("config = %+v", c)
	}

	path := writeConfig(t, "base-url: https://charts.example.com\noidc-issuer: https://dex.example.com\noidc-client-id: chartctl\noidc-client-secret-file: /run/secrets/oidc\noidc-name: Acme SSO\nlocal-signin: false\n")
	o, _, err := runServeCmd(t, []string{"--config", path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if o.Config.OIDCIssuer != "https://dex.example.com" || o.Config.OIDCName != "Acme SSO" || o.Config.LocalSignIn {
		t.Fatalf("from the config file: %+v", o.Config)
	}
}

func TestOIDCConfigValidate(t *testing.T) {
	full := []string{"--base-url", "https://charts.example.com", "--oidc-client-id", "c", "--oidc-client-secret-file", "/f"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{append([]string{"--oidc-issuer", "http://dex.example.com"}, full...), "invalid --oidc-issuer"},
		{[]string{"--oidc-issuer", "https://dex.example.com", "--base-url", "https://charts.example.com"}, "--oidc-client-id and --oidc-client-secret-file"},
		{[]string{"--oidc-issuer", "https://dex.example.com", "--oidc-client-id", "c", "--oidc-client-secret-file", "/f"}, "needs --base-url"},
		{[]string{"--oidc-client-id", "c"}, "need --oidc-issuer"},
		{[]string{"--local-signin=false"}, "--local-signin=false needs another way to sign in"},
		{append([]string{"--oidc-issuer", "https://dex.example.com", "--oidc-name", " "}, full...), "--oidc-name"},
	} {
		_, err := parse(t, tc.args, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want mention of %q", tc.args, err, tc.want)
		}
	}
}

// TestOIDCDiscoveryAtStart: the provider is discovered at start; an
// unreachable issuer or a missing secret stops the start with an error
// saying what to check.
func TestOIDCDiscoveryAtStart(t *testing.T) {
	iss := oidcissuer.New(t)
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.BaseURL, cfg.OIDCIssuer, cfg.OIDCClientID, cfg.OIDCClientSecretFile = "https://charts.example.com", iss.URL, "chartctl", secret
	p, got, err := discoverOIDC(t.Context(), &cfg, iss.Client())
	if err != nil || p == nil || got != "s3cret" {
		t.Fatalf("discovery: %v, %q, %v", p, got, err)
	}
	if u := p.AuthCodeURL(oidc.NewRequest()); !strings.HasPrefix(u, iss.URL+"/authorize?") || !strings.Contains(u, "redirect_uri=https%3A%2F%2Fcharts.example.com%2Fsignin%2Foidc%2Fcallback") {
		t.Fatalf("authorization URL %s", u)
	}

	bad := cfg
	bad.OIDCIssuer = "https://127.0.0.1:1"
	if _, _, err := discoverOIDC(t.Context(), &bad, iss.Client()); err == nil || !strings.Contains(err.Error(), "OIDC discovery at https://127.0.0.1:1/.well-known/openid-configuration failed") || !strings.Contains(err.Error(), "check --oidc-issuer") {
		t.Fatalf("unreachable issuer: %v", err)
	}
	// Without the test CA the issuer's certificate is not trusted.
	if _, _, err := discoverOIDC(t.Context(), &cfg, nil); err == nil || !strings.Contains(err.Error(), "trusts the issuer's certificate") {
		t.Fatalf("untrusted issuer: %v", err)
	}
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	noSecret := cfg
	noSecret.OIDCClientSecretFile = empty
	if _, _, err := discoverOIDC(t.Context(), &noSecret, iss.Client()); err == nil || !strings.Contains(err.Error(), "is empty") {
		t.Fatalf("empty secret file: %v", err)
	}
}
