package testkit

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// CheckLintPolicy checks, against a running chartctl at base with an
// admin's API key, that uploads under a lint policy are linted: it makes
// repository repo with `lint: error`, uploads a chart that lints clean
// (accepted: a server without chartctl-lint would refuse it) and one
// whose template is not YAML (refused with the lint rule and Helm's
// message). It is how the packaging tests see that an installed server
// finds chartctl-lint.
func CheckLintPolicy(t *testing.T, client *http.Client, base, apiKey, repo string) {
	t.Helper()
	do := func(method, path, ctype string, body []byte, want int) []byte {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+apiKey)
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		rb, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("%s %s: %d %s (want %d)", method, path, resp.StatusCode, rb, want)
		}
		return rb
	}
	do("POST", "/v1/repositories", "application/json", []byte(`{"name":"`+repo+`"}`), http.StatusOK)
	do("PUT", "/v1/repositories/"+repo+"/policy", "application/json", []byte(`{"lint":"error"}`), http.StatusOK)
	clean := Archive(t, "clean", map[string]string{
		"Chart.yaml": "apiVersion: v2\nname: clean\nversion: 1.0.0\ndescription: lints clean\n", "values.yaml": "a: 1\n"})
	body, ctype := Multipart(t, map[string][]byte{"chart": clean})
	do("POST", "/v1/repositories/"+repo+"/charts", ctype, body, http.StatusOK)
	bad := Archive(t, "broken", map[string]string{
		"Chart.yaml": "apiVersion: v2\nname: broken\nversion: 1.0.0\ndescription: does not lint\n", "values.yaml": "a: 1\n",
		"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: [unclosed\n"})
	body, ctype = Multipart(t, map[string][]byte{"chart": bad})
	rb := do("POST", "/v1/repositories/"+repo+"/charts", ctype, body, http.StatusUnprocessableEntity)
	var ans struct {
		Error struct {
			Code       string `json:"code"`
			Violations []struct{ Rule, Message string }
		} `json:"error"`
	}
	if err := json.Unmarshal(rb, &ans); err != nil || ans.Error.Code != "policy_violation" || len(ans.Error.Violations) != 1 ||
		ans.Error.Violations[0].Rule != "lint" || !strings.Contains(ans.Error.Violations[0].Message, "templates/cm.yaml") ||
		strings.Contains(ans.Error.Violations[0].Message, "could not be linted") {
		t.Fatalf("a chart Helm's lint refuses: %s", rb)
	}
}
