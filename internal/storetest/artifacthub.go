package storetest

import (
	"reflect"
	"testing"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// testArtifactHub: a repository's Artifact Hub metadata is stored with it
// (CreateRepository, as a restore does), replaced and removed by
// UpdateRepository, left alone by updates that do not name it, listed by
// Repositories and exported.
func testArtifactHub(t *testing.T, open Open) {
	s := open(t)
	ada := mustUser(t, s, "ada@example.com")
	ah := &chartctl.ArtifactHubRepo{RepositoryID: "2f6b7d4e-3c1a-4b5e-9a8f-0123456789ab",
		Owners: []chartctl.ArtifactHubOwner{{Name: "ada", Email: "ada@example.com"}, {Email: "ops@example.com"}},
		Ignore: []chartctl.ArtifactHubIgnore{{Name: "internal-tool"}, {Name: "web", Version: `^0\.`}}}
	must(t, s.CreateRepository(ctx, &chartctl.Repository{Name: "restored", OwnerID: ada.ID, ArtifactHub: ah}))
	got, err := s.Repository(ctx, "restored")
	must(t, err)
	if !reflect.DeepEqual(got.ArtifactHub, ah) {
		t.Fatalf("created with metadata: %+v, want %+v", got.ArtifactHub, ah)
	}

	must(t, s.CreateRepository(ctx, &chartctl.Repository{Name: "plain", OwnerID: ada.ID}))
	if got, err = s.Repository(ctx, "plain"); err != nil || got.ArtifactHub != nil {
		t.Fatalf("a repository without metadata: %+v, %v", got, err)
	}
	set := &chartctl.ArtifactHubRepo{Owners: []chartctl.ArtifactHubOwner{{Name: "bob", Email: "bob@example.com"}}}
	got, err = s.UpdateRepository(ctx, "plain", chartctl.RepositoryUpdate{ArtifactHub: set})
	must(t, err)
	if !reflect.DeepEqual(got.ArtifactHub, set) {
		t.Fatalf("UpdateRepository returned %+v, want %+v", got.ArtifactHub, set)
	}
	desc := "still there"
	got, err = s.UpdateRepository(ctx, "plain", chartctl.RepositoryUpdate{Description: &desc})
	must(t, err)
	if !reflect.DeepEqual(got.ArtifactHub, set) {
		t.Fatalf("an update of the description changed the metadata to %+v", got.ArtifactHub)
	}
	all, err := s.Repositories(ctx)
	must(t, err)
	for _, r := range all {
		if r.Name == "plain" && !reflect.DeepEqual(r.ArtifactHub, set) {
			t.Fatalf("Repositories lists %+v", r.ArtifactHub)
		}
	}
	if exp, ok := s.(chartctl.Exporter); ok {
		found := false
		must(t, exp.Export(ctx, nil, func(r chartctl.DumpRecord) error {
			if r.Repository != nil && r.Repository.Name == "restored" {
				found = reflect.DeepEqual(r.Repository.ArtifactHub, ah)
			}
			return nil
		}))
		if !found {
			t.Error("the export lacks the repository's Artifact Hub metadata")
		}
	}
	got, err = s.UpdateRepository(ctx, "plain", chartctl.RepositoryUpdate{ArtifactHub: &chartctl.ArtifactHubRepo{}})
	must(t, err)
	if got.ArtifactHub != nil {
		t.Fatalf("an empty document left %+v", got.ArtifactHub)
	}
	if got, err = s.Repository(ctx, "plain"); err != nil || got.ArtifactHub != nil {
		t.Fatalf("after removal: %+v, %v", got, err)
	}
}
