// Package archtest keeps the dependency rule of docs/architecture.md true.
package archtest

import (
	"os/exec"
	"strings"
	"testing"
)

const mod = "github.com/chartctl/chartctl"

// deps lists the module's own packages and third-party modules that pkg
// imports, transitively, excluding tests.
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", mod+"/"+pkg).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", pkg, err)
	}
	return strings.Fields(string(out))
}

func TestDependencyRule(t *testing.T) {
	rules := []struct {
		pkg       string
		forbidden []string
		why       string
	}{
		{"internal/chartctl", []string{mod + "/"}, "the domain imports nothing of ours"},
		{"client", []string{mod + "/internal/"}, "the public SDK never imports internal packages"},
		{"server", []string{mod + "/internal/bolt", mod + "/internal/blob", mod + "/internal/postgres", mod + "/internal/s3blob", mod + "/internal/cmd"}, "the transport never imports a concrete store"},
		{"tui", []string{mod + "/internal/", mod + "/server"}, "the TUI knows only the client"},
		{"internal/oauth", []string{mod + "/server"}, "the OAuth server sits beside the transport, not above it"},
		{"internal/web", []string{mod + "/server"}, "the dashboard sits beside the transport, not above it"},
		{"internal/helmrepo", []string{mod + "/server", mod + "/internal/bolt", mod + "/internal/blob"}, "a protocol package stands on the application layer only"},
		{"internal/app", []string{mod + "/server", mod + "/internal/bolt", mod + "/internal/blob", mod + "/internal/postgres", mod + "/internal/s3blob", mod + "/internal/helmrepo"}, "the application layer knows no transport and no concrete store"},
		{"internal/httpx", []string{mod + "/server", mod + "/internal/app"}, "what transports share sits below them all"},
		{"internal/postgres", []string{mod + "/server", mod + "/internal/app", mod + "/internal/bolt"}, "a storage engine stands on the domain only"},
		{"internal/s3blob", []string{mod + "/server", mod + "/internal/app", mod + "/internal/blob"}, "a storage engine stands on the domain only"},
		// go-containerregistry's pkg/name (image reference parsing, no
		// dependencies of its own) comes with sigstore's simple-signing
		// payload, which verifies cosign's legacy .sig signatures; the
		// image tooling under pkg/v1, crane and authn stays out.
		{"cmd/chartctl", []string{"helm.sh/helm/v4/pkg/repo", "helm.sh/helm/v3", "k8s.io/client-go", "k8s.io/api/", "github.com/google/go-containerregistry/pkg/v1", "github.com/google/go-containerregistry/pkg/crane", "github.com/google/go-containerregistry/pkg/authn", mod + "/internal/testkit", mod + "/internal/imagebuild"}, "the binary stays free of Kubernetes API types, client libraries, image tooling and test helpers"},
	}
	for _, r := range rules {
		for _, d := range deps(t, r.pkg) {
			if d == mod+"/"+r.pkg {
				continue
			}
			for _, f := range r.forbidden {
				if strings.HasPrefix(d, f) || d == strings.TrimSuffix(f, "/") {
					t.Errorf("%s imports %s: %s", r.pkg, d, r.why)
				}
			}
		}
	}
}
