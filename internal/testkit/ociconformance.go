package testkit

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// OCIConformance describes a run of the OCI Distribution Specification's
// conformance suite (github.com/opencontainers/distribution-spec/conformance,
// which .ci/run builds from the module proxy into CHARTCTL_OCI_CONFORMANCE).
type OCIConformance struct {
	// Registry is the registry's host:port (plain HTTP).
	Registry string
	// Repo1 and Repo2 are the two repository names the suite pushes to
	// (the second for cross-repository mounts).
	Repo1, Repo2 string
	// Username and Password are the suite's credential (HTTP Basic).
	Username, Password string
}

// RunOCIConformance runs the conformance suite against c with every
// workflow enabled — pull, push, content discovery and content
// management, sha256 and sha512 — and fails tb unless every test passes.
// Without the suite's binary it skips, or fails under
// CHARTCTL_REQUIRE_E2E=1 (Tool). Unset, CHARTCTL_OCI_CONFORMANCE
// defaults to the module's .tools/oci-conformance, where .ci/run builds it.
func RunOCIConformance(tb testing.TB, c OCIConformance) {
	tb.Helper()
	bin := moduleTool("oci-conformance")
	if os.Getenv("CHARTCTL_OCI_CONFORMANCE") != "" || bin == "" {
		bin = Tool(tb, "CHARTCTL_OCI_CONFORMANCE", "")
	}
	results := tb.TempDir()
	cmd := exec.Command(bin)
	cmd.Dir = results
	cmd.Env = append(os.Environ(),
		"OCI_REGISTRY="+c.Registry,
		"OCI_TLS=disabled",
		"OCI_REPO1="+c.Repo1,
		"OCI_REPO2="+c.Repo2,
		"OCI_USERNAME="+c.Username,
		"OCI_PASSWORD="+c.Password,
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
		tb.Fatalf("conformance suite failed: %v\n%s\n%s", err, out.String(), report)
	}
	tb.Logf("%s", out.String())
}

// moduleTool returns the path of .tools/name in the module holding the
// working directory, or "" when there is none.
func moduleTool(name string) string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			p := filepath.Join(dir, ".tools", name)
			if _, err := os.Stat(p); err != nil {
				return ""
			}
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}
