package server_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/internal/testkit/pgtest"
	"github.com/chartctl/chartctl/internal/testkit/s3test"
	"github.com/chartctl/chartctl/server"
)

// TestMain holds the whole API test suite to the OpenAPI document: every
// request and response made through testkit's Do, DoJSON and Upload is
// validated against it.
func TestMain(m *testing.M) {
	if err := testkit.ValidateOpenAPI(server.OpenAPIDocument()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	// The engines of the cross-engine backup tests and of the upload
	// benchmark on PostgreSQL.
	pgtest.StopShared()
	s3test.StopShared()
	os.Exit(code)
}
