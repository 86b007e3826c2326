package web_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/oauth/oauthtest"
	"github.com/chartctl/chartctl/internal/testkit"
)

// pageWeightLimit is the most a chart page may weigh without images
// (issue 17).
const pageWeightLimit = 150 << 10

var (
	bigOnce sync.Once
	bigEnv  *oauthtest.Env
)

// bigRepository is a server whose public repository holds one chart with
// 10,000 versions, built once per test binary (its records are written
// straight to the store; they share the uploaded archive).
func bigRepository(tb testing.TB) *oauthtest.Env {
	tb.Helper()
	bigOnce.Do(func() {
		env := oauthtest.Start(&keepAlive{TB: tb}, oauthtest.Config{})
		env.MustRepo(tb, "big", "public")
		readme := strings.Repeat("## Section\n\nSome **text**, a [link](https://example.com) and `code`.\n\n```yaml\nkey: value\n```\n\n", 40)
		archive := testkit.MakeChart(tb, testkit.Chart{Name: "app", Version: "0.0.1", Keywords: []string{"web"}, Files: map[string]string{"README.md": readme, "values.schema.json": schemaJSON}})
		if r := env.Upload(tb, "big", env.AdminKey, archive, ""); r.StatusCode != 200 {
			tb.Fatalf("upload: %d %s", r.StatusCode, r.Body)
		}
		ctx := context.Background()
		first, err := env.Store.ChartVersion(ctx, "big", "app", "0.0.1")
		if err != nil {
			tb.Fatal(err)
		}
		for i := 1; i < 10000; i++ {
			cv := *first
			cv.Version = fmt.Sprintf("%d.%d.%d", i/1000, (i/10)%100, i%10)
			cv.IndexEntry = nil
			if _, _, _, err := env.Store.PutChartVersion(ctx, &cv, chartctl.PutVersionOptions{}); err != nil && chartctl.ErrorCode(err) != chartctl.ECONFLICT {
				tb.Fatal(err)
			}
		}
		bigEnv = env
	})
	if bigEnv == nil {
		tb.Fatal("the big repository could not be built")
	}
	return bigEnv
}

// keepAlive lets the shared server outlive the first test or benchmark
// that builds it: its cleanups never run (the process ends instead).
type keepAlive struct{ testing.TB }

func (k *keepAlive) Cleanup(func()) {}

func (k *keepAlive) TempDir() string { return tempDir(k.TB) }

var (
	tmpMu   sync.Mutex
	tmpDirs int
)

func tempDir(tb testing.TB) string {
	tmpMu.Lock()
	defer tmpMu.Unlock()
	tmpDirs++
	d, err := osMkdirTemp(fmt.Sprintf("chartctl-bench-%d-", tmpDirs))
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

func fetchPage(tb testing.TB, url string) []byte {
	tb.Helper()
	resp, err := http.Get(url)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		tb.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return b
}

// versionLink matches a link to one of the big chart's version pages.
var versionLink = regexp.MustCompile(`href="/repositories/big/charts/app/[0-9]`)

// TestChartPageWeight checks that a chart page of a chart with 10,000
// versions stays under the weight limit: the newest 50 versions, then a
// link to more.
func TestChartPageWeight(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a repository of 10,000 versions")
	}
	env := bigRepository(t)
	for _, path := range []string{"/repositories/big/charts/app", "/repositories/big/charts/app?tab=values", "/repositories/big/charts/app?tab=schema"} {
		body := fetchPage(t, env.URL+path)
		if len(body) > pageWeightLimit {
			t.Errorf("%s weighs %d bytes, more than %d", path, len(body), pageWeightLimit)
		}
		// Links to version pages (each row's Compare link goes to the
		// diff view, not counted).
		if !strings.Contains(string(body), `id="more-versions"`) || len(versionLink.FindAllString(string(body), -1)) > 60 {
			t.Errorf("%s does not page its versions", path)
		}
	}
	css := fetchPage(t, env.URL+"/static/style.css")
	hl := fetchPage(t, env.URL+"/static/highlight.css")
	js := fetchPage(t, env.URL+"/static/pages.js")
	page := fetchPage(t, env.URL+"/repositories/big/charts/app")
	total := len(css) + len(hl) + len(js) + len(page)
	t.Logf("chart page %d bytes; with its stylesheets and script %d bytes", len(page), total)
	if total > pageWeightLimit {
		t.Errorf("the chart page with its assets weighs %d bytes, more than %d", total, pageWeightLimit)
	}
}

// BenchmarkChartPage measures a chart page's server time in a repository
// of 10,000 versions (one chart holds them all: the worst case for the
// version list).
func BenchmarkChartPage(b *testing.B) {
	env := bigRepository(b)
	url := env.URL + "/repositories/big/charts/app"
	fetchPage(b, url) // render the page data once, as an upload would
	b.ResetTimer()
	for b.Loop() {
		fetchPage(b, url)
	}
}

func osMkdirTemp(pattern string) (string, error) { return os.MkdirTemp("", pattern) }
