package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/internal/testkit"
)

// A body of the wrong JSON shape gets a message in JSON's words, not Go's
// ("expected []string"), naming the field, and a body that is not an
// object is called that, not "not valid JSON".
func TestJSONShapeMessages(t *testing.T) {
	s := testkit.StartServer(t)
	cases := []struct {
		path, body, param, message string
	}{
		{"/v1/user/api-keys", `{"name":"ci","scopes":"repo:read"}`, "scopes", "Invalid scopes: expected an array of strings, got a string."},
		{"/v1/repositories", `{"name":42}`, "name", "Invalid name: expected a string, got a number."},
		{"/v1/users", `{"email":"a@example.com","admin":"yes"}`, "admin", "Invalid admin: expected true or false, got a string."},
		{"/v1/repositories", `{"name":"m","mirror":{"url":"https://example.com","interval":5}}`, "mirror.interval", "Invalid mirror.interval: expected a string, got a number."},
		{"/v1/repositories", `[{"name":"a"}]`, "body", "The request body must be a JSON object."},
		{"/v1/repositories", `"a"`, "body", "The request body must be a JSON object."},
	}
	for _, c := range cases {
		r := s.Do(t, http.MethodPost, c.path, s.AdminKey, strings.NewReader(c.body), "Content-Type", "application/json")
		expectError(t, r, 400, "invalid_parameter", c.param)
		var e errBody
		r.JSON(t, &e)
		if e.Error.Message != c.message {
			t.Errorf("%s %s: message %q, want %q", c.path, c.body, e.Error.Message, c.message)
		}
	}
}

// Regression (informational finding of the third review): a key given
// twice in a request body was accepted, the last value winning, so a
// proxy reading the first saw another request than the server acted on.
// Every /v1 body is refused with 400 naming the key, in nested objects
// too and when the two spellings differ only in case (encoding/json
// matches field names without regard to case); nothing is created.
func TestDuplicateJSONKeysRefused(t *testing.T) {
	s := testkit.StartServer(t)
	cases := []struct {
		method, path, body, param string
	}{
		{http.MethodPost, "/v1/repositories", `{"name":"a","name":"b"}`, "name"},
		{http.MethodPost, "/v1/repositories", `{"name":"c","Name":"d"}`, "Name"},
		{http.MethodPost, "/v1/repositories", `{"name":"m","mirror":{"url":"https://example.com","url":"https://other.example"}}`, "url"},
		{http.MethodPost, "/v1/user/api-keys", `{"name":"ci","scopes":["repo:read"],"scopes":["admin"]}`, "scopes"},
		{http.MethodPost, "/v1/users", `{"email":"a@example.com","admin":false,"admin":true}`, "admin"},
		{http.MethodPost, "/v1/organizations", `{"name":"o1","name":"o2"}`, "name"},
	}
	for _, c := range cases {
		r := s.Do(t, c.method, c.path, s.AdminKey, strings.NewReader(c.body), "Content-Type", "application/json")
		expectError(t, r, 400, "invalid_parameter", c.param)
		var e errBody
		r.JSON(t, &e)
		if !strings.Contains(e.Error.Message, `"`+c.param+`" appears more than once`) {
			t.Errorf("%s %s: message %q does not name the repeated key", c.path, c.body, e.Error.Message)
		}
	}
	// Nothing was created, and the same keys once each are accepted (a
	// key may repeat in different objects).
	for _, name := range []string{"a", "b", "c", "d", "m"} {
		if r := s.Do(t, http.MethodGet, "/v1/repositories/"+name, s.AdminKey, nil); r.StatusCode != 404 {
			t.Errorf("repository %s: %d after a refused body", name, r.StatusCode)
		}
	}
	r := s.Do(t, http.MethodPost, "/v1/repositories", s.AdminKey, strings.NewReader(`{"name":"m","mirror":{"url":"https://example.com"},"description":"url name"}`), "Content-Type", "application/json")
	if r.StatusCode != 200 {
		t.Fatalf("a body without repeats: %d %s", r.StatusCode, r.Body)
	}
}
