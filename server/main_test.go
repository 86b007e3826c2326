package server_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/internal/testkit/pgtest"
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
	// pgtest.Main stops the shared PostgreSQL that the benchmarks on that
	// engine start.
	os.Exit(pgtest.Main(m))
}
