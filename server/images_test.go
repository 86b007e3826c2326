package server_test

import (
	"context"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/chart"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/chartdiff"
	"github.com/chartctl/chartctl/internal/chartdiff/helmrender"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/server"
)

// withRenderer renders in the test's process: the bounded child
// (chartdiff.Subprocess) is tested with the real binary in helmrender and
// through `chartctl serve` in internal/cmd/serve.
func withRenderer(s *server.Server) { s.Render = helmrender.InProcess(chart.DefaultLimits()) }

// gatedRenderer renders once open is closed, telling entered each time
// it is called.
type gatedRenderer struct {
	open    chan struct{}
	entered chan struct{}
	once    sync.Once
}

func newGate() *gatedRenderer {
	return &gatedRenderer{open: make(chan struct{}), entered: make(chan struct{}, 100)}
}

func (g *gatedRenderer) render(ctx context.Context, archive []byte) (*chartdiff.Rendering, error) {
	g.entered <- struct{}{}
	select {
	case <-g.open:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return helmrender.Render(ctx, archive, chart.DefaultLimits()), nil
}

func (g *gatedRenderer) release() { g.once.Do(func() { close(g.open) }) }

func version(t *testing.T, s *testkit.Server, repo, name, v string) client.Chart {
	t.Helper()
	r := s.Do(t, "GET", "/v1/repositories/"+repo+"/charts/"+name+"/"+v, s.AdminKey, nil)
	if r.StatusCode != 200 {
		t.Fatalf("%s/%s %s: %d %s", repo, name, v, r.StatusCode, r.Body)
	}
	var one envelope[client.Chart]
	r.JSON(t, &one)
	return one.Data
}

// TestImagesFoundAfterPush: a push answers before the images are known
// (the version is pending while the renderer has not finished, decision
// 9); then a chart with the annotation lists its images from it, one
// without lists those its default values render, and charts that need a
// cluster or whose template fails are unrenderable with the reason, their
// versions still answered.
func TestImagesFoundAfterPush(t *testing.T) {
	gate := newGate()
	t.Cleanup(gate.release)
	s := testkit.StartServer(t, func(s *server.Server) { s.Render = gate.render })
	s.MustRepo(t, "a", "")
	for _, dir := range []string{"web-1.0.0/web", "api-1.0.0/api", "needs-cluster/needs-cluster", "broken/broken"} {
		if r := s.Upload(t, "a", s.AdminKey, testkit.ArchiveDir(t, webFixture+dir), ""); r.StatusCode != 200 {
			t.Fatalf("upload %s: %d %s", dir, r.StatusCode, r.Body)
		}
	}
	// The renderer is held: every upload answered without it, and the
	// metric counts the four versions, queued or in the batch under way.
	if got := version(t, s, "a", "api", "1.0.0"); got.ImagesSource != "pending" || len(got.Images) != 0 || got.ImagesError != "" {
		t.Fatalf("api before rendering: %+v", got)
	}
	wantMetric(t, s, "chartctl_images_pending 4")
	gate.release()
	if err := s.App().ProcessImages(context.Background()); err != nil {
		t.Fatal(err)
	}
	wantMetric(t, s, "chartctl_images_pending 0")

	web := version(t, s, "a", "web", "1.0.0")
	if !reflect.DeepEqual(web.Images, []string{"docker.io/bitnami/nginx:1.25.3"}) || web.ImagesSource != "annotation" {
		t.Fatalf("web: %q from %q", web.Images, web.ImagesSource)
	}
	api := version(t, s, "a", "api", "1.0.0")
	want := []string{"docker.io/library/busybox:1.36", "ghcr.io/acme/api-migrate:2.4.1", "ghcr.io/acme/api:2.4.1"}
	if !reflect.DeepEqual(api.Images, want) || api.ImagesSource != "rendered" || api.ImagesError != "" {
		t.Fatalf("api: %q from %q (%s)", api.Images, api.ImagesSource, api.ImagesError)
	}
	for name, reason := range map[string]string{"needs-cluster": "looks up objects in a cluster", "broken": "database.host is required"} {
		got := version(t, s, "a", name, "0.1.0")
		if got.ImagesSource != "unrenderable" || !strings.Contains(got.ImagesError, reason) || got.Images == nil || len(got.Images) != 0 {
			t.Fatalf("%s: %+v", name, got)
		}
	}
	// The stored record is what the listing answers too.
	var list envelope[[]client.Chart]
	s.Do(t, "GET", "/v1/repositories/a/charts?name=api", s.AdminKey, nil).JSON(t, &list)
	if len(list.Data) != 1 || list.Data[0].ImagesSource != "rendered" || len(list.Data[0].Images) != 3 {
		t.Fatalf("list = %+v", list.Data)
	}
}

// TestImagesBackfill: versions stored while nothing could render them
// stay pending; the backfill finds them, reporting its progress in
// /readyz while it runs.
func TestImagesBackfill(t *testing.T) {
	s := testkit.StartServer(t)
	s.MustRepo(t, "a", "")
	s.Upload(t, "a", s.AdminKey, testkit.ArchiveDir(t, webFixture+"api-1.0.0/api"), "")
	s.Upload(t, "a", s.AdminKey, testkit.ArchiveDir(t, webFixture+"api-1.1.0/api"), "")
	if err := s.App().ProcessImages(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := version(t, s, "a", "api", "1.0.0"); got.ImagesSource != "pending" {
		t.Fatalf("without a renderer: %+v", got)
	}

	// A renderer arrives (chartctl-lint installed, the server restarted).
	gate := newGate()
	t.Cleanup(gate.release)
	s.App().Render = gate.render
	done := make(chan error, 1)
	go func() { done <- s.App().ProcessImages(context.Background()) }()
	<-gate.entered
	var ready struct {
		Status  string `json:"status"`
		Details struct {
			Backfill struct{ Done, Total int } `json:"images_backfill"`
		} `json:"details"`
	}
	s.Do(t, "GET", "/readyz", "", nil).JSON(t, &ready)
	if ready.Status != "ok" || ready.Details.Backfill.Total != 2 || ready.Details.Backfill.Done != 0 {
		t.Fatalf("readyz during the backfill: %+v", ready)
	}
	gate.release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"1.0.0", "1.1.0"} {
		if got := version(t, s, "a", "api", v); got.ImagesSource != "rendered" || len(got.Images) != 3 {
			t.Fatalf("api %s after the backfill: %+v", v, got)
		}
	}
	if running, done, total := s.App().ImagesProgress(); running || done != 2 || total != 2 {
		t.Fatalf("progress after: %v %d/%d", running, done, total)
	}
	r := s.Do(t, "GET", "/readyz", "", nil)
	if r.StatusCode != 200 || strings.Contains(string(r.Body), "details") {
		t.Fatalf("readyz after: %d %s", r.StatusCode, r.Body)
	}
}

// TestSearchRenderedImages: search --image finds versions by the images
// their templates render, across the repositories the caller can see,
// and not in one they cannot.
func TestSearchRenderedImages(t *testing.T) {
	s := testkit.StartServer(t, withRenderer)
	for _, r := range []string{"a", "b", "secret"} {
		s.MustRepo(t, r, "")
	}
	s.Upload(t, "a", s.AdminKey, testkit.ArchiveDir(t, webFixture+"api-1.0.0/api"), "")
	s.Upload(t, "b", s.AdminKey, testkit.ArchiveDir(t, webFixture+"api-1.1.0/api"), "")
	s.Upload(t, "b", s.AdminKey, testkit.ArchiveDir(t, webFixture+"web-1.0.0/web"), "")
	s.Upload(t, "secret", s.AdminKey, testkit.ArchiveDir(t, webFixture+"api-1.0.0/api"), "")
	if err := s.App().ProcessImages(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, r := range []string{"a", "b"} {
		if res := s.DoJSON(t, "PATCH", "/v1/repositories/"+r, s.AdminKey, map[string]string{"visibility": "internal"}); res.StatusCode != 200 {
			t.Fatalf("visibility: %d %s", res.StatusCode, res.Body)
		}
	}
	dev := s.MustKey(t, s.MustUser(t, "dev@example.com", false), chartctl.ScopeRepoRead)
	got, body := searchNames(t, s, dev, "image=ghcr.io/acme/api:2")
	if strings.Join(got, " ") != "a/api@1.0.0 b/api@1.1.0" || body.Facets.Repository["secret"] != 0 {
		t.Fatalf("image=ghcr.io/acme/api:2 = %q, facets %+v", got, body.Facets)
	}
	got, _ = searchNames(t, s, dev, "image=ghcr.io/acme/api:2.5")
	if strings.Join(got, " ") != "b/api@1.1.0" {
		t.Fatalf("image=ghcr.io/acme/api:2.5 = %q", got)
	}
	// An init container's image and a CronJob's count; docker.io/library
	// is implied.
	got, _ = searchNames(t, s, dev, "image=busybox")
	if strings.Join(got, " ") != "a/api@1.0.0 b/api@1.1.0" {
		t.Fatalf("image=busybox = %q", got)
	}
	got, _ = searchNames(t, s, s.AdminKey, "image=ghcr.io/acme/api-migrate:2.4.1")
	if strings.Join(got, " ") != "a/api@1.0.0 b/api@1.1.0 secret/api@1.0.0" {
		t.Fatalf("admin: image=ghcr.io/acme/api-migrate = %q", got)
	}
}

// TestChartDiffRendered: the diff lists the manifests each version
// renders with its default values, as rendered/<template path>, beside the
// files; unchanged manifests are not listed; the text diff has them; a
// version that cannot be rendered gives the reason instead.
func TestChartDiffRendered(t *testing.T) {
	s := testkit.StartServer(t, withRenderer)
	s.MustRepo(t, "a", "")
	for _, dir := range []string{"api-1.0.0/api", "api-1.1.0/api", "needs-cluster/needs-cluster"} {
		s.Upload(t, "a", s.AdminKey, testkit.ArchiveDir(t, webFixture+dir), "")
	}
	var res envelope[client.ChartDiff]
	r := s.Do(t, "GET", "/v1/repositories/a/charts/api/diff?from=1.0.0&to=1.1.0", s.AdminKey, nil)
	if r.StatusCode != 200 {
		t.Fatalf("%d %s", r.StatusCode, r.Body)
	}
	r.JSON(t, &res)
	var files []string
	var deploy string
	for _, f := range res.Data.Files {
		files = append(files, f.Status+" "+f.Path)
		if f.Path == "rendered/templates/deployment.yaml" {
			deploy = f.Diff
		}
	}
	want := []string{"modified Chart.yaml", "modified rendered/templates/deployment.yaml", "modified templates/deployment.yaml", "modified values.yaml"}
	if !reflect.DeepEqual(files, want) || res.Data.RenderedError != "" {
		t.Fatalf("files = %q (rendered_error %q)", files, res.Data.RenderedError)
	}
	for _, line := range []string{"--- a/rendered/templates/deployment.yaml\n", "+  replicas: 2\n",
		`-          image: "ghcr.io/acme/api:2.4.1"` + "\n", `+          image: "ghcr.io/acme/api:2.5.0"` + "\n"} {
		if !strings.Contains(deploy, line) {
			t.Errorf("rendered deployment diff lacks %q:\n%s", line, deploy)
		}
	}
	text := s.Do(t, "GET", "/v1/repositories/a/charts/api/diff?from=1.0.0&to=1.1.0", s.AdminKey, nil, "Accept", "text/plain")
	if !strings.Contains(string(text.Body), "+++ b/rendered/templates/deployment.yaml\n") {
		t.Fatalf("text diff:\n%s", text.Body)
	}

	// A chart that needs a cluster: the files' diff, and why there are
	// no rendered manifests.
	s.Upload(t, "a", s.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "needs-cluster", Version: "0.2.0", Files: map[string]string{
		"templates/secret.yaml": "{{- $old := lookup \"v1\" \"Secret\" \"default\" \"x\" }}\napiVersion: v1\nkind: Secret\nmetadata:\n  name: x\n"}}), "")
	res = envelope[client.ChartDiff]{}
	s.Do(t, "GET", "/v1/repositories/a/charts/needs-cluster/diff?from=0.1.0&to=0.2.0", s.AdminKey, nil).JSON(t, &res)
	for _, f := range res.Data.Files {
		if chartdiff.IsRendered(f.Path) {
			t.Errorf("an unrenderable chart has %s", f.Path)
		}
	}
	if len(res.Data.Files) == 0 || res.Data.RenderedError != "Version 0.1.0 cannot be rendered with its default values: the chart looks up objects in a cluster (lookup), so it renders only against one" {
		t.Fatalf("needs-cluster diff: %d files, rendered_error %q", len(res.Data.Files), res.Data.RenderedError)
	}
}

