package client_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/testkit"
)

// TestArtifactHubRoundTrip: the SDK sets a repository's
// artifacthub-repo.yml as JSON and as the file, reads it back both ways,
// and gets the server's 400 for a document Artifact Hub's schema refuses.
func TestArtifactHubRoundTrip(t *testing.T) {
	s := testkit.StartServer(t)
	s.MustRepo(t, "pub", "public")
	c, err := client.New(s.URL, client.WithToken(s.AdminKey))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	in := &client.ArtifactHubRepo{RepositoryID: "2f6b7d4e-3c1a-4b5e-9a8f-0123456789ab", Owners: []client.ArtifactHubOwner{{Name: "ada", Email: "ada@example.com"}},
		Ignore: []client.ArtifactHubIgnore{{Name: "web", Version: `^0\.`}}}
	out, _, err := c.Repositories.SetArtifactHub(ctx, "pub", in)
	if err != nil || !reflect.DeepEqual(out, in) {
		t.Fatalf("set: %+v, %v", out, err)
	}
	got, _, err := c.Repositories.ArtifactHub(ctx, "pub")
	if err != nil || !reflect.DeepEqual(got, in) {
		t.Fatalf("get: %+v, %v", got, err)
	}
	file, _, err := c.Repositories.ArtifactHubFile(ctx, "pub")
	if err != nil || !strings.HasPrefix(string(file), "repositoryID: 2f6b7d4e-3c1a-4b5e-9a8f-0123456789ab\n") {
		t.Fatalf("file: %s, %v", file, err)
	}
	yml := "owners:\n  - name: bob\n"
	if out, _, err = c.Repositories.SetArtifactHubYAML(ctx, "pub", []byte(yml)); err != nil || len(out.Owners) != 1 || out.Owners[0].Name != "bob" || out.RepositoryID != "" {
		t.Fatalf("set YAML: %+v, %v", out, err)
	}
	_, resp, err := c.Repositories.SetArtifactHubYAML(ctx, "pub", []byte("repositoryId: 2f6b7d4e-3c1a-4b5e-9a8f-0123456789ab\n"))
	if err == nil || resp == nil || resp.StatusCode != 400 || !strings.Contains(err.Error(), "repositoryId") {
		t.Fatalf("a refused file: %v", err)
	}
	if out, _, err = c.Repositories.SetArtifactHub(ctx, "pub", nil); err != nil || out.RepositoryID != "" || out.Owners != nil {
		t.Fatalf("clear: %+v, %v", out, err)
	}
}
