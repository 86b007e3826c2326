package importer

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// maxIndexSize bounds a source's index.yaml.
const maxIndexSize = 256 << 20

// Auth is the credential for a source: basic auth (Username, Password) or
// a bearer Token. It is sent only to the source's own scheme and host, so
// charts an index lists on another host are fetched without it.
type Auth struct {
	Username string
	Password string
	Token    string
}

// HelmSource is a Helm chart repository read over HTTP(S): its index.yaml
// and every archive it lists. `chartctl import` and the server's mirror
// repositories (internal/mirror) both read upstreams with it.
type HelmSource struct {
	// URL is the repository's URL (index.yaml is read below it).
	URL  *url.URL
	Auth Auth
	// HTTP does the requests.
	HTTP *http.Client
	// AuthHint, if set, ends the message of a 401 or 403 answer: where
	// the credential comes from ("check --username…").
	AuthHint string
}

// NewHelmSource returns the Helm repository at rawURL; a URL ending in
// /index.yaml names the same repository.
func NewHelmSource(rawURL string, auth Auth, hc *http.Client) (*HelmSource, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q is not an http(s) URL of a Helm repository", rawURL)
	}
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/index.yaml"), "/")
	u.RawPath = ""
	if hc == nil {
		hc = http.DefaultClient
	}
	return &HelmSource{URL: u, Auth: auth, HTTP: hc}, nil
}

// String returns the repository's URL without credentials.
func (s *HelmSource) String() string { return s.URL.Redacted() }

// base is the URL relative chart URLs resolve against, as Helm resolves
// them: the repository URL with a trailing slash.
func (s *HelmSource) base() *url.URL {
	b := *s.URL
	b.Path += "/"
	return &b
}

type helmIndex struct {
	APIVersion string                      `json:"apiVersion"`
	Entries    map[string][]helmIndexEntry `json:"entries"`
}

type helmIndexEntry struct {
	Name    string   `json:"name"`
	Version string   `json:"version"`
	Created string   `json:"created"`
	Digest  string   `json:"digest"`
	URLs    []string `json:"urls"`
}

// Versions reads index.yaml and lists every version in it.
func (s *HelmSource) Versions(ctx context.Context) ([]*Version, error) {
	idxURL := s.base().JoinPath("index.yaml")
	rc, err := s.get(ctx, idxURL)
	if err != nil {
		return nil, fmt.Errorf("read the index of %s: %w", s, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, maxIndexSize+1))
	if err != nil {
		return nil, fmt.Errorf("read the index of %s: %w", s, err)
	}
	if len(b) > maxIndexSize {
		return nil, fmt.Errorf("the index of %s is larger than %d MiB", s, maxIndexSize>>20)
	}
	var idx helmIndex
	if err := yaml.Unmarshal(b, &idx); err != nil {
		return nil, fmt.Errorf("%s is not a Helm repository index: %w", idxURL.Redacted(), err)
	}
	if idx.APIVersion == "" && idx.Entries == nil {
		return nil, fmt.Errorf("%s is not a Helm repository index (no apiVersion, no entries)", idxURL.Redacted())
	}
	var out []*Version
	for name, entries := range idx.Entries {
		for _, e := range entries {
			if e.Name == "" {
				e.Name = name
			}
			v := &Version{Name: e.Name, Version: e.Version, Digest: e.Digest, Created: parseCreated(e.Created)}
			if len(e.URLs) == 0 {
				v.Location = e.Name + " " + e.Version
				v.open = func(context.Context) (io.ReadCloser, error) {
					return nil, fmt.Errorf("the index lists no URL for %s %s", e.Name, e.Version)
				}
				out = append(out, v)
				continue
			}
			ref, err := url.Parse(e.URLs[0])
			if err != nil {
				v.Location = e.URLs[0]
				v.open = func(context.Context) (io.ReadCloser, error) {
					return nil, fmt.Errorf("bad chart URL %q in the index: %v", e.URLs[0], err)
				}
				out = append(out, v)
				continue
			}
			chartURL := s.base().ResolveReference(ref)
			provURL := *chartURL
			provURL.Path += ".prov"
			provURL.RawPath = ""
			v.Location = chartURL.Redacted()
			v.open = func(ctx context.Context) (io.ReadCloser, error) { return s.get(ctx, chartURL) }
			v.openProv = func(ctx context.Context) (io.ReadCloser, error) { return s.get(ctx, &provURL) }
			out = append(out, v)
		}
	}
	return out, nil
}

// parseCreated reads an index's created time; Helm writes RFC 3339 with
// nanoseconds. An unreadable time is treated as absent.
func parseCreated(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(s))
	if err != nil {
		return time.Time{}
	}
	return t
}

// get fetches u, with the source's credential when u is on the source's
// own scheme and host. A 404 is ErrNotFound.
func (s *HelmSource) get(ctx context.Context, u *url.URL) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	if u.Scheme == s.URL.Scheme && u.Host == s.URL.Host {
		switch {
		case s.Auth.Token != "":
			req.Header.Set("Authorization", "Bearer "+s.Auth.Token)
		case s.Auth.Username != "" || s.Auth.Password != "":
			req.SetBasicAuth(s.Auth.Username, s.Auth.Password)
		}
	}
	resp, err := s.HTTP.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusOK {
		return resp.Body, nil
	}
	resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusNotFound:
		return nil, fmt.Errorf("%s: %w (404)", u.Redacted(), ErrNotFound)
	case http.StatusUnauthorized, http.StatusForbidden:
		hint := s.AuthHint
		if hint == "" {
			hint = "the credentials are missing or were refused"
		}
		return nil, fmt.Errorf("%s answered %s: %s", u.Redacted(), resp.Status, hint)
	}
	return nil, fmt.Errorf("%s answered %s", u.Redacted(), resp.Status)
}