// countingRenderer renders in the test's process and counts its calls.
type countingRenderer struct{ n atomic.Int64 }

func (c *countingRenderer) render(ctx context.Context, archive []byte) (*chartdiff.Rendering, error) {
	c.n.Add(1)
	return helmrender.Render(ctx, archive, chart.DefaultLimits()), nil
}

// TestChartDiffReadsKeptRenderings: the images job keeps what each
// version renders (annotation or not, unrenderable included), so a diff
// of processed versions runs no renderer and lists the same rendered
// entries; a version not processed yet is rendered on demand, alone; a
// kept rendering of a deleted version is pruned by the next backfill, and
// one missing (a restore, an upgrade) is rendered again by it.
func TestChartDiffReadsKeptRenderings(t *testing.T) {
	rc := &countingRenderer{}
	s := testkit.StartServer(t, func(s *server.Server) { s.Render = rc.render })
	s.MustRepo(t, "a", "")
	for _, dir := range []string{"api-1.0.0/api", "api-1.1.0/api", "web-1.0.0/web", "web-1.1.0/web", "needs-cluster/needs-cluster"} {
		if r := s.Upload(t, "a", s.AdminKey, testkit.ArchiveDir(t, webFixture+dir), ""); r.StatusCode != 200 {
			t.Fatalf("upload %s: %d %s", dir, r.StatusCode, r.Body)
		}
	}
	if err := s.App().ProcessImages(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Each archive rendered once, the web chart's too although its
	// images come from its annotation.
	if n := rc.n.Load(); n != 5 {
		t.Fatalf("the images job rendered %d times, want 5", n)
	}
	store := s.App().Store
	digests, err := store.RenderedDigests(context.Background())
	if err != nil || len(digests) != 5 {
		t.Fatalf("kept renderings: %d, %v", len(digests), err)
	}

	diff := func(name, from, to string) client.ChartDiff {
		t.Helper()
		var res envelope[client.ChartDiff]
		r := s.Do(t, "GET", "/v1/repositories/a/charts/"+name+"/diff?from="+from+"&to="+to, s.AdminKey, nil)
		if r.StatusCode != 200 {
			t.Fatalf("diff %s %s %s: %d %s", name, from, to, r.StatusCode, r.Body)
		}
		r.JSON(t, &res)
		return res.Data
	}
	rendered := func(d client.ChartDiff) (out []string) {
		for _, f := range d.Files {
			if chartdiff.IsRendered(f.Path) {
				out = append(out, f.Status+" "+f.Path)
			}
		}
		return out
	}
	got := diff("api", "1.0.0", "1.1.0")
	if n := rc.n.Load(); n != 5 {
		t.Fatalf("the diff of processed versions ran the renderer (%d calls, want 5)", n)
	}
	if r := rendered(got); !reflect.DeepEqual(r, []string{"modified rendered/templates/deployment.yaml"}) || got.RenderedError != "" {
		t.Fatalf("rendered entries from the kept renderings: %q (%s)", r, got.RenderedError)
	}
	for _, f := range got.Files {
		if f.Path == "rendered/templates/deployment.yaml" && !strings.Contains(f.Diff, `+          image: "ghcr.io/acme/api:2.5.0"`+"\n") {
			t.Fatalf("rendered deployment diff:\n%s", f.Diff)
		}
	}
	web := diff("web", "1.0.0", "1.1.0")
	if n := rc.n.Load(); n != 5 || len(rendered(web)) == 0 {
		t.Fatalf("web diff: %d renders, rendered entries %q", n, rendered(web))
	}

	// A version pushed and not processed yet (another replica holds the
	// images lease, so this one's job waits): rendered now, alone.
	if ok, err := store.AcquireLease(context.Background(), "images", "other-replica", time.Hour); err != nil || !ok {
		t.Fatalf("take the images lease: %v, %v", ok, err)
	}
	s.Upload(t, "a", s.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "needs-cluster", Version: "0.2.0", Files: map[string]string{
		"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"}}), "")
	nc := diff("needs-cluster", "0.1.0", "0.2.0")
	if n := rc.n.Load(); n != 6 {
		t.Fatalf("a diff with one unprocessed version rendered %d times in all, want 6", n)
	}
	// The kept reason of the unrenderable version is the diff's.
	if !strings.HasPrefix(nc.RenderedError, "Version 0.1.0 cannot be rendered with its default values: the chart looks up objects in a cluster") {
		t.Fatalf("needs-cluster: rendered_error %q", nc.RenderedError)
	}

	// Deleting a version leaves its rendering to the next backfill, which
	// prunes it; a version whose rendering is missing (as after a
	// restore) is rendered again, its image record left as it was.
	if r := s.Do(t, "DELETE", "/v1/repositories/a/charts/web/1.1.0", s.AdminKey, nil); r.StatusCode != 204 && r.StatusCode != 200 {
		t.Fatalf("delete: %d %s", r.StatusCode, r.Body)
	}
	if err := store.ReleaseLease(context.Background(), "images", "other-replica"); err != nil {
		t.Fatal(err)
	}
	if err := s.App().ProcessImages(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The job rendered the 0.2.0 pushed above, once.
	digests, err = store.RenderedDigests(context.Background())
	if err != nil || len(digests) != 5 || rc.n.Load() != 7 {
		t.Fatalf("after deleting web 1.1.0: %d kept, %v; %d renders, want 7", len(digests), err, rc.n.Load())
	}
	api := version(t, s, "a", "api", "1.0.0")
	if api.ImagesSource != "rendered" || len(api.Images) != 3 {
		t.Fatalf("api 1.0.0 after the backfill: %+v", api)
	}
}

