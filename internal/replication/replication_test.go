package replication_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/chartctl/chartctl/internal/cmd/serve"
	"github.com/chartctl/chartctl/internal/ociclient"
	"github.com/chartctl/chartctl/internal/ratelimit"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/internal/testkit/disttest"
)

// chartctl is a `chartctl serve` run in the test's process on a data
// directory and address of its own, which can be stopped and started
// again (the same data, the same address).
type chartctl struct {
	t    *testing.T
	cfg  *serve.Config
	URL  string
	Key  string
	stop func()
}

func startChartctl(t *testing.T, edit func(*serve.Config)) *chartctl {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cfg := serve.DefaultConfig()
	cfg.Addr, cfg.Data = addr, t.TempDir()
	cfg.RateLimitGlobal, cfg.RateLimitUpload, cfg.RateLimitSearch = ratelimit.Limit{}, ratelimit.Limit{}, ratelimit.Limit{}
	if edit != nil {
		edit(&cfg)
	}
	c := &chartctl{t: t, cfg: &cfg}
	c.Start()
	t.Cleanup(c.Stop)
	b, err := os.ReadFile(filepath.Join(cfg.Data, serve.InitialAdminFile))
	if err != nil {
		t.Fatal(err)
	}
	var admin serve.InitialAdmin
	if err := json.Unmarshal(b, &admin); err != nil {
		t.Fatal(err)
	}
	c.Key = admin.APIKey
	return c
}

// Start starts the server (again).
func (c *chartctl) Start() {
	c.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- serve.Run(ctx, &serve.Options{Config: *c.cfg, Stderr: io.Discard, Ready: func(u string) { ready <- u }})
	}()
	select {
	case c.URL = <-ready:
	case err := <-done:
		cancel()
		c.t.Fatalf("chartctl did not start: %v", err)
	}
	c.stop = func() {
		cancel()
		<-done
	}
}

// Stop stops the server.
func (c *chartctl) Stop() {
	if c.stop != nil {
		c.stop()
		c.stop = nil
	}
}

func (c *chartctl) Host() string { return strings.TrimPrefix(c.URL, "http://") }

// do sends a /v1 request with the admin key and returns status and body.
func (c *chartctl) do(method, path string, body io.Reader, ctype string) (int, []byte) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.URL+path, body)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+c.Key)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func (c *chartctl) json(method, path string, v any) (int, []byte) {
	c.t.Helper()
	var body io.Reader
	if v != nil {
		b, _ := json.Marshal(v)
		body = bytes.NewReader(b)
	}
	return c.do(method, path, body, "application/json")
}

func (c *chartctl) must(method, path string, v any) []byte {
	c.t.Helper()
	st, b := c.json(method, path, v)
	if st != 200 {
		c.t.Fatalf("%s %s: %d %s", method, path, st, b)
	}
	return b
}

func (c *chartctl) upload(repo string, archive []byte) {
	c.t.Helper()
	body, ctype := testkit.Multipart(c.t, map[string][]byte{"chart": archive})
	if st, b := c.do(http.MethodPost, "/v1/repositories/"+repo+"/charts", bytes.NewReader(body), ctype); st != 200 {
		c.t.Fatalf("upload to %s: %d %s", repo, st, b)
	}
}

type status struct {
	Data struct {
		Pending       int        `json:"pending"`
		Failed        int        `json:"failed"`
		LastSuccessAt *time.Time `json:"last_success_at"`
		LastError     *string    `json:"last_error"`
	} `json:"data"`
}

func (c *chartctl) status(name string) status {
	c.t.Helper()
	var st status
	if err := json.Unmarshal(c.must(http.MethodGet, "/v1/replications/"+name+"/status", nil), &st); err != nil {
		c.t.Fatal(err)
	}
	return st
}

