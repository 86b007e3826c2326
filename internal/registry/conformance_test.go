package registry_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// conformanceBinary finds the OCI distribution-spec conformance test that
// .ci/run builds from the module proxy (CHARTCTL_OCI_CONFORMANCE, else
// .tools/oci-conformance). Missing, the test skips, unless
// CHARTCTL_REQUIRE_E2E=1 (CI), where that is a failure.
func conformanceBinary(t *testing.T) string {
	t.Helper()
	p := os.Getenv("CHARTCTL_OCI_CONFORMANCE")
	if p == "" {
		p, _ = filepath.Abs("../../.tools/oci-conformance")
	}
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CHARTCTL_REQUIRE_E2E") == "1" {
			t.Fatalf("OCI conformance binary not found at %s (run .ci/run or set CHARTCTL_OCI_CONFORMANCE) and CHARTCTL_REQUIRE_E2E=1", p)
		}
		t.Skipf("OCI conformance binary not found at %s; set CHARTCTL_OCI_CONFORMANCE", p)
	}
	return p
}

// TestConformance runs the OCI Distribution Specification's conformance
// suite against the real server: pull, push, content discovery and content
// management, sha256 and sha512, every data set. Every test must pass.
func TestConformance(t *testing.T) {
	bin := conformanceBinary(t)
	e := setup(t)
	mustRepoIn(t, e, "conformance", "private")
	results := t.TempDir()
	cmd := exec.Command(bin)
	cmd.Dir = results
	cmd.Env = append(os.Environ(),
		"OCI_REGISTRY="+strings.TrimPrefix(e.URL, "http://"),
		"OCI_TLS=disabled",
		"OCI_REPO1=conformance/repo1",
		"OCI_REPO2=conformance/repo2",
		"OCI_USERNAME=conformance",
		"OCI_PASSWORD="+e.AdminKey,
		"OCI_RESULTS_DIR="+results,
		"OCI_VERSION=1.1",
		"OCI_API_PULL=true",
		"OCI_API_PUSH=true",
		"OCI_API_BLOBS_DELETE=true",
		"OCI_API_BLOBS_UPLOAD_CANCEL=true",
		"OCI_API_BLOBS_DIGEST_HEADER=true",
		"OCI_API_MANIFESTS_DIGEST_HEADER=true",
		"OCI_API_MANIFESTS_DELETE=true",
		"OCI_API_TAGS_DELETE=true",
		"OCI_API_TAGS_LIST=true",
		"OCI_API_REFERRER=true",
		"OCI_DATA_SHA512=true",
		"OCI_LOG=warn",
	)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	report, rerr := os.ReadFile(filepath.Join(results, "results.yaml"))
	if err != nil || rerr != nil || len(report) == 0 {
		t.Fatalf("conformance suite failed: %v\n%s\n%s", err, out.String(), report)
	}
	t.Logf("%s", out.String())
}