// TestKeptRenderingsBackfilled: a version whose images are known but
// whose rendering is not kept (its images came from the annotation while
// no renderer was installed; likewise after a restore, where renderings
// are not carried, or an upgrade) is rendered by the next backfill, its
// image record left as it was.
func TestKeptRenderingsBackfilled(t *testing.T) {
	s := testkit.StartServer(t)
	s.MustRepo(t, "a", "")
	s.Upload(t, "a", s.AdminKey, testkit.ArchiveDir(t, webFixture+"web-1.0.0/web"), "")
	if err := s.App().ProcessImages(context.Background()); err != nil {
		t.Fatal(err)
	}
	before := version(t, s, "a", "web", "1.0.0")
	if before.ImagesSource != "annotation" {
		t.Fatalf("web without a renderer: %+v", before)
	}
	if d, err := s.App().Store.RenderedDigests(context.Background()); err != nil || len(d) != 0 {
		t.Fatalf("kept renderings without a renderer: %q, %v", d, err)
	}
	rc := &countingRenderer{}
	s.App().Render = rc.render
	if err := s.App().ProcessImages(context.Background()); err != nil {
		t.Fatal(err)
	}
	d, err := s.App().Store.RenderedDigests(context.Background())
	if err != nil || len(d) != 1 || rc.n.Load() != 1 {
		t.Fatalf("after the backfill: kept %q, %v; %d renders", d, err, rc.n.Load())
	}
	after := version(t, s, "a", "web", "1.0.0")
	if !reflect.DeepEqual(after.Images, before.Images) || after.ImagesSource != "annotation" {
		t.Fatalf("the backfill changed the image record: %+v", after)
	}
}

// wantMetric wants /metrics to have line.
func wantMetric(t *testing.T, s *testkit.Server, line string) {
	t.Helper()
	body := string(s.Do(t, "GET", "/metrics", "", nil).Body)
	if !strings.Contains("\n"+body, "\n"+line+"\n") {
		t.Fatalf("/metrics lacks %q", line)
	}
}
