package client

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
)

// ArtifactHubRepo is a repository's artifacthub-repo.yml, with Artifact
// Hub's field names (https://artifacthub.io/docs/topics/repositories/).
// The server serves it at /helm/REPO/artifacthub-repo.yml and as the
// "artifacthub.io" tag of each chart's OCI repository.
type ArtifactHubRepo struct {
	// RepositoryID is the ID (a UUID) of the Artifact Hub repository the
	// charts are published to; it gives the verified-publisher badge.
	RepositoryID string `json:"repositoryID,omitempty"`
	// Owners may claim the repository on Artifact Hub.
	Owners []ArtifactHubOwner `json:"owners,omitempty"`
	// Ignore lists the packages Artifact Hub does not index.
	Ignore []ArtifactHubIgnore `json:"ignore,omitempty"`
}

// ArtifactHubOwner is one owner of an Artifact Hub repository.
type ArtifactHubOwner struct {
	Name  string `json:"name,omitempty"`
	Email string `json:"email,omitempty"`
}

// ArtifactHubIgnore is a package Artifact Hub leaves out: Name exactly,
// and the versions Version (a regular expression) matches, all when "".
type ArtifactHubIgnore struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

func repoArtifactHubPath(repo string) string {
	return "v1/repositories/" + url.PathEscape(repo) + "/artifacthub"
}

// ArtifactHub returns a repository's Artifact Hub metadata; an empty one
// when its admins set none.
func (s *RepositoriesService) ArtifactHub(ctx context.Context, repo string) (*ArtifactHubRepo, *Response, error) {
	out := new(ArtifactHubRepo)
	resp, err := s.client.call(ctx, http.MethodGet, repoArtifactHubPath(repo), nil, out)
	return out, resp, err
}

// SetArtifactHub replaces a repository's Artifact Hub metadata (admin
// role of the repository); an empty one removes it. A document Artifact
// Hub's schema refuses is a 400 invalid_parameter naming the place.
func (s *RepositoriesService) SetArtifactHub(ctx context.Context, repo string, meta *ArtifactHubRepo) (*ArtifactHubRepo, *Response, error) {
	if meta == nil {
		meta = &ArtifactHubRepo{}
	}
	out := new(ArtifactHubRepo)
	resp, err := s.client.call(ctx, http.MethodPut, repoArtifactHubPath(repo), meta, out)
	return out, resp, err
}

// SetArtifactHubYAML replaces a repository's Artifact Hub metadata with
// an artifacthub-repo.yml file as it is (sent as application/yaml).
func (s *RepositoriesService) SetArtifactHubYAML(ctx context.Context, repo string, file []byte) (*ArtifactHubRepo, *Response, error) {
	req, err := s.client.newRequest(http.MethodPut, repoArtifactHubPath(repo), bytes.NewReader(file))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/yaml")
	out := new(ArtifactHubRepo)
	resp, err := s.client.Do(ctx, req, out)
	return out, resp, err
}

// ArtifactHubFile returns a repository's artifacthub-repo.yml as the
// server writes it (the bytes Artifact Hub reads); "{}\n" when none is
// set.
func (s *RepositoriesService) ArtifactHubFile(ctx context.Context, repo string) ([]byte, *Response, error) {
	req, err := s.client.newRequest(http.MethodGet, repoArtifactHubPath(repo), nil)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Accept", "application/yaml")
	var buf bytes.Buffer
	resp, err := s.client.Do(ctx, req, &buf)
	if err != nil {
		return nil, resp, err
	}
	return buf.Bytes(), resp, nil
}
