// Package enginetest is the TestMain of test packages that run the
// scale-out engines: the shared PostgreSQL (pgtest) and versitygw (s3test)
// servers their tests start on first use are stopped and removed when the
// package's tests end.
package enginetest

import (
	"testing"

	"github.com/chartctl/chartctl/internal/testkit/pgtest"
	"github.com/chartctl/chartctl/internal/testkit/s3test"
)

// Main runs the tests, then stops the shared servers the tests started,
// and returns the exit code: func TestMain(m *testing.M) {
// os.Exit(enginetest.Main(m)) }.
func Main(m *testing.M) int {
	code := m.Run()
	pgtest.StopShared()
	s3test.StopShared()
	return code
}
