package testkit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// The media types of a Helm chart pushed over OCI (as the registry
// package names them; repeated here so that testkit does not import it).
const (
	helmConfigType = "application/vnd.cncf.helm.config.v1+json"
	helmChartType  = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
)

// OCIChart is one chart version as `helm push oci://` sends it: the
// config (the chart's metadata as JSON), the archive, and the image
// manifest over both, without a top-level mediaType (as Helm 4.3 sends
// it).
type OCIChart struct {
	Name, Tag                 string
	Config, Archive, Manifest []byte
	ManifestDigest            string
}

// NewOCIChart makes the config and manifest of version version of chart
// name, whose archive is archive. The config differs from one version to
// the next, as Helm's does.
func NewOCIChart(name, version string, archive []byte) (*OCIChart, error) {
	config, err := json.Marshal(map[string]string{"apiVersion": "v2", "name": name, "version": version})
	if err != nil {
		return nil, err
	}
	m, err := json.Marshal(ocispec.Manifest{Versioned: specs.Versioned{SchemaVersion: 2},
		Config: ocispec.Descriptor{MediaType: helmConfigType, Digest: digest.FromBytes(config), Size: int64(len(config))},
		Layers: []ocispec.Descriptor{{MediaType: helmChartType, Digest: digest.FromBytes(archive), Size: int64(len(archive))}}})
	if err != nil {
		return nil, err
	}
	return &OCIChart{Name: name, Tag: strings.ReplaceAll(version, "+", "_"), Config: config, Archive: archive,
		Manifest: m, ManifestDigest: digest.FromBytes(m).String()}, nil
}

// PushLikeHelm pushes c to repository repo of the registry at base
// (scheme://host) with client and the HTTP Basic credentials user and
// password, sending the requests Helm 4.3 and 3.22 send (oras-go's
// ExtendedCopy, as chartctl's request log shows): a HEAD of the manifest
// by digest; for the config and the archive at the same time a HEAD, a
// POST that opens an upload session and a PUT of the whole blob; the PUT
// of the manifest by digest, its GET, and its PUT by tag. (A `helm push`
// process also exchanges its credentials for a token first, once.)
func PushLikeHelm(client *http.Client, base, repo, user, password string, c *OCIChart) error {
	p := &helmPusher{client: client, base: base, user: user, password: password}
	p.name = "/v2/" + repo + "/" + c.Name
	manifest := p.name + "/manifests/" + c.ManifestDigest
	if _, err := p.do("HEAD", manifest, nil, http.StatusNotFound); err != nil {
		return err
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, blob := range [][]byte{c.Config, c.Archive} {
		wg.Go(func() { errs[i] = p.pushBlob(blob) })
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil {
		return fmt.Errorf("push blobs: %v, %v", errs[0], errs[1])
	}
	mt := []string{"Content-Type", ocispec.MediaTypeImageManifest}
	if _, err := p.do("PUT", manifest, c.Manifest, http.StatusCreated, mt...); err != nil {
		return err
	}
	if _, err := p.do("GET", manifest, nil, http.StatusOK, "Accept", ocispec.MediaTypeImageManifest); err != nil {
		return err
	}
	_, err := p.do("PUT", p.name+"/manifests/"+c.Tag, c.Manifest, http.StatusCreated, mt...)
	return err
}

// helmPusher sends the requests of one push; name is the path of the
// chart's OCI name, /v2/<repository>/<chart>.
type helmPusher struct {
	client         *http.Client
	base, name     string
	user, password string
}

// pushBlob pushes blob as oras-go does: HEAD, POST, PUT.
func (p *helmPusher) pushBlob(blob []byte) error {
	d := digest.FromBytes(blob).String()
	if _, err := p.do("HEAD", p.name+"/blobs/"+d, nil, http.StatusNotFound); err != nil {
		return err
	}
	resp, err := p.do("POST", p.name+"/blobs/uploads/", nil, http.StatusAccepted)
	if err != nil {
		return err
	}
	loc, sep := resp.Header.Get("Location"), "?"
	if strings.Contains(loc, "?") {
		sep = "&"
	}
	_, err = p.do("PUT", loc+sep+"digest="+d, blob, http.StatusCreated, "Content-Type", "application/octet-stream")
	return err
}

// do sends method to target (a path on the registry, or the absolute URL
// a Location header may give) and wants status want.
func (p *helmPusher) do(method, target string, body []byte, want int, header ...string) (*http.Response, error) {
	if strings.HasPrefix(target, "/") {
		target = p.base + target
	}
	req, err := http.NewRequest(method, target, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.SetBasicAuth(p.user, p.password)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != want {
		return nil, fmt.Errorf("%s %s: %d, want %d: %s", method, req.URL.Path, resp.StatusCode, want, out)
	}
	return resp, nil
}
