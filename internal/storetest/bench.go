package storetest

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// Benchmark measures the hot paths of an engine, the same way for every
// engine so their numbers compare: uploads (alone and 16 at once), a
// version read, a page of a 1,000-version listing, and a repository's
// index entries.
func Benchmark(b *testing.B, open func(b *testing.B) Store) {
	b.Run("PutChartVersion", func(b *testing.B) {
		s := open(b)
		mustRepo(b, s, "charts", "")
		b.ResetTimer()
		for i := range b.N {
			if _, _, _, err := s.PutChartVersion(ctx, chart("charts", "web", fmt.Sprintf("1.0.%d", i)), chartctl.PutVersionOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("PutChartVersionParallel16", func(b *testing.B) {
		s := open(b)
		mustRepo(b, s, "charts", "")
		var n atomic.Int64
		b.SetParallelism(16)
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, _, _, err := s.PutChartVersion(ctx, chart("charts", "web", fmt.Sprintf("1.0.%d", n.Add(1))), chartctl.PutVersionOptions{}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	populated := func(b *testing.B) Store {
		s := open(b)
		mustRepo(b, s, "charts", "")
		for c := range 50 {
			for v := range 20 {
				mustPut(b, s, chart("charts", fmt.Sprintf("chart-%02d", c), fmt.Sprintf("1.%d.0", v)))
			}
		}
		b.ResetTimer()
		return s
	}
	b.Run("ChartVersion", func(b *testing.B) {
		s := populated(b)
		for range b.N {
			if _, err := s.ChartVersion(ctx, "charts", "chart-25", "1.7.0"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ChartVersionPage1000", func(b *testing.B) {
		s := populated(b)
		for range b.N {
			if _, _, err := s.ChartVersionPage(ctx, "charts", chartctl.ChartFilter{}, 500, 20); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("LatestPage1000", func(b *testing.B) {
		s := populated(b)
		for range b.N {
			if _, _, err := s.ChartVersionPage(ctx, "charts", chartctl.ChartFilter{Latest: true}, 0, 20); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("IndexEntries1000", func(b *testing.B) {
		s := populated(b)
		for range b.N {
			if _, err := s.IndexEntries(ctx, "charts"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