// eventually polls cond until it holds; arrival is checked eventually
// (decision 17), within a bound far above any expected lag, never a
// timed assertion of speed.
func eventually(t *testing.T, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for time.Since(start) < 2*time.Minute {
		if cond() {
			return time.Since(start)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s: not within 2 minutes", what)
	return 0
}

// TestReplication pushes to chartctl A and finds the version in CNCF
// Distribution (through OCI) and in a second chartctl B (through its
// ChartMuseum API), byte for byte, with a signature referring to it
// alongside; a push made while B is stopped arrives after B restarts;
// a delete is replicated with on: delete.
func TestReplication(t *testing.T) {
	dist := disttest.Start(t, disttest.Options{Username: "ci", Password: "dist-secret"})
	b := startChartctl(t, nil)
	b.must(http.MethodPost, "/v1/repositories", map[string]string{"name": "mirror", "visibility": "public"})
	a := startChartctl(t, func(c *serve.Config) {
		c.AllowPrivateUpstreams = serve.PrivateAllowance{All: true}
		c.PlainHTTPUpstreams = []string{dist.Host}
	})
	// B's address is only known now; A learns it is plain http by a
	// restart with the list (as an operator would set the flag).
	a.Stop()
	a.cfg.PlainHTTPUpstreams = []string{dist.Host, b.Host()}
	a.Start()
	a.must(http.MethodPost, "/v1/repositories", map[string]string{"name": "acme", "visibility": "private"})
	a.must(http.MethodPost, "/v1/replications", map[string]any{"name": "to-dist", "source": "acme", "target": "oci://" + dist.Host + "/dr/acme",
		"username": "ci", "password": "dist-secret", "on": []string{"push", "delete"}})
	a.must(http.MethodPost, "/v1/replications", map[string]any{"name": "to-b", "source": "acme", "target": "http://" + b.Host() + "/helm/mirror",
		"username": "admin", "password": b.Key, "on": []string{"push", "delete"}, "filter": map[string]string{"name": "web*", "version": ">=1.0.0"}})

	ctx := context.Background()
	distClient, err := ociclient.New(ociclient.Options{Host: dist.Host, PlainHTTP: true, AllowPrivate: true, Username: "ci", Password: "dist-secret"})
	if err != nil {
		t.Fatal(err)
	}
	archive := testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "1.0.0"})
	pushed := time.Now()
	a.upload("acme", archive)
	a.upload("acme", testkit.MakeChart(t, testkit.Chart{Name: "other", Version: "1.0.0"}))
	a.upload("acme", testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "0.9.0"}))

	inDist := func(repo, tag string) bool {
		_, err := distClient.HeadManifest(ctx, repo, tag)
		return err == nil
	}
	lagDist := eventually(t, "web 1.0.0 in Distribution", func() bool { return inDist("dr/acme/web", "1.0.0") })
	inB := func(name, version string) bool {
		st, _ := b.json(http.MethodGet, "/v1/repositories/mirror/charts/"+name+"/"+version, nil)
		return st == 200
	}
	lagB := eventually(t, "web 1.0.0 in chartctl B", func() bool { return inB("web", "1.0.0") })
	t.Logf("replication lag after the push: Distribution %v, chartctl B %v (since %s)", lagDist, lagB, pushed.Format(time.RFC3339Nano))

	// Byte for byte: the archive layer in Distribution, the archive B
	// serves.
	_, man, err := distClient.Manifest(ctx, "dr/acme/web", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(man, &m); err != nil {
		t.Fatal(err)
	}
	var layer *ocispec.Descriptor
	for i := range m.Layers {
		if m.Layers[i].MediaType == "application/vnd.cncf.helm.chart.content.v1.tar+gzip" {
			layer = &m.Layers[i]
		}
	}
	if layer == nil || layer.Digest != digest.FromBytes(archive) {
		t.Fatalf("Distribution's manifest %s has no layer with the archive's digest %s", man, digest.FromBytes(archive))
	}
	rc, err := distClient.Blob(ctx, "dr/acme/web", *layer)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || !bytes.Equal(got, archive) {
		t.Fatalf("archive in Distribution: %d bytes, %v; want the %d pushed", len(got), err, len(archive))
	}
	st, got := b.do(http.MethodGet, "/helm/mirror/charts/web-1.0.0.tgz", nil, "")
	if st != 200 || !bytes.Equal(got, archive) {
		t.Fatalf("archive in B: %d, %d bytes; want the %d pushed", st, len(got), len(archive))
	}
	// The filter kept other and web 0.9.0 from B; Distribution took all.
	eventually(t, "other 1.0.0 in Distribution", func() bool { return inDist("dr/acme/other", "1.0.0") })
	if a.status("to-b").Data.Pending != 0 {
		eventually(t, "to-b drained", func() bool { return a.status("to-b").Data.Pending == 0 })
	}
	if inB("other", "1.0.0") || inB("web", "0.9.0") {
		t.Fatal("B received versions its replication's filter leaves out")
	}

	// A signature pushed to A over OCI, referring to the version's
	// manifest, goes along on the next run.
	aClient, err := ociclient.New(ociclient.Options{Host: a.Host(), PlainHTTP: true, AllowPrivate: true, Username: "admin", Password: a.Key})
	if err != nil {
		t.Fatal(err)
	}
	subject, err := aClient.HeadManifest(ctx, "acme/web", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	sig := pushSignature(t, aClient, "acme/web", subject)
	var run struct {
		Data struct{ Queued int } `json:"data"`
	}
	if err := json.Unmarshal(a.must(http.MethodPost, "/v1/replications/to-dist/run", nil), &run); err != nil || run.Data.Queued != 3 {
		t.Fatalf("run queued %d, %v; want the 3 versions", run.Data.Queued, err)
	}
	eventually(t, "the signature in Distribution", func() bool {
		refs, err := distClient.Referrers(ctx, "dr/acme/web", subject)
		if err != nil {
			return false
		}
		for _, r := range refs {
			if r.Digest == sig.Digest {
				return true
			}
		}
		return false
	})

	// B stopped during a push: the task waits, retried, and arrives
	// after B restarts.
	b.Stop()
	a.upload("acme", testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "1.1.0"}))
	eventually(t, "a failed attempt at B", func() bool {
		s := a.status("to-b").Data
		return s.Pending == 1 && s.LastError != nil
	})
	b.Start()
	lagRestart := eventually(t, "web 1.1.0 in B after its restart", func() bool { return inB("web", "1.1.0") })
	t.Logf("replication lag after B restarted: %v", lagRestart)
	eventually(t, "to-b drained after the restart", func() bool {
		s := a.status("to-b").Data
		return s.Pending == 0 && s.LastError == nil && s.LastSuccessAt != nil
	})

	// A delete is replicated to both.
	a.must(http.MethodDelete, "/v1/repositories/acme/charts/web/1.0.0", nil)
	eventually(t, "web 1.0.0 deleted in Distribution", func() bool { return !inDist("dr/acme/web", "1.0.0") })
	eventually(t, "web 1.0.0 deleted in B", func() bool { return !inB("web", "1.0.0") })
	if !inB("web", "1.1.0") || !inDist("dr/acme/web", "1.1.0") {
		t.Fatal("the delete took other versions along")
	}
}

