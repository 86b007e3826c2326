package web_test

import (
	"os"
	"testing"

	"github.com/chartctl/chartctl/internal/testkit/pgtest"
)

// TestMain stops the shared PostgreSQL server, if a test started one.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
