package web_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/internal/testkit"
)

// webValues100 and webValues110 are the default values of two versions of
// a web server chart: 1.1.0 adds ingress.enabled, drops legacyProbe and
// changes replicaCount and image.tag.
const (
	webValues100 = "replicaCount: 1\nimage:\n  repository: nginx\n  tag: \"1.25.3\"\nservice:\n  type: ClusterIP\n  port: 80\nlegacyProbe: true\n"
	webValues110 = "replicaCount: 2\nimage:\n  repository: nginx\n  tag: \"1.27.0\"\nservice:\n  type: ClusterIP\n  port: 80\ningress:\n  enabled: false\n"
	webDeploy100 = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  replicas: {{ .Values.replicaCount }}\n  template:\n    spec:\n      containers:\n        - name: web\n          image: \"{{ .Values.image.repository }}:{{ .Values.image.tag }}\"\n"
	webDeploy110 = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\n  labels:\n    app: web\nspec:\n  replicas: {{ .Values.replicaCount }}\n  template:\n    spec:\n      containers:\n        - name: web\n          image: \"{{ .Values.image.repository }}:{{ .Values.image.tag }}\"\n"
	webIngress   = "{{- if .Values.ingress.enabled }}\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: {{ .Release.Name }}\n{{- end }}\n"
)

// setupDiscovery is the catalog plus a chart with two versions that differ
// in values, templates, dependencies and images; a chart that depends on
// redis (so web's dependency tree has two levels); the same chart in the
// private repository (a cross-repository diff); a deprecated chart.
func setupDiscovery(t *testing.T) *catalog {
	t.Helper()
	c := setupCatalog(t)
	helmRepo := c.URL + "/helm/platform-charts"
	c.upload(t, "platform-charts", testkit.Chart{Name: "cache", Version: "0.1.0", Description: "A cache in front of redis",
		Extra: "dependencies:\n  - name: redis\n    version: ~1.2.0\n    repository: " + helmRepo + "\n"})
	c.upload(t, "platform-charts", testkit.Chart{Name: "web", Version: "1.0.0", Description: "Web front end", Keywords: []string{"web"},
		Extra: "annotations:\n  artifacthub.io/category: web\n  artifacthub.io/license: MIT\n",
		Files: map[string]string{"values.yaml": webValues100, "templates/deployment.yaml": webDeploy100}})
	c.upload(t, "platform-charts", testkit.Chart{Name: "web", Version: "1.1.0", Description: "Web front end", Keywords: []string{"web"},
		Extra: "dependencies:\n  - name: cache\n    version: 0.1.0\n    repository: " + helmRepo + "\n" +
			"annotations:\n  artifacthub.io/category: web\n  artifacthub.io/license: MIT\n" +
			"  artifacthub.io/images: |\n    - name: web\n      image: nginx:1.27.0\n" +
			"  artifacthub.io/changes: |\n    - kind: changed\n      description: Two replicas by default\n",
		Files: map[string]string{"values.yaml": webValues110, "templates/deployment.yaml": webDeploy110, "templates/ingress.yaml": webIngress}})
	c.upload(t, "internal-charts", testkit.Chart{Name: "web", Version: "2.0.0", Description: "Web front end, internal build",
		Files: map[string]string{"values.yaml": webValues110 + "internalOnly: true\n"}})
	c.upload(t, "platform-charts", testkit.Chart{Name: "oldweb", Version: "0.9.0", Description: "Old web front end", Keywords: []string{"web"},
		Extra: "deprecated: true\n"})
	return c
}

