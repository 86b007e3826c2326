package registry_test

import (
	"strings"
	"testing"

	"github.com/chartctl/chartctl/internal/testkit"
)

// TestConformance runs the OCI Distribution Specification's conformance
// suite against the real server: pull, push, content discovery and content
// management, sha256 and sha512, every data set. Every test must pass.
func TestConformance(t *testing.T) {
	e := setup(t)
	mustRepoIn(t, e, "conformance", "private")
	testkit.RunOCIConformance(t, testkit.OCIConformance{
		Registry: strings.TrimPrefix(e.URL, "http://"),
		Repo1:    "conformance/repo1", Repo2: "conformance/repo2",
		Username: "conformance", Password: e.AdminKey,
	})
}
