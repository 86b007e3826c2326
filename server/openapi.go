package server

import (
	_ "embed"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"
	"sigs.k8s.io/yaml"
)

//go:generate go run ../internal/apiref/gen -o ../docs/api-reference.md

// openAPIYAML is the OpenAPI 3.1 document of the /v1 API. It is written by
// hand, as YAML, because it is a contract reviewers read: each route is one
// operation under its path, errors are references to shared responses, and
// a diff shows exactly what changed in the API. Tests hold it to the
// server (route coverage, and validation of every API test's traffic).
//
//go:embed openapi.yaml
var openAPIYAML []byte

// openAPIJSON is openAPIYAML as JSON, converted once.
var openAPIJSON = func() []byte {
	b, err := yaml.YAMLToJSON(openAPIYAML)
	if err != nil {
		panic(fmt.Sprintf("server/openapi.yaml is not valid YAML: %v", err))
	}
	return b
}()

// OpenAPIDocument returns the OpenAPI 3.1 document of the /v1 API as JSON.
func OpenAPIDocument() []byte { return append([]byte(nil), openAPIJSON...) }

// handleOpenAPI serves the document; it needs no credential.
func handleOpenAPI(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "public, max-age=300")
	return c.Blob(http.StatusOK, "application/json", openAPIJSON)
}
