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
