package backup

import (
	"reflect"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// TestArtifactHubRecordRoundTrip: a repository's artifacthub-repo.yml
// travels in its backup record (format 9); a record of an older backup
// reads back without one.
func TestArtifactHubRecordRoundTrip(t *testing.T) {
	ah := &chartctl.ArtifactHubRepo{RepositoryID: "2f6b7d4e-3c1a-4b5e-9a8f-0123456789ab",
		Owners: []chartctl.ArtifactHubOwner{{Name: "ada", Email: "ada@example.com"}},
		Ignore: []chartctl.ArtifactHubIgnore{{Name: "internal-tool"}, {Name: "web", Version: "^0\\."}}}
	in := &chartctl.Repository{ID: "repo_1", Name: "public", Visibility: chartctl.VisibilityPublic, IndexFormat: chartctl.IndexJSON,
		CreatedAt: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), ArtifactHub: ah}
	b, err := encodeRecord(chartctl.DumpRecord{Repository: in})
	if err != nil {
		t.Fatal(err)
	}
	out, err := decodeRecord(b, FormatVersion)
	if err != nil || out.Repository == nil {
		t.Fatalf("decode: %+v, %v", out, err)
	}
	if !reflect.DeepEqual(out.Repository.ArtifactHub, ah) {
		t.Errorf("artifacthub after the round trip: %+v, want %+v", out.Repository.ArtifactHub, ah)
	}
	old := []byte(`{"kind":"repository","data":{"id":"repo_2","name":"plain","visibility":"private","created_at":"2025-01-01T00:00:00Z","index_format":"yaml"}}`)
	if out, err = decodeRecord(old, 8); err != nil || out.Repository.ArtifactHub != nil {
		t.Fatalf("a format-8 record: %+v, %v", out.Repository, err)
	}
}
