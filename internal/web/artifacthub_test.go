package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/chartctl/chartctl/internal/testkit"
)

// ahAnnotations is Chart.yaml's annotations block with every Artifact Hub
// annotation the chart page's Artifact Hub partial shows, one of them
// hostile.
const ahAnnotations = `annotations:
  artifacthub.io/category: database
  artifacthub.io/operator: "true"
  artifacthub.io/operatorCapabilities: Seamless Upgrades
  artifacthub.io/containsSecurityUpdates: "true"
  artifacthub.io/signKey: |
    fingerprint: 0011223344556677889900AABBCCDDEEFF001122
    url: https://keys.example.com/operator.asc
  artifacthub.io/images: |
    - name: operator
      image: ghcr.io/acme/operator:v2.0.0
      platforms: [linux/amd64, linux/arm64]
    - name: sidecar
      image: busybox:1.36
      whitelisted: true
  artifacthub.io/crds: |
    - kind: Cluster
      version: v1
      name: clusters.acme.example
      displayName: Database cluster
      description: One replicated database
  artifacthub.io/crdsExamples: |
    - apiVersion: acme.example/v1
      kind: Cluster
      metadata:
        name: demo
      spec:
        replicas: 3
  artifacthub.io/screenshots: |
    - title: Console
      url: https://acme.example/console.png
    - title: <script>window.__pwned=1</script>
      url: javascript:alert(1)
  artifacthub.io/recommendations: |
    - url: https://artifacthub.io/packages/helm/acme/backup
`

func uploadOperatorChart(t *testing.T, c *catalog) string {
	t.Helper()
	c.upload(t, "platform-charts", testkit.Chart{Name: "dbop", Version: "2.0.0", Description: "Database operator", Extra: ahAnnotations})
	return "/repositories/platform-charts/charts/dbop"
}

// TestChartPageShowsArtifactHubMetadata: the server-rendered chart page
// (no JavaScript) shows every Artifact Hub annotation of the version, as
// text and links, and a chart without them shows no Artifact Hub section.
func TestChartPageShowsArtifactHubMetadata(t *testing.T) {
	c := setupCatalog(t)
	path := uploadOperatorChart(t, c)
	p := c.NewBrowser(t).Get(t, path)
	if p.StatusCode != http.StatusOK {
		t.Fatalf("chart page: %d", p.StatusCode)
	}
	for _, want := range []string{
		`<dd id="ah-category">database</dd>`,
		`<dd id="ah-operator">yes · capabilities: Seamless Upgrades</dd>`,
		`id="ah-security">contains security updates</span>`,
		`id="ah-signkey" title="0011223344556677889900AABBCCDDEEFF001122">0011223344556677889900AABBCCDDEEFF001122</span> <a href="https://keys.example.com/operator.asc"`,
		`<span class="mono">ghcr.io/acme/operator:v2.0.0</span> <span class="muted small">operator</span><div class="muted small">linux/amd64, linux/arm64</div>`,
		`<span class="mono">busybox:1.36</span> <span class="muted small">sidecar</span> <span class="badge">whitelisted</span>`,
		`<span class="mono">Cluster v1</span> · Database cluster<div class="muted small mono">clusters.acme.example</div><div class="small">One replicated database</div>`,
		`<summary>Example Cluster <span class="muted small">acme.example/v1</span></summary>`,
		`replicas: 3`,
		`<a href="https://acme.example/console.png" rel="nofollow noopener noreferrer">Console</a>`,
		`<a href="https://artifacthub.io/packages/helm/acme/backup" rel="nofollow noopener noreferrer">https://artifacthub.io/packages/helm/acme/backup</a>`,
	} {
		if !strings.Contains(p.Body, want) {
			t.Errorf("the chart page lacks %s", want)
		}
	}
	if strings.Contains(p.Body, "javascript:") || strings.Contains(p.Body, "__pwned") || strings.Contains(p.Body, `<img src="https://acme.example`) {
		t.Error("a hostile or loaded screenshot is on the page")
	}
	plain := c.NewBrowser(t).Get(t, "/repositories/platform-charts/charts/redis")
	if plain.StatusCode != http.StatusOK || strings.Contains(plain.Body, `id="ah-`) {
		t.Errorf("a chart without Artifact Hub annotations: %d, Artifact Hub section shown: %v", plain.StatusCode, strings.Contains(plain.Body, `id="ah-`))
	}
}

// TestBrowserArtifactHubMetadataAccessible runs axe on a chart page with
// every Artifact Hub section, at desktop and phone width, in both colour
// schemes, with a CRD example opened.
func TestBrowserArtifactHubMetadataAccessible(t *testing.T) {
	axe := axeScript(t)
	c := setupCatalog(t)
	path := uploadOperatorChart(t, c)
	ctx := newBrowser(t)
	for _, scheme := range []string{"light", "dark"} {
		for _, size := range []struct {
			name string
			w, h int64
		}{{"desktop", 1280, 860}, {"phone", 390, 844}} {
			what := fmt.Sprintf("artifacthub-%s-%s", size.name, scheme)
			run(t, ctx, what,
				chromedp.EmulateViewport(size.w, size.h),
				colorScheme(scheme),
				chromedp.Navigate(c.URL+path),
				chromedp.WaitVisible(chromedp.CSS(`#ah-images`)),
				chromedp.Click(chromedp.CSS(`details.ah-example summary`)),
				chromedp.WaitVisible(chromedp.CSS(`details.ah-example pre`)),
			)
			checkA11y(t, ctx, axe, what)
		}
	}
	if n := get(t, ctx, "loaded images", chromedp.Evaluate[int](`document.querySelectorAll("aside img").length`)); n != 0 {
		t.Errorf("%d images loaded in the side bar: screenshots must be links", n)
	}
}
