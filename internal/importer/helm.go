package importer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/chartctl/chartctl/internal/text"
)

// DefaultMaxIndexSize is the largest index a HelmSource reads unless
// told otherwise (the server's --upstream-index-max-size and import's
// --index-max-size default to it).
const DefaultMaxIndexSize = 64 << 20

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
	// MaxIndexSize is the largest index.yaml read (0:
	// DefaultMaxIndexSize); a larger one is refused, naming
	// MaxIndexSizeFlag, the setting that raises it ("--index-max-size").
	MaxIndexSize     int64
	MaxIndexSizeFlag string
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

// errTooLarge is what sizeLimit's reads return past the limit.
var errTooLarge = errors.New("index too large")

// sizeLimit reads from r until more than n bytes have been read, then
// fails with errTooLarge, whatever is reading it. It keeps r's first
// failure (a cut connection) in failed, to tell it from a bad index.
type sizeLimit struct {
	r      io.Reader
	n      int64
	failed error
}

func (l *sizeLimit) Read(p []byte) (int, error) {
	if l.n < 0 {
		return 0, errTooLarge
	}
	if int64(len(p)) > l.n+1 {
		p = p[:l.n+1]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	if l.n < 0 {
		return n, errTooLarge
	}
	if err != nil && err != io.EOF && l.failed == nil {
		l.failed = err
	}
	return n, err
}

// Versions reads index.yaml and lists every version in it. The index is
// read as it arrives, keeping only what each version's copy needs
// (decodeIndex), and refused past MaxIndexSize.
func (s *HelmSource) Versions(ctx context.Context) ([]*Version, error) {
	idxURL := s.base().JoinPath("index.yaml")
	body, size, err := s.fetch(ctx, idxURL)
	if err != nil {
		return nil, fmt.Errorf("read the index of %s: %w", s, err)
	}
	defer body.Close()
	limit := s.MaxIndexSize
	if limit <= 0 {
		limit = DefaultMaxIndexSize
	}
	tooLarge := func() error {
		msg := fmt.Sprintf("the index of %s is larger than %s", s, text.HumanBytes(limit))
		if s.MaxIndexSizeFlag != "" {
			msg += ", the limit set by " + s.MaxIndexSizeFlag
		}
		return errors.New(msg)
	}
	if size > limit {
		return nil, tooLarge()
	}
	var out []*Version
	base := s.base()
	lim := &sizeLimit{r: body, n: limit}
	apiVersion, hasEntries, err := decodeIndex(lim, func(chart string, e *indexEntry) {
		out = append(out, s.version(base, chart, e))
	})
	switch {
	case errors.Is(err, errTooLarge):
		return nil, tooLarge()
	case err != nil && lim.failed != nil:
		return nil, fmt.Errorf("read the index of %s: %w", s, lim.failed)
	case errors.Is(err, errNotIndex):
		// The error says "not a Helm repository index" and why.
		return nil, fmt.Errorf("%s: %w", idxURL.Redacted(), err)
	case err != nil:
		return nil, fmt.Errorf("%s is not a Helm repository index: %w", idxURL.Redacted(), err)
	case apiVersion == "" && !hasEntries:
		return nil, fmt.Errorf("%s is not a Helm repository index (no apiVersion, no entries)", idxURL.Redacted())
	}
	return out, nil
}

// version turns an index entry listed under chart into a Version. Only
// strings are kept (the chart's URL is resolved again when it is
// opened), since an index may list hundreds of thousands of versions.
func (s *HelmSource) version(base *url.URL, chart string, e *indexEntry) *Version {
	name := e.Name
	if name == "" || name == chart {
		name = chart // one string for every version of the chart
	}
	v := &Version{Name: name, Version: e.Version, Digest: e.Digest, Created: parseCreated(e.Created), helm: s}
	if len(e.URLs) == 0 {
		v.Location = name + " " + e.Version
		v.bad = "the index lists no URL for " + name + " " + e.Version
		return v
	}
	ref, err := url.Parse(e.URLs[0])
	if err != nil {
		v.Location = e.URLs[0]
		v.bad = fmt.Sprintf("bad chart URL %q in the index: %v", e.URLs[0], err)
		return v
	}
	u := base.ResolveReference(ref)
	v.Location = u.Redacted()
	if u.User != nil {
		v.url = u.String()
	}
	return v
}

// openHelm opens a version's archive (prov: its provenance file), the
// URL Location names.
func (s *HelmSource) openHelm(ctx context.Context, v *Version, prov bool) (io.ReadCloser, error) {
	if v.bad != "" {
		if prov {
			return nil, fmt.Errorf("%s %s: no provenance file: %w", v.Name, v.Version, ErrNotFound)
		}
		return nil, errors.New(v.bad)
	}
	raw := v.Location
	if v.url != "" {
		raw = v.url
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	if prov {
		u.Path += ".prov"
		u.RawPath = ""
	}
	return s.get(ctx, u)
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
	body, _, err := s.fetch(ctx, u)
	return body, err
}

// fetch is get that also returns the answer's Content-Length (-1 when
// unknown).
func (s *HelmSource) fetch(ctx context.Context, u *url.URL) (io.ReadCloser, int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, -1, err
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
		return nil, -1, err
	}
	if resp.StatusCode == http.StatusOK {
		return resp.Body, resp.ContentLength, nil
	}
	resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusNotFound:
		return nil, -1, fmt.Errorf("%s: %w (404)", u.Redacted(), ErrNotFound)
	case http.StatusUnauthorized, http.StatusForbidden:
		hint := s.AuthHint
		if hint == "" {
			hint = "the credentials are missing or were refused"
		}
		return nil, -1, fmt.Errorf("%s answered %s: %s", u.Redacted(), resp.Status, hint)
	}
	return nil, -1, fmt.Errorf("%s answered %s", u.Redacted(), resp.Status)
}
