package scale_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chartctl/chartctl/bench/corpus"
	"github.com/chartctl/chartctl/internal/testkit"
)

// The media types of a Helm chart pushed over OCI.
const (
	helmConfigType = "application/vnd.cncf.helm.config.v1+json"
	helmChartType  = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
	ociManifest    = "application/vnd.oci.image.manifest.v1+json"
)

// ociPush is one chart prepared for a push over OCI as Helm makes it.
type ociPush struct {
	name, tag                  string
	config, archive, manifest  []byte
	configD, layerD, manifestD string
}

func sha256Of(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

// prepareOCI makes the manifest, config and layer of each chart as Helm
// does: the config is the chart's metadata as JSON.
func prepareOCI(b *testing.B, charts []corpus.Chart) []ociPush {
	b.Helper()
	out := make([]ociPush, len(charts))
	for i, c := range charts {
		config, err := json.Marshal(map[string]any{"apiVersion": "v2", "name": c.Name, "version": c.Version,
			"appVersion": c.AppVersion, "description": c.Description, "keywords": c.Keywords})
		if err != nil {
			b.Fatal(err)
		}
		p := ociPush{name: c.Name, tag: strings.ReplaceAll(c.Version, "+", "_"), config: config, archive: c.Archive,
			configD: sha256Of(config), layerD: sha256Of(c.Archive)}
		p.manifest = fmt.Appendf(nil, `{"schemaVersion":2,"config":{"mediaType":%q,"digest":%q,"size":%d},"layers":[{"mediaType":%q,"digest":%q,"size":%d}]}`,
			helmConfigType, p.configD, len(config), helmChartType, p.layerD, len(c.Archive))
		p.manifestD = sha256Of(p.manifest)
		out[i] = p
	}
	return out
}

// ociDo sends one registry request with the API key as HTTP Basic
// credentials and wants status want.
func (d *deployment) ociDo(method, url string, body []byte, want int, header ...string) (*http.Response, error) {
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.SetBasicAuth("ci", d.key)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != want {
		return nil, fmt.Errorf("%s %s: %d, want %d: %s", method, url, resp.StatusCode, want, out)
	}
	return resp, nil
}

// pushBlob pushes one blob as oras-go does: HEAD, POST, PUT.
func (d *deployment) pushBlob(base, digest string, blob []byte) error {
	if _, err := d.ociDo("HEAD", base+"/blobs/"+digest, nil, http.StatusNotFound); err != nil {
		return err
	}
	resp, err := d.ociDo("POST", base+"/blobs/uploads/", nil, http.StatusAccepted)
	if err != nil {
		return err
	}
	loc := resp.Header.Get("Location")
	sep := "?"
	if strings.Contains(loc, "?") {
		sep = "&"
	}
	if strings.HasPrefix(loc, "/") {
		loc = base[:strings.Index(base, "/v2/")] + loc
	}
	_, err = d.ociDo("PUT", loc+sep+"digest="+digest, blob, http.StatusCreated, "Content-Type", "application/octet-stream")
	return err
}

// pushOCI pushes p to repo on url with the requests `helm push oci://`
// sends (Helm 4.3 and 3.22, oras-go's ExtendedCopy, as the server's
// request log shows): a HEAD of the manifest by digest; for the config
// and the chart layer at the same time a HEAD, a POST and a PUT; the PUT
// of the manifest by digest, its GET and its PUT by tag.
func (d *deployment) pushOCI(url, repo string, p ociPush) (time.Duration, error) {
	base := url + "/v2/" + repo + "/" + p.name
	start := time.Now()
	if _, err := d.ociDo("HEAD", base+"/manifests/"+p.manifestD, nil, http.StatusNotFound); err != nil {
		return 0, err
	}
	var wg sync.WaitGroup
	var cerr, lerr error
	wg.Go(func() { cerr = d.pushBlob(base, p.configD, p.config) })
	wg.Go(func() { lerr = d.pushBlob(base, p.layerD, p.archive) })
	wg.Wait()
	if cerr != nil || lerr != nil {
		return 0, fmt.Errorf("blobs: %v %v", cerr, lerr)
	}
	if _, err := d.ociDo("PUT", base+"/manifests/"+p.manifestD, p.manifest, http.StatusCreated, "Content-Type", ociManifest); err != nil {
		return 0, err
	}
	if _, err := d.ociDo("GET", base+"/manifests/"+p.manifestD, nil, http.StatusOK, "Accept", ociManifest); err != nil {
		return 0, err
	}
	if _, err := d.ociDo("PUT", base+"/manifests/"+p.tag, p.manifest, http.StatusCreated, "Content-Type", ociManifest); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// pushPair is one chart version to push through /v1 and another to push
// over OCI.
type pushPair struct {
	v1  upload
	oci ociPush
}

// pairCharts returns n pairs of the kind of chart named: "corpus", the
// bench corpus's ~3 KiB charts of four files (the charts of the other
// benchmarks here; `helm create` makes a 5 KiB chart of 12), or
// "minimal", a 0.5 KiB chart of a Chart.yaml, a two-line values.yaml and
// a six-line template (the registry's Go benchmarks push these).
func pairCharts(b *testing.B, kind string, n int) []pushPair {
	b.Helper()
	var v1s, ocis []corpus.Chart
	switch kind {
	case "corpus":
		var err error
		if v1s, err = corpus.Generate(n, 0); err != nil {
			b.Fatal(err)
		}
		if ocis, err = corpus.Generate(n, 1); err != nil {
			b.Fatal(err)
		}
	case "minimal":
		// The two protocols push to two repositories, so the same
		// versions serve both.
		for i := range n {
			c := corpus.Chart{Name: "minimal", Version: fmt.Sprintf("1.0.%d", i)}
			c.Archive = testkit.MakeChart(b, testkit.Chart{Name: c.Name, Version: c.Version})
			v1s, ocis = append(v1s, c), append(ocis, c)
		}
	}
	uploads, pushes := uploadsOf(b, v1s), prepareOCI(b, ocis)
	out := make([]pushPair, n)
	for i := range out {
		out[i] = pushPair{uploads[i], pushes[i]}
	}
	return out
}

// BenchmarkOCIPush: one pusher, chart versions pushed in turn through
// `/v1` (one multipart POST, as `chartctl chart push` sends it) and over
// OCI as Helm pushes them (nine requests), to a real `chartctl serve` in
// its own process. Both protocols run under the same load, a version each
// in turn, so their ratio (oci/v1) is not moved by the disk's drift.
func BenchmarkOCIPush(b *testing.B) {
	for _, mode := range modes {
		for _, kind := range []string{"corpus", "minimal"} {
			b.Run(mode+"/"+kind, func(b *testing.B) {
				d := deploy(b, mode)
				v1Repo, ociRepo := d.newRepo(b, "pair-v1"), d.newRepo(b, "pair-oci")
				pairs := pairCharts(b, kind, b.N)
				url := d.nodes[0].url
				var tv1, toci time.Duration
				b.ResetTimer()
				for _, p := range pairs {
					took, err := d.push(url, v1Repo, p.v1)
					if err != nil {
						b.Fatal(err)
					}
					tv1 += took
					if took, err = d.pushOCI(url, ociRepo, p.oci); err != nil {
						b.Fatal(err)
					}
					toci += took
				}
				b.StopTimer()
				b.ReportMetric(float64(tv1.Microseconds())/float64(b.N), "v1-µs/push")
				b.ReportMetric(float64(toci.Microseconds())/float64(b.N), "oci-µs/push")
				b.ReportMetric(float64(toci)/float64(tv1), "oci/v1")
			})
		}
	}
}
