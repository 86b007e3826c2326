package serve_test

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/internal/testkit/slapdtest"
)

// TestBinarySignsInWithLDAP: the real binary, configured with the
// --ldap-* flags against a real slapd (StartTLS, its CA through
// SSL_CERT_FILE, local sign-in off), signs a directory user in from the
// password form, makes an admin of the admin group's member, and answers
// a 503 page while slapd is down.
func TestBinarySignsInWithLDAP(t *testing.T) {
	s := slapdtest.Start(t)
	bin := mustBinary(t)
	t.Setenv("SSL_CERT_FILE", s.CA.CertFile)
	pwFile := filepath.Join(t.TempDir(), "ldap-password")
	if err := os.WriteFile(pwFile, []byte(slapdtest.BindPassword+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	p := startServe(t, bin, data, "--ldap-url", s.URL, "--ldap-bind-dn", slapdtest.BindDN, "--ldap-bind-password-file", pwFile,
		"--ldap-user-base", slapdtest.People, "--ldap-group-base", slapdtest.Groups, "--ldap-admin-group", "chartctl-admins", "--local-signin=false")
	key := adminKey(t, data)

	signIn := func(login, password string) (int, string) {
		t.Helper()
		jar, _ := cookiejar.New(nil)
		c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := c.Get(p.url + "/signin")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		m := regexp.MustCompile(`name="csrf_token" value="([^"]+)"`).FindSubmatch(body)
		if m == nil || !strings.Contains(string(body), `name="login"`) {
			t.Fatalf("sign-in page: %s", body)
		}
		resp, err = c.PostForm(p.url+"/signin", url.Values{"csrf_token": {string(m[1])}, "login": {login}, "password": {password}, "return_to": {"/"}})
		if err != nil {
			t.Fatal(err)
		}
		body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(body)
	}
	if code, body := signIn("root", "wrong"); code != http.StatusUnauthorized {
		t.Fatalf("wrong password: %d %s", code, body)
	}
	if code, body := signIn("root", "root-password"); code != http.StatusSeeOther {
		t.Fatalf("sign-in: %d %s\nserver log:\n%s", code, body, p.stderr)
	}
	resp, body, err := do(t, http.MethodGet, p.url+"/v1/users", key, nil, "")
	if err != nil || resp.StatusCode != http.StatusOK || !regexp.MustCompile(`"email":"root@example.com","admin":true[^}]*"identity":\{"provider":"ldap"`).Match(body) {
		t.Fatalf("GET /v1/users: %v %s", err, body)
	}
	s.Stop()
	if code, body := signIn("root", "root-password"); code != http.StatusServiceUnavailable || !strings.Contains(body, "cannot reach the company directory") {
		t.Fatalf("slapd down: %d %s", code, body)
	}
}