// TestDiffViewWithoutJavaScript: the diff view compares two versions with
// plain links and a GET form: the values diff by key, every changed file
// unified or side by side, sensible answers to bad and unknown versions,
// and another repository's version only for those who may see it.
func TestDiffViewWithoutJavaScript(t *testing.T) {
	c := setupDiscovery(t)
	b := c.NewBrowser(t)
	const base = "/repositories/platform-charts/charts/web/diff"

	p := b.Get(t, base+"?from=1.0.0&to=1.1.0")
	if p.StatusCode != http.StatusOK {
		t.Fatalf("diff: %d %s", p.StatusCode, p.Body)
	}
	for _, want := range []string{
		// The values diff, one row per key.
		`<tr data-key="ingress.enabled"><td class="mono">ingress.enabled</td><td><span class="badge badge-change badge-added">added</span>`,
		`<tr data-key="legacyProbe"><td class="mono">legacyProbe</td><td><span class="badge badge-change badge-removed">removed</span>`,
		`<tr data-key="replicaCount"><td class="mono">replicaCount</td><td><span class="badge badge-change badge-changed">changed</span></td><td class="mono">1</td><td class="mono">2</td></tr>`,
		`<tr data-key="image.tag"><td class="mono">image.tag</td><td><span class="badge badge-change badge-changed">changed</span></td><td class="mono">1.25.3</td><td class="mono">1.27.0</td></tr>`,
		// The files, listed with their status and linked to their diffs.
		`<a href="#file-1" class="mono">Chart.yaml</a> <span class="badge badge-change badge-changed">modified</span>`,
		`class="mono">templates/ingress.yaml</a> <span class="badge badge-change badge-added">added</span>`,
		`class="mono">templates/deployment.yaml</a>`,
		`class="mono">values.yaml</a>`,
		// Lines say added or removed in words as well as in colour.
		`<td class="diff-line diff-add"><span class="sr-only">added: </span><span class="diff-sign" aria-hidden="true">+</span>    app: web</td>`,
		`<td class="diff-line diff-del"><span class="sr-only">removed: </span><span class="diff-sign" aria-hidden="true">-</span>legacyProbe: true</td>`,
		`<option value="1.0.0" selected>1.0.0</option>`,
		"chartctl chart diff web 1.0.0 1.1.0 --repo platform-charts",
	} {
		if !strings.Contains(p.Body, want) {
			t.Errorf("the diff lacks %s", want)
		}
	}
	if regexp.MustCompile(`<script>|<script [^>]*>[^<]|style="|<style`).MatchString(p.Body) {
		t.Error("the diff page has inline script or style")
	}
	if strings.Contains(p.Body, "diff-split") {
		t.Error("the unified view is side by side")
	}

	// Side by side: a removed line faces the added one that replaced it.
	split := b.Get(t, base+"?from=1.0.0&to=1.1.0&view=split")
	if split.StatusCode != http.StatusOK || !regexp.MustCompile(`<td class="diff-num">1</td><td class="diff-line diff-del">.*replicaCount: 1</td><td class="diff-num">1</td><td class="diff-line diff-add">.*replicaCount: 2</td>`).MatchString(split.Body) {
		t.Errorf("side by side: %d %s", split.StatusCode, split.Body)
	}

	// Without versions picked: what the latest release changed.
	if d := b.Get(t, base); d.StatusCode != http.StatusOK || !strings.Contains(d.Body, `<option value="1.0.0" selected>`) || !strings.Contains(d.Body, `data-key="legacyProbe"`) {
		t.Errorf("default diff: %d", d.StatusCode)
	}
	// The other way round, from the Swap link.
	if d := b.Get(t, base+"?from=1.1.0&to=1.0.0"); !strings.Contains(d.Body, `<tr data-key="legacyProbe"><td class="mono">legacyProbe</td><td><span class="badge badge-change badge-added">added</span>`) {
		t.Errorf("reversed diff: %d", d.StatusCode)
	}

	// Bad and unknown versions: the picker stays, with the reason.
	if d := b.Get(t, base+"?from=nope&to=1.1.0"); d.StatusCode != http.StatusBadRequest || !strings.Contains(d.Body, `&#34;nope&#34; is not a chart version`) || !strings.Contains(d.Body, `id="diff-form"`) {
		t.Errorf("bad version: %d %s", d.StatusCode, d.Body)
	}
	if d := b.Get(t, base+"?from=9.9.9&to=1.1.0"); d.StatusCode != http.StatusNotFound || !strings.Contains(d.Body, "One of these versions is not there") {
		t.Errorf("unknown version: %d %s", d.StatusCode, d.Body)
	}

	// Across repositories: the private one is not there for an anonymous
	// visitor, and is not offered; its owner compares with it.
	anon := b.Get(t, base+"?from=1.1.0&to=2.0.0&to_repo=internal-charts")
	if anon.StatusCode != http.StatusNotFound || !strings.Contains(anon.Body, "no chart web in a repository named internal-charts that you can see") || strings.Contains(anon.Body, `<option value="internal-charts"`) {
		t.Errorf("anonymous cross-repository diff: %d %s", anon.StatusCode, anon.Body)
	}
	if f := b.Get(t, base+"?fragment=to-versions&to_repo=internal-charts"); f.StatusCode != http.StatusNotFound || strings.Contains(f.Body, "2.0.0") {
		t.Errorf("anonymous picker fragment: %d %s", f.StatusCode, f.Body)
	}
	owner := c.NewBrowser(t)
	owner.SignIn(t, ownerEmail, password)
	cross := owner.Get(t, base+"?from=1.1.0&to=2.0.0&to_repo=internal-charts")
	if cross.StatusCode != http.StatusOK || !strings.Contains(cross.Body, `<option value="internal-charts" selected>`) ||
		!strings.Contains(cross.Body, `<tr data-key="internalOnly">`) || strings.Contains(cross.Body, "chartctl chart diff") {
		t.Errorf("cross-repository diff: %d %s", cross.StatusCode, cross.Body)
	}
	if f := owner.Get(t, base+"?fragment=to-versions&to_repo=internal-charts"); f.StatusCode != http.StatusOK || f.Body != `<option value="2.0.0">2.0.0</option>` {
		t.Errorf("picker fragment: %d %q", f.StatusCode, f.Body)
	}

	// A repository the visitor cannot see is the 404 page, as elsewhere.
	if d := b.Get(t, "/repositories/internal-charts/charts/web/diff"); d.StatusCode != http.StatusNotFound || strings.Contains(d.Body, "diff-form") {
		t.Errorf("invisible repository's diff: %d", d.StatusCode)
	}
	// A chart with one version says there is nothing to compare yet.
	if d := b.Get(t, "/repositories/platform-charts/charts/redis/diff"); d.StatusCode != http.StatusOK || !strings.Contains(d.Body, "one version only") {
		t.Errorf("one version: %d %s", d.StatusCode, d.Body)
	}
}

