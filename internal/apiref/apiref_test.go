package apiref_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/internal/apiref"
	"github.com/chartctl/chartctl/server"
)

// TestReferenceIsCurrent fails when docs/api-reference.md was not
// regenerated after server/openapi.yaml changed.
func TestReferenceIsCurrent(t *testing.T) {
	want, err := apiref.Render(server.OpenAPIDocument())
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("..", "..", "docs", "api-reference.md"))
	if err != nil {
		t.Fatalf("%v: run `go generate ./server`", err)
	}
	if string(got) != string(want) {
		t.Fatal("docs/api-reference.md is out of date with server/openapi.yaml: run `go generate ./server`")
	}
	for _, s := range []string{"`GET /v1/repositories`", "`POST /v1/repositories/{repo}/charts`", "repo:write", "| 409 |"} {
		if !strings.Contains(string(want), s) {
			t.Errorf("the reference lacks %q", s)
		}
	}
}
