package registry_test

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/internal/testkit/oidcissuer"
	"github.com/chartctl/chartctl/server"
)

// robotSecret creates robot name of organization acme as the server admin,
// limited to acme-* with perms, and returns its secret.
func robotSecret(t *testing.T, e *env, name string, perms ...string) string {
	t.Helper()
	r := e.DoJSON(t, "POST", "/v1/organizations/acme/robots", e.AdminKey,
		map[string]any{"name": name, "repositories": []string{"acme-*"}, "permissions": perms})
	var out struct{ Data client.Robot }
	r.JSON(t, &out)
	if r.StatusCode != 200 || out.Data.Secret == "" {
		t.Fatalf("create robot %s: %d %s", name, r.StatusCode, r.Body)
	}
	return out.Data.Secret
}

// doBasic sends a request with HTTP Basic user:pass.
func doBasic(t *testing.T, e *env, method, path, user, pass string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, e.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(user+":"+pass)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// TestHelmOCIRobot: real Helm logs in to the registry as a robot
// restricted to acme-* (`helm registry login --username
// 'robot$acme+ci-push'`), pushes to acme-charts and pulls it back; it is
// refused on other (private, 404 to it) and on a repository of another
// organization its pattern matches. A wrong robot name with the secret
// does not log in; a pull-only robot cannot push; a push-only robot
// cannot delete a manifest.
func TestHelmOCIRobot(t *testing.T) {
	for name, base := range testkit.Helms(t) {
		t.Run(name, func(t *testing.T) {
			e := setup(t)
			for _, body := range []map[string]string{{"name": "acme"}, {"name": "globex"}} {
				if r := e.DoJSON(t, "POST", "/v1/organizations", e.AdminKey, body); r.StatusCode != 200 {
					t.Fatalf("create org: %d %s", r.StatusCode, r.Body)
				}
			}
			for _, repo := range []map[string]string{
				{"name": "acme-charts", "organization": "acme"},
				{"name": "other", "organization": "acme"},
				{"name": "acme-x", "organization": "globex"},
			} {
				if r := e.DoJSON(t, "POST", "/v1/repositories", e.AdminKey, repo); r.StatusCode != 200 {
					t.Fatalf("create repo: %d %s", r.StatusCode, r.Body)
				}
			}
			pusher := robotSecret(t, e, "ci-push", "push")
			puller := robotSecret(t, e, "reader", "pull")
			host := strings.TrimPrefix(e.URL, "http://")
			h := base.Fresh(t)
			v1 := testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "1.0.0"})
			pkg := h.Write("web-1.0.0.tgz", v1)

			if out, err := h.Run("registry", "login", host, "--username", "robot$acme+reader", "--password", pusher, "--plain-http"); err == nil {
				t.Fatalf("login as another robot with this secret succeeded:\n%s", out)
			}
			h.Must("registry", "login", host, "--username", "robot$acme+ci-push", "--password", pusher, "--plain-http")
			out := h.Must("push", pkg, "oci://"+host+"/acme-charts", "--plain-http")
			m := digestRE.FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("push output has no digest:\n%s", out)
			}
			if r := e.Do(t, "GET", "/v1/repositories/acme-charts/charts/web/1.0.0", e.AdminKey, nil); r.StatusCode != 200 {
				t.Fatalf("/v1 after the robot's OCI push: %d %s", r.StatusCode, r.Body)
			}
			got, err := pull(t, h, "oci://"+host+"/acme-charts/web", "1.0.0")
			if err != nil || !bytes.Equal(got, v1) {
				t.Fatalf("pull: %v", err)
			}
			for _, repo := range []string{"other", "acme-x"} {
				if out, err := h.Run("push", pkg, "oci://"+host+"/"+repo, "--plain-http"); err == nil {
					t.Fatalf("push to %s succeeded:\n%s", repo, out)
				}
				if r := e.do(t, "GET", "/v2/"+repo+"/web/tags/list", pusher, nil); r.StatusCode != 404 || ociCode(r) != "NAME_UNKNOWN" {
					t.Fatalf("%s seen by the robot: %d %s", repo, r.StatusCode, r.Body)
				}
			}

			// The push-only robot cannot delete; the pull-only one pulls
			// but cannot push.
			if r := e.do(t, "DELETE", "/v2/acme-charts/web/manifests/"+m[1], pusher, nil); r.StatusCode != 403 || ociCode(r) != "DENIED" ||
				!strings.Contains(string(r.Body), "may not delete") {
				t.Fatalf("delete by the push robot: %d %s", r.StatusCode, r.Body)
			}
			reader := base.Fresh(t)
			reader.Must("registry", "login", host, "--username", "robot$acme+reader", "--password", puller, "--plain-http")
			if got, err := pull(t, reader, "oci://"+host+"/acme-charts/web", "1.0.0"); err != nil || !bytes.Equal(got, v1) {
				t.Fatalf("pull by the pull robot: %v", err)
			}
			// The classic Helm repository takes the same credentials.
			reader.Must("repo", "add", "acme", e.URL+"/helm/acme-charts", "--username", "robot$acme+reader", "--password", puller)
			if out := reader.Must("search", "repo", "acme/web"); !strings.Contains(out, "1.0.0") {
				t.Fatalf("helm search repo as the robot:\n%s", out)
			}
			if out, err := reader.Run("repo", "add", "other", e.URL+"/helm/other", "--username", "robot$acme+reader", "--password", puller); err == nil {
				t.Fatalf("helm repo add other as the robot succeeded:\n%s", out)
			}
			v2 := reader.Write("web-2.0.0.tgz", testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "2.0.0"}))
			if out, err := reader.Run("push", v2, "oci://"+host+"/acme-charts", "--plain-http"); err == nil {
				t.Fatalf("push by the pull robot succeeded:\n%s", out)
			}

			// The token endpoint takes the robot's Basic credentials, and
			// checks the user name against the secret.
			if resp := doBasic(t, e, "GET", "/v2/token?scope=repository:acme-charts/web:push", "robot$acme+ci-push", pusher); resp.StatusCode != 200 {
				t.Fatalf("/v2/token as the robot: %d", resp.StatusCode)
			}
			if resp := doBasic(t, e, "GET", "/v2/token", "robot$acme+reader", pusher); resp.StatusCode != 401 {
				t.Fatalf("/v2/token with another robot's name: %d", resp.StatusCode)
			}
		})
	}
}