// TestChartPageShowsWhatChangedImagesAndDependencyTree: the latest
// version's page says what changed since the version before it (its
// changes annotation and its values by key, with a link to the full
// diff), which images it deploys (each a search), and its dependencies as
// a tree of links; each version in the list can be compared.
func TestChartPageShowsWhatChangedImagesAndDependencyTree(t *testing.T) {
	c := setupDiscovery(t)
	b := c.NewBrowser(t)
	p := b.Get(t, "/repositories/platform-charts/charts/web")
	if p.StatusCode != http.StatusOK {
		t.Fatalf("chart page: %d", p.StatusCode)
	}
	for _, want := range []string{
		`What changed since <a href="/repositories/platform-charts/charts/web/1.0.0">1.0.0</a>`,
		"Two replicas by default",
		`<span class="badge badge-change badge-added">added</span> <code>ingress.enabled</code>`,
		`<span class="badge badge-change badge-removed">removed</span> <code>legacyProbe</code>`,
		`<code>replicaCount</code>: <code class="value-from">1</code> <span aria-hidden="true">→</span><span class="sr-only">to</span> <code class="value-to">2</code>`,
		`<a href="/repositories/platform-charts/charts/web/diff?from=1.0.0&amp;to=1.1.0" id="diff-link">See the full diff (4 files changed)</a>`,
		`<a class="mono small" href="/search?image=docker.io%2Flibrary%2Fnginx%3A1.27.0" aria-label="Charts that deploy docker.io/library/nginx:1.27.0">docker.io/library/nginx:1.27.0</a>`,
		`<a href="/repositories/platform-charts/charts/cache/0.1.0">cache</a>`,
		`<ul class="dep-children"><li><a href="/repositories/platform-charts/charts/redis">redis</a>`,
		`aria-label="Compare 1.0.0 with 1.1.0">Compare</a>`,
		`id="compare-versions"`,
		`id="verdict"`,
	} {
		if !strings.Contains(p.Body, want) {
			t.Errorf("the chart page lacks %s", want)
		}
	}
	// The oldest version has nothing before it, and lists no images.
	old := b.Get(t, "/repositories/platform-charts/charts/web/1.0.0")
	if old.StatusCode != http.StatusOK || strings.Contains(old.Body, "What changed since") || !strings.Contains(old.Body, `<p class="muted small" id="images">Not known yet.`) {
		t.Errorf("oldest version: %d", old.StatusCode)
	}
}