// pushSignature pushes an OCI 1.1 signature artifact referring to
// subject.
func pushSignature(t *testing.T, c *ociclient.Client, repo string, subject ocispec.Descriptor) ocispec.Descriptor {
	t.Helper()
	ctx := context.Background()
	payload := []byte("signature of " + subject.Digest.String())
	layer := ocispec.Descriptor{MediaType: "application/vnd.dev.cosign.simplesigning.v1+json", Digest: digest.FromBytes(payload), Size: int64(len(payload))}
	if err := c.PushBlob(ctx, repo, layer, bytes.NewReader(payload)); err != nil {
		t.Fatal(err)
	}
	empty := ocispec.DescriptorEmptyJSON
	if err := c.PushBlob(ctx, repo, empty, bytes.NewReader(empty.Data)); err != nil {
		t.Fatal(err)
	}
	s := subject
	b, _ := json.Marshal(ocispec.Manifest{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageManifest,
		ArtifactType: "application/vnd.dev.cosign.artifact.sig.v1+json", Config: ocispec.Descriptor{MediaType: empty.MediaType, Digest: empty.Digest, Size: empty.Size},
		Layers: []ocispec.Descriptor{layer}, Subject: &ocispec.Descriptor{MediaType: s.MediaType, Digest: s.Digest, Size: s.Size}})
	d, err := c.PushManifest(ctx, repo, "", ocispec.MediaTypeImageManifest, b)
	if err != nil {
		t.Fatalf("push signature: %v", err)
	}
	return d
}

// TestPrivateTargetRefused: without --allow-private-upstreams a target
// at a literal private address is refused when the replication is made,
// and one whose name resolves to loopback when the copy connects, the
// status saying which flag allows it.
func TestPrivateTargetRefused(t *testing.T) {
	a := startChartctl(t, nil)
	a.must(http.MethodPost, "/v1/repositories", map[string]string{"name": "acme"})
	for _, target := range []string{"oci://127.0.0.1:5000/x", "oci://10.1.2.3/x", "oci://[::1]:5000/x"} {
		st, body := a.json(http.MethodPost, "/v1/replications", map[string]any{"name": "r", "source": "acme", "target": target})
		if st != 400 || !strings.Contains(string(body), "--allow-private-upstreams") || !strings.Contains(string(body), `"parameter":"target"`) {
			t.Fatalf("target %s: %d %s; want 400 naming the flag", target, st, body)
		}
	}
	a.must(http.MethodPost, "/v1/replications", map[string]any{"name": "r", "source": "acme", "target": "oci://localhost:5000/x"})
	a.upload("acme", testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "1.0.0"}))
	eventually(t, "a refused attempt", func() bool {
		s := a.status("r").Data
		return s.LastError != nil && strings.Contains(*s.LastError, "--allow-private-upstreams")
	})
	if s := a.status("r").Data; s.Pending != 1 || s.LastSuccessAt != nil {
		t.Fatalf("status = %+v; want the task still pending", s)
	}
}
