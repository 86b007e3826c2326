package scale_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/chartctl/chartctl/bench/corpus"
	"github.com/chartctl/chartctl/internal/testkit"
)

// pushOCI pushes c to repo on url as `helm push oci://` does
// (testkit.PushLikeHelm) and returns how long it took.
func (d *deployment) pushOCI(url, repo string, c *testkit.OCIChart) (time.Duration, error) {
	start := time.Now()
	err := testkit.PushLikeHelm(client, url, repo, "ci", d.key, c)
	return time.Since(start), err
}

// pushPair is one chart version to push through /v1 and another to push
// over OCI.
type pushPair struct {
	v1  upload
	oci *testkit.OCIChart
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
	uploads := uploadsOf(b, v1s)
	out := make([]pushPair, n)
	for i, c := range ocis {
		oc, err := testkit.NewOCIChart(c.Name, c.Version, c.Archive)
		if err != nil {
			b.Fatal(err)
		}
		out[i] = pushPair{uploads[i], oc}
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
