package postgres

import (
	"encoding/json"
	"fmt"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// artifactHubJSON is the artifacthub column's document, in Artifact Hub's
// own field names.
type artifactHubJSON struct {
	RepositoryID string `json:"repositoryID,omitempty"`
	Owners       []struct {
		Name  string `json:"name,omitempty"`
		Email string `json:"email,omitempty"`
	} `json:"owners,omitempty"`
	Ignore []struct {
		Name    string `json:"name"`
		Version string `json:"version,omitempty"`
	} `json:"ignore,omitempty"`
}

// encodeArtifactHub returns the artifacthub column's value for a: NULL
// when a is empty.
func encodeArtifactHub(a *chartctl.ArtifactHubRepo) ([]byte, error) {
	if a.Empty() {
		return nil, nil
	}
	j := artifactHubJSON{RepositoryID: a.RepositoryID}
	for _, o := range a.Owners {
		j.Owners = append(j.Owners, struct {
			Name  string `json:"name,omitempty"`
			Email string `json:"email,omitempty"`
		}{o.Name, o.Email})
	}
	for _, i := range a.Ignore {
		j.Ignore = append(j.Ignore, struct {
			Name    string `json:"name"`
			Version string `json:"version,omitempty"`
		}{i.Name, i.Version})
	}
	return json.Marshal(j)
}

// decodeArtifactHub reads the artifacthub column: nil for NULL.
func decodeArtifactHub(b []byte) (*chartctl.ArtifactHubRepo, error) {
	if b == nil {
		return nil, nil
	}
	var j artifactHubJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, fmt.Errorf("decode artifacthub metadata: %w", err)
	}
	a := &chartctl.ArtifactHubRepo{RepositoryID: j.RepositoryID}
	for _, o := range j.Owners {
		a.Owners = append(a.Owners, chartctl.ArtifactHubOwner{Name: o.Name, Email: o.Email})
	}
	for _, i := range j.Ignore {
		a.Ignore = append(a.Ignore, chartctl.ArtifactHubIgnore{Name: i.Name, Version: i.Version})
	}
	return a, nil
}
