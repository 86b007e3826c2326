package serve_test

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAdminPasswordFile: with --admin-password-file the first admin gets
// that password, and no API key or initial-admin.json is made (CONTRACT
// §6), so replicas and read-only deployments take it from a Secret.
func TestAdminPasswordFile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := mustBinary(t)
	data := t.TempDir()
	pwFile := filepath.Join(t.TempDir(), "password")
	if err := os.WriteFile(pwFile, []byte("correct horse battery\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startServe(t, bin, data, "--admin-password-file", pwFile, "--admin-email", "ops@example.com")
	if _, err := os.Stat(filepath.Join(data, "initial-admin.json")); !os.IsNotExist(err) {
		t.Fatalf("initial-admin.json written with --admin-password-file: %v", err)
	}
	if strings.Contains(p.stderr.String(), "correct horse") {
		t.Fatal("the password reached the log")
	}
	// The password signs in on the dashboard: a redirect, not the form again.
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	form := url.Values{"email": {"ops@example.com"}, "password": {"correct horse battery"}}
	resp, err := c.Get(p.url + "/signin")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var csrf *http.Cookie
	for _, ck := range resp.Cookies() {
		if strings.Contains(ck.Name, "csrf") {
			csrf = ck
		}
	}
	if csrf != nil {
		form.Set("csrf_token", csrf.Value)
	}
	req, _ := http.NewRequest("POST", p.url+"/signin", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if csrf != nil {
		req.AddCookie(csrf)
	}
	resp, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther && resp.StatusCode != http.StatusFound {
		t.Fatalf("sign-in with the file's password: %d, want a redirect", resp.StatusCode)
	}
}
