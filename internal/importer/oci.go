package importer

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/errcode"
)

// The media types Helm pushes a chart with.
const (
	helmConfigMediaType = "application/vnd.cncf.helm.config.v1+json"
	helmChartMediaType  = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
	helmProvMediaType   = "application/vnd.cncf.helm.chart.provenance.v1.prov"
	// maxManifestSize bounds a manifest or config read from a registry.
	maxManifestSize = 4 << 20
)

// OCISource is an OCI registry path holding Helm charts, as `helm push`
// lays them out: oci://HOST/PATH is either one chart's repository (its
// tags are the versions) or a namespace whose child repositories are
// charts (found through the registry's catalog).
type OCISource struct {
	Host string
	Path string
	// PlainHTTP talks HTTP instead of HTTPS to the registry.
	PlainHTTP bool
	client    *auth.Client
	// authorization is the source's credential as an Authorization
	// header value ("" without one), sent unasked to the catalog.
	authorization string
}

// NewOCISource returns the source at ref ("oci://HOST/PATH").
func NewOCISource(ref string, a Auth, hc *http.Client, plainHTTP bool) (*OCISource, error) {
	rest, ok := strings.CutPrefix(ref, "oci://")
	host, path, _ := strings.Cut(rest, "/")
	path = strings.Trim(path, "/")
	if !ok || host == "" || path == "" {
		return nil, fmt.Errorf("%q is not an OCI reference of the form oci://HOST/PATH", ref)
	}
	if hc == nil {
		hc = http.DefaultClient
	}
	cred := auth.Credential{Username: a.Username, Password: a.Password, AccessToken: a.Token}
	c := &auth.Client{Client: hc, Cache: auth.NewCache(), Credential: auth.StaticCredential(host, cred)}
	src := &OCISource{Host: host, Path: path, PlainHTTP: plainHTTP, client: c}
	switch {
	case a.Token != "":
		src.authorization = "Bearer " + a.Token
	case a.Username != "" || a.Password != "":
		src.authorization = "Basic " + base64.StdEncoding.EncodeToString([]byte(a.Username+":"+a.Password))
	}
	return src, nil
}

// presetAuth sends a credential with every request instead of waiting to
// be challenged for it (auth.Client passes such requests through).
type presetAuth struct {
	next          remote.Client
	authorization string
}

// Do sends req with the credential.
func (p presetAuth) Do(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", p.authorization)
	return p.next.Do(req)
}

// String returns the reference.
func (s *OCISource) String() string { return "oci://" + s.Host + "/" + s.Path }

func (s *OCISource) repository(name string) (*remote.Repository, error) {
	r, err := remote.NewRepository(s.Host + "/" + name)
	if err != nil {
		return nil, err
	}
	r.PlainHTTP = s.PlainHTTP
	r.Client = s.client
	return r, nil
}

// Versions lists every tag of every chart repository at the path.
func (s *OCISource) Versions(ctx context.Context) ([]*Version, error) {
	repos, err := s.repositories(ctx)
	if err != nil {
		return nil, err
	}
	var out []*Version
	for _, name := range repos {
		r, err := s.repository(name)
		if err != nil {
			return nil, err
		}
		var tags []string
		err = r.Tags(ctx, "", func(ts []string) error {
			tags = append(tags, ts...)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("list the tags of %s/%s: %w", s.Host, name, err)
		}
		for _, tag := range tags {
			out = append(out, s.version(ctx, r, name, tag))
		}
	}
	return out, nil
}

// repositories returns the path itself when it has tags, and the
// catalog's repositories below it.
func (s *OCISource) repositories(ctx context.Context) ([]string, error) {
	var repos []string
	r, err := s.repository(s.Path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s, err)
	}
	tagErr := r.Tags(ctx, "", func(ts []string) error {
		if len(ts) > 0 {
			repos = []string{s.Path}
		}
		return nil
	})
	reg, err := remote.NewRegistry(s.Host)
	if err != nil {
		return nil, err
	}
	reg.PlainHTTP = s.PlainHTTP
	below := func(rs []string) error {
		for _, name := range rs {
			if strings.HasPrefix(name, s.Path+"/") {
				repos = append(repos, name)
			}
		}
		return nil
	}
	// A registry may answer the catalog to anyone, listing to each caller
	// what it may read (chartctl, zot): asked anonymously it lists no
	// private repository and never challenges for the credential. So the
	// credential goes with the catalog request; a registry that takes it
	// only through its token flow refuses that, and is asked the usual
	// way.
	catErr, tagged := errNoCredential, len(repos)
	if s.authorization != "" {
		reg.Client = presetAuth{next: s.client, authorization: s.authorization}
		catErr = reg.Repositories(ctx, "", below)
	}
	if catErr != nil {
		repos = repos[:tagged] // drop a partial listing
		reg.Client = s.client
		catErr = reg.Repositories(ctx, "", below)
	}
	if len(repos) > 0 {
		return repos, nil
	}
	if tagErr != nil && !isNameUnknown(tagErr) {
		return nil, fmt.Errorf("list the tags of %s: %w", s, tagErr)
	}
	if catErr != nil {
		return nil, fmt.Errorf("%s has no tags and the registry's catalog cannot list the repositories below it: %w", s, catErr)
	}
	return nil, fmt.Errorf("%s holds no charts", s)
}

