package helmindex

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
	repo "helm.sh/helm/v4/pkg/repo/v1"
)

// syntheticIndex renders, through the cache's own renderer, a repository
// of n versions (100 charts of n/100 versions each) in format f. Filling
// a server with 100,000 real uploads takes too long for a client-side
// measurement; the bytes are the same a server would send.
func syntheticIndex(b *testing.B, n int, f Format) []byte {
	b.Helper()
	cvs := make([]*chartctl.ChartVersion, 0, n)
	for i := range n {
		name := fmt.Sprintf("chart-%02d", i%100)
		cvs = append(cvs, mkCV(b, nil, name, fmt.Sprintf("1.%d.%d", i/100/100, i/100%100), t0.Add(time.Duration(i)*time.Second)))
	}
	c, _ := setup(b, cvs...)
	ix, err := c.View(context.Background(), "r", Query{Format: f})
	if err != nil {
		b.Fatal(err)
	}
	return ix.Body
}

// BenchmarkHelmLoadIndex measures Helm's repo.LoadIndexFile (the library
// Flux and Argo CD load indexes with) on a YAML and a JSON index of the
// same versions: time, allocations, and the heap growth of one load
// (peak-ish memory, reported as heap-MiB).
func BenchmarkHelmLoadIndex(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		for _, f := range []struct {
			name string
			f    Format
		}{{"yaml", YAML}, {"json", JSON}} {
			b.Run(fmt.Sprintf("versions=%d/%s", n, f.name), func(b *testing.B) {
				if testing.Short() && n > 10000 {
					b.Skip("100,000 versions: not in -short")
				}
				p := filepath.Join(b.TempDir(), "index.yaml")
				if err := os.WriteFile(p, syntheticIndex(b, n, f.f), 0o600); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				var peak uint64
				b.ResetTimer()
				for range b.N {
					runtime.GC()
					var before, after runtime.MemStats
					runtime.ReadMemStats(&before)
					ix, err := repo.LoadIndexFile(p)
					runtime.ReadMemStats(&after)
					if err != nil || len(ix.Entries) != 100 {
						b.Fatalf("load: %v", err)
					}
					peak = max(peak, after.TotalAlloc-before.TotalAlloc)
				}
				b.ReportMetric(float64(peak)/(1<<20), "alloc-MiB/load")
			})
		}
	}
}
