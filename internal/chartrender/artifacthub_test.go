package chartrender_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/internal/chart"
	"github.com/chartctl/chartctl/internal/chartrender"
)

// ahChartYAML carries every Artifact Hub annotation a chart can, some
// entries malformed or hostile.
const ahChartYAML = `apiVersion: v2
name: operator
version: 2.0.0
annotations:
  artifacthub.io/category: Database
  artifacthub.io/operator: "true"
  artifacthub.io/operatorCapabilities: full lifecycle
  artifacthub.io/containsSecurityUpdates: "TRUE"
  artifacthub.io/prerelease: "true"
  artifacthub.io/license: MIT
  artifacthub.io/signKey: |
    fingerprint: 0011 2233 4455 6677 8899 aabb ccdd eeff 0011 2233
    url: https://keybase.io/example/pgp_keys.asc
  artifacthub.io/images: |
    - name: operator
      image: ghcr.io/example/operator:v2.0.0
      platforms: [linux/amd64, linux/arm64]
    - name: busybox
      image: busybox:1.36
      whitelisted: true
    - name: nothing
  artifacthub.io/crds: |
    - kind: Cluster
      version: v1
      name: clusters.example.com
      displayName: Cluster
      description: A database cluster
    - version: v2
  artifacthub.io/crdsExamples: |
    - apiVersion: example.com/v1
      kind: Cluster
      metadata:
        name: demo
      spec:
        replicas: 3
  artifacthub.io/screenshots: |
    - title: Dashboard
      url: https://example.com/shot.png
    - title: Evil
      url: javascript:alert(1)
  artifacthub.io/recommendations: |
    - url: https://artifacthub.io/packages/helm/example/backup
    - url: data:text/html,x
  artifacthub.io/links: |
    - name: Docs
      url: https://docs.example.com
  artifacthub.io/changes: |
    - kind: security
      description: Fix CVE-2026-0001
      links:
        - name: Advisory
          url: https://example.com/advisory
    - kind: sideways
      description: An unknown kind is kept without it
`

func TestEveryArtifactHubAnnotationRendered(t *testing.T) {
	arc := mustArchive(t, "operator", map[string]string{"Chart.yaml": ahChartYAML})
	p, err := chartrender.Render(strings.NewReader(string(arc)), chart.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if p.Format != chartrender.FormatVersion || chartrender.FormatVersion < 3 {
		t.Errorf("format %d (FormatVersion %d): pages of older renderers must be rendered again", p.Format, chartrender.FormatVersion)
	}
	if p.Category != "database" || !p.Operator || p.OperatorCapabilities != "Full Lifecycle" || !p.ContainsSecurityUpdates || !p.Prerelease || p.License != "MIT" {
		t.Errorf("scalars: category %q operator %v capabilities %q security %v prerelease %v license %q",
			p.Category, p.Operator, p.OperatorCapabilities, p.ContainsSecurityUpdates, p.Prerelease, p.License)
	}
	if want := (&chartrender.SignKey{Fingerprint: "00112233445566778899AABBCCDDEEFF00112233", URL: "https://keybase.io/example/pgp_keys.asc"}); !reflect.DeepEqual(p.SignKey, want) {
		t.Errorf("sign key %+v, want %+v", p.SignKey, want)
	}
	wantImages := []chartrender.Image{
		{Name: "operator", Image: "ghcr.io/example/operator:v2.0.0", Platforms: []string{"linux/amd64", "linux/arm64"}},
		{Name: "busybox", Image: "busybox:1.36", Whitelisted: true},
	}
	if !reflect.DeepEqual(p.Images, wantImages) {
		t.Errorf("images %+v, want %+v (an entry without an image is left out)", p.Images, wantImages)
	}
	wantCRDs := []chartrender.CRD{{Kind: "Cluster", Version: "v1", Name: "clusters.example.com", DisplayName: "Cluster", Description: "A database cluster"}}
	if !reflect.DeepEqual(p.CRDs, wantCRDs) {
		t.Errorf("crds %+v, want %+v (an entry without a kind is left out)", p.CRDs, wantCRDs)
	}
	if len(p.CRDsExamples) != 1 || p.CRDsExamples[0].Kind != "Cluster" || p.CRDsExamples[0].APIVersion != "example.com/v1" || !strings.Contains(p.CRDsExamples[0].YAML, "replicas: 3") {
		t.Errorf("crd examples %+v", p.CRDsExamples)
	}
	if want := []chartrender.Link{{Name: "Dashboard", URL: "https://example.com/shot.png"}}; !reflect.DeepEqual(p.Screenshots, want) {
		t.Errorf("screenshots %+v, want %+v", p.Screenshots, want)
	}
	if want := []string{"https://artifacthub.io/packages/helm/example/backup"}; !reflect.DeepEqual(p.Recommendations, want) {
		t.Errorf("recommendations %v, want %v", p.Recommendations, want)
	}
	wantChanges := []chartrender.Change{
		{Kind: "security", Description: "Fix CVE-2026-0001", Links: []chartrender.Link{{Name: "Advisory", URL: "https://example.com/advisory"}}},
		{Description: "An unknown kind is kept without it"},
	}
	if !reflect.DeepEqual(p.Changes, wantChanges) {
		t.Errorf("changes %+v, want %+v", p.Changes, wantChanges)
	}
	if want := []chartrender.Link{{Name: "Docs", URL: "https://docs.example.com"}}; !reflect.DeepEqual(p.Links, want) {
		t.Errorf("links %+v", p.Links)
	}

	// The page survives its JSON round trip.
	b, err := p.Encode()
	if err != nil {
		t.Fatal(err)
	}
	back, err := chartrender.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, p) {
		t.Errorf("round trip changed the page:\n%+v\n%+v", back, p)
	}
}