// TestHelmOCIExchangedCredential: a credential exchanged for a trusted
// publisher's CI token (POST /v1/oidc/token) works over OCI as the
// robot's secret does: /v2/token takes it with the robot's user name,
// real Helm logs in with it, pushes to acme-charts and is refused on
// other, which the robot's pattern does not name.
func TestHelmOCIExchangedCredential(t *testing.T) {
	iss := oidcissuer.New(t)
	const aud = "https://charts.example.com"
	for name, base := range testkit.Helms(t) {
		t.Run(name, func(t *testing.T) {
			e := setupServer(t, func(s *server.Server) {
				s.Config.OIDCRootCAs = iss.Pool
				s.Config.OIDCTrustInsecureIssuers = []string{iss.URL}
			})
			if r := e.DoJSON(t, "POST", "/v1/organizations", e.AdminKey, map[string]string{"name": "acme"}); r.StatusCode != 200 {
				t.Fatalf("create org: %d %s", r.StatusCode, r.Body)
			}
			for _, repo := range []string{"acme-charts", "other"} {
				if r := e.DoJSON(t, "POST", "/v1/repositories", e.AdminKey, map[string]string{"name": repo, "organization": "acme"}); r.StatusCode != 200 {
					t.Fatalf("create repo: %d %s", r.StatusCode, r.Body)
				}
			}
			robotSecret(t, e, "ci-push", "push")
			if r := e.DoJSON(t, "POST", "/v1/organizations/acme/robots/ci-push/publishers", e.AdminKey,
				client.PublisherRequest{Issuer: iss.URL, Audience: aud, Claims: map[string]string{"repository": "acme/charts"}}); r.StatusCode != 200 && r.StatusCode != 201 {
				t.Fatalf("add publisher: %d %s", r.StatusCode, r.Body)
			}
			tok, err := client.ExchangeOIDCToken(t.Context(), nil, e.URL, iss.Token(t, iss.GitHub("acme/charts", aud)), "")
			if err != nil {
				t.Fatalf("exchange: %v", err)
			}
			cred := tok.AccessToken
			if resp := doBasic(t, e, "GET", "/v2/token?scope=repository:acme-charts/web:push", "robot$acme+ci-push", cred); resp.StatusCode != 200 {
				t.Fatalf("/v2/token with the exchanged credential: %d", resp.StatusCode)
			}
			if resp := doBasic(t, e, "GET", "/v2/token", "robot$acme+other", cred); resp.StatusCode != 401 {
				t.Fatalf("/v2/token with another robot's name: %d", resp.StatusCode)
			}
			host := strings.TrimPrefix(e.URL, "http://")
			h := base.Fresh(t)
			pkg := h.Write("web-1.0.0.tgz", testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "1.0.0"}))
			h.Must("registry", "login", host, "--username", "robot$acme+ci-push", "--password", cred, "--plain-http")
			h.Must("push", pkg, "oci://"+host+"/acme-charts", "--plain-http")
			if r := e.Do(t, "GET", "/v1/repositories/acme-charts/charts/web/1.0.0", e.AdminKey, nil); r.StatusCode != 200 {
				t.Fatalf("/v1 after the exchanged credential's OCI push: %d %s", r.StatusCode, r.Body)
			}
			if out, err := h.Run("push", pkg, "oci://"+host+"/other", "--plain-http"); err == nil {
				t.Fatalf("push to other with the exchanged credential succeeded:\n%s", out)
			}
		})
	}
}
