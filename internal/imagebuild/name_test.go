package imagebuild_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/chartctl/chartctl/internal/imagebuild"
)

// TestImageNamedByReleaseConfig holds the image's name to the one the
// release configuration declares (CONTRACT §17: "named in the release
// configuration"): the name the image carries and the Helm chart's
// default image are the same.
func TestImageNamedByReleaseConfig(t *testing.T) {
	root := filepath.Join("..", "..")
	var rel struct {
		Env []string `json:"env"`
	}
	b, err := os.ReadFile(filepath.Join(root, ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &rel); err != nil {
		t.Fatal(err)
	}
	var declared string
	for _, e := range rel.Env {
		if v, ok := strings.CutPrefix(e, "IMAGE_REPO="); ok {
			declared = v
		}
	}
	if declared == "" {
		t.Fatal(".goreleaser.yaml declares no IMAGE_REPO in env")
	}
	if imagebuild.Repository != declared {
		t.Errorf("imagebuild.Repository = %q, the release configuration declares %q", imagebuild.Repository, declared)
	}
	var values struct {
		Image struct {
			Repository string `json:"repository"`
		} `json:"image"`
	}
	b, err = os.ReadFile(filepath.Join(root, "deploy", "helm", "chartctl", "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &values); err != nil {
		t.Fatal(err)
	}
	if values.Image.Repository != declared {
		t.Errorf("deploy/helm/chartctl image.repository = %q, the release configuration declares %q", values.Image.Repository, declared)
	}
}