// TestMalformedArtifactHubAnnotationsIgnored: annotations Artifact Hub
// would refuse leave their fields empty; the page still renders.
func TestMalformedArtifactHubAnnotationsIgnored(t *testing.T) {
	const y = `apiVersion: v2
name: bad
version: 1.0.0
annotations:
  artifacthub.io/category: games
  artifacthub.io/operator: "yes"
  artifacthub.io/operatorCapabilities: World Domination
  artifacthub.io/signKey: |
    fingerprint: not-hex
  artifacthub.io/images: "{not: [a list"
  artifacthub.io/crds: "just text"
  artifacthub.io/crdsExamples: "- 1\n- two"
  artifacthub.io/screenshots: "- url: ftp://example.com/x.png"
  artifacthub.io/recommendations: "url: https://example.com"
`
	p, err := chartrender.Render(strings.NewReader(string(mustArchive(t, "bad", map[string]string{"Chart.yaml": y}))), chart.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if p.Category != "" || p.Operator || p.OperatorCapabilities != "" || p.SignKey != nil || p.Images != nil || p.CRDs != nil ||
		p.CRDsExamples != nil || p.Screenshots != nil || p.Recommendations != nil {
		t.Errorf("malformed annotations made it onto the page: %+v", p)
	}
}

// TestPageOfFormat2StillDecodes: a page stored by the previous renderer
// (without the new fields) decodes, with the new fields empty, and its
// format tells the caller to render it again.
func TestPageOfFormat2StillDecodes(t *testing.T) {
	old := `{"format":2,"name":"web","version":"1.0.0","license":"MIT","changes":[{"kind":"added","description":"x"}],"files":3,"size":120}`
	p, err := chartrender.Decode([]byte(old))
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "web" || p.License != "MIT" || len(p.Changes) != 1 || p.Images != nil || p.SignKey != nil || p.Category != "" {
		t.Errorf("decoded %+v", p)
	}
	if p.Format == chartrender.FormatVersion {
		t.Error("a format-2 page reads as current: it would never get the new fields")
	}
}