// TestSearchFiltersWithoutJavaScript: the search page takes /v1/search's
// filters as a plain GET form, shows their facet counts as links that
// narrow the search, and explains bad values.
func TestSearchFiltersWithoutJavaScript(t *testing.T) {
	c := setupDiscovery(t)
	b := c.NewBrowser(t)

	// An image search lists every version that deploys it, linked to
	// that version; a tag prefix before a dot matches.
	img := b.Get(t, "/search?image=nginx:1.27")
	if img.StatusCode != http.StatusOK || !strings.Contains(img.Body, `<a class="chart-name" href="/repositories/platform-charts/charts/web/1.1.0">web</a>`) ||
		!strings.Contains(img.Body, "1 version found") || !strings.Contains(img.Body, `id="search-filters" open`) || !strings.Contains(img.Body, `value="nginx:1.27"`) {
		t.Errorf("image search: %d %s", img.StatusCode, img.Body)
	}

	// Deprecated charts are hidden unless asked for.
	web := b.Get(t, "/search?q=web")
	if strings.Contains(web.Body, "oldweb") {
		t.Error("a deprecated chart is found without deprecated=true")
	}
	withOld := b.Get(t, "/search?q=web&deprecated=true")
	if !strings.Contains(withOld.Body, `href="/repositories/platform-charts/charts/oldweb"`) || !strings.Contains(withOld.Body, `<span class="badge badge-danger">deprecated</span>`) ||
		!strings.Contains(withOld.Body, `id="f-deprecated" name="deprecated" type="checkbox" value="true" checked`) {
		t.Errorf("deprecated=true: %s", withOld.Body)
	}

	// Facets count every result and narrow the search.
	for _, want := range []string{
		`<a href="/search?category=web&amp;q=web" data-facet="web">web</a> <span class="facet-count">1</span>`,
		`<a href="/search?license=MIT&amp;q=web" data-facet="MIT">MIT</a> <span class="facet-count">1</span>`,
		`<a href="/search?q=web&amp;repository=platform-charts" data-facet="platform-charts">platform-charts</a> <span class="facet-count">2</span>`,
		`<a href="/search?q=web&amp;signed=false" data-facet="false">Not verified</a> <span class="facet-count">2</span>`,
	} {
		if !strings.Contains(web.Body, want) {
			t.Errorf("the facets lack %s\n%s", want, web.Body)
		}
	}
	lic := b.Get(t, "/search?q=web&license=MIT")
	if !strings.Contains(lic.Body, "1 chart found") || !strings.Contains(lic.Body, `data-facet="MIT" aria-current="true"`) || !strings.Contains(lic.Body, `<a href="/search?q=web" data-facet="MIT"`) {
		t.Errorf("license filter: %s", lic.Body)
	}

	// kube_version keeps charts whose kubeVersion allows it (nginx needs
	// 1.25 or later); filters alone need no text.
	old := b.Get(t, "/search?kube_version=1.20&repository=platform-charts")
	if old.StatusCode != http.StatusOK || strings.Contains(old.Body, `charts/nginx"`) || !strings.Contains(old.Body, `charts/redis"`) {
		t.Errorf("kube_version 1.20: %d %s", old.StatusCode, old.Body)
	}
	if n := b.Get(t, "/search?kube_version=1.31&q=nginx"); !strings.Contains(n.Body, `charts/nginx"`) {
		t.Errorf("kube_version 1.31 hides nginx")
	}
	if k := b.Get(t, "/search?keyword=http"); !strings.Contains(k.Body, `charts/nginx"`) || strings.Contains(k.Body, `charts/web"`) {
		t.Errorf("keyword filter: %s", k.Body)
	}
	if o := b.Get(t, "/search?organization=acme&q=web"); !strings.Contains(o.Body, `charts/web"`) {
		t.Errorf("organization filter: %s", o.Body)
	}

	// Bad values are explained, with the form kept.
	if bad := b.Get(t, "/search?kube_version=latest"); bad.StatusCode != http.StatusBadRequest || !strings.Contains(bad.Body, "kube_version must be a Kubernetes version") {
		t.Errorf("bad kube_version: %d %s", bad.StatusCode, bad.Body)
	}
	if bad := b.Get(t, "/search?signed=maybe"); bad.StatusCode != http.StatusBadRequest || !strings.Contains(bad.Body, "signed must be true") {
		t.Errorf("bad signed: %d %s", bad.StatusCode, bad.Body)
	}
	// A repository the visitor cannot see is the same as none.
	if r := b.Get(t, "/search?repository=internal-charts"); r.StatusCode != http.StatusNotFound || !strings.Contains(r.Body, "no repository named internal-charts that you can see") || strings.Contains(r.Body, "billing") {
		t.Errorf("invisible repository filter: %d %s", r.StatusCode, r.Body)
	}
	// Pages keep the filters.
	if f := b.Get(t, "/search?q=web&license=MIT&fragment=1"); f.Header.Get("X-Search-Fragment") != "1" || !strings.Contains(f.Body, "1 chart found") {
		t.Errorf("fragment with filters: %s", f.Body)
	}
}
