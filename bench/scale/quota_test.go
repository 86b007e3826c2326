package scale_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/testkit"
)

// BenchmarkQuotaPush: a chart version pushed over OCI as Helm pushes it
// into a repository that holds CHARTCTL_BENCH_QUOTA_FILL (default 3,000)
// versions pushed the same way, first without a quota, then with a
// max_bytes quota on the repository. The quota's check counts the
// repository's OCI bytes at every blob upload, and the artifact push's
// check counts them twice: that count must read the manifests that are
// not chart versions (none here), not every version's manifest, so the
// two figures stay close however many versions the repository holds.
//
//   - none-µs/push: a push without a quota;
//   - quota-µs/push: a push with the quota;
//   - quota/none: their ratio.
//
// Each b.N fills a repository of its own: run it with a fixed count,
// -benchtime 100x.
func BenchmarkQuotaPush(b *testing.B) {
	fill := envInt(b, "CHARTCTL_BENCH_QUOTA_FILL", 3000, 1)
	for _, mode := range modes {
		b.Run(mode, func(b *testing.B) {
			d := deploy(b, mode)
			repo, url := d.newRepo(b, "quota"), d.nodes[0].url
			charts := make([]*testkit.OCIChart, fill+2*b.N)
			for i := range charts {
				v := fmt.Sprintf("1.0.%d", i)
				c, err := testkit.NewOCIChart("minimal", v, testkit.MakeChart(b, testkit.Chart{Name: "minimal", Version: v}))
				if err != nil {
					b.Fatal(err)
				}
				charts[i] = c
			}
			push := func(cs []*testkit.OCIChart) time.Duration {
				var took time.Duration
				for _, c := range cs {
					t, err := d.pushOCI(url, repo, c)
					if err != nil {
						b.Fatal(err)
					}
					took += t
				}
				return took
			}
			push(charts[:fill])
			b.ResetTimer()
			none := push(charts[fill : fill+b.N])
			b.StopTimer()
			code, body, err := do("PUT", url+"/v1/repositories/"+repo+"/quota", d.key, "application/json", []byte(`{"max_bytes":1000000000000}`))
			if err != nil || code != http.StatusOK {
				b.Fatalf("set the quota: %d %s %v", code, body, err)
			}
			b.StartTimer()
			quota := push(charts[fill+b.N:])
			b.StopTimer()
			b.ReportMetric(float64(none.Microseconds())/float64(b.N), "none-µs/push")
			b.ReportMetric(float64(quota.Microseconds())/float64(b.N), "quota-µs/push")
			b.ReportMetric(float64(quota)/float64(none), "quota/none")
		})
	}
}