// errNoCredential marks a catalog not yet asked with the credential.
var errNoCredential = errors.New("no credential")

func isNameUnknown(err error) bool {
	var er *errcode.ErrorResponse
	if errors.As(err, &er) {
		return er.StatusCode == http.StatusNotFound
	}
	return false
}

// helmConfig is the part of a Helm chart's OCI config we need.
type helmConfig struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// version reads one tag's manifest and config; a tag that is not a Helm
// chart becomes a Version whose download fails with the reason.
func (s *OCISource) version(ctx context.Context, r *remote.Repository, repo, tag string) *Version {
	v := &Version{Name: repo[strings.LastIndex(repo, "/")+1:], Version: strings.ReplaceAll(tag, "_", "+"),
		Location: s.Host + "/" + repo + ":" + tag}
	fail := func(err error) *Version {
		v.open = func(context.Context) (io.ReadCloser, error) { return nil, err }
		return v
	}
	desc, rc, err := r.FetchReference(ctx, tag)
	if err != nil {
		return fail(fmt.Errorf("fetch the manifest: %w", err))
	}
	b, err := content.ReadAll(io.LimitReader(rc, maxManifestSize), desc)
	rc.Close()
	if err != nil {
		return fail(fmt.Errorf("read the manifest: %w", err))
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(b, &m); err != nil || m.Config.MediaType != helmConfigMediaType {
		return fail(errors.New("not a Helm chart (the manifest's config is not " + helmConfigMediaType + ")"))
	}
	if cb, err := s.fetchSmall(ctx, r, m.Config); err == nil {
		var hc helmConfig
		if json.Unmarshal(cb, &hc) == nil && hc.Name != "" && hc.Version != "" {
			v.Name, v.Version = hc.Name, hc.Version
		}
	}
	if t, err := time.Parse(time.RFC3339Nano, m.Annotations[ocispec.AnnotationCreated]); err == nil {
		v.Created = t
	}
	var chartLayer, provLayer *ocispec.Descriptor
	for i := range m.Layers {
		switch m.Layers[i].MediaType {
		case helmChartMediaType:
			chartLayer = &m.Layers[i]
		case helmProvMediaType:
			provLayer = &m.Layers[i]
		}
	}
	if chartLayer == nil {
		return fail(errors.New("the manifest has no chart layer (" + helmChartMediaType + ")"))
	}
	if chartLayer.Digest.Algorithm() == "sha256" {
		v.Digest = chartLayer.Digest.Encoded()
	}
	cl := *chartLayer
	v.open = func(ctx context.Context) (io.ReadCloser, error) { return r.Fetch(ctx, cl) }
	v.openProv = func(ctx context.Context) (io.ReadCloser, error) {
		if provLayer == nil {
			return nil, ErrNotFound
		}
		return r.Fetch(ctx, *provLayer)
	}
	return v
}

func (s *OCISource) fetchSmall(ctx context.Context, r *remote.Repository, d ocispec.Descriptor) ([]byte, error) {
	if d.Size > maxManifestSize {
		return nil, fmt.Errorf("%s is too large", d.Digest)
	}
	rc, err := r.Fetch(ctx, d)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return content.ReadAll(rc, d)
}
