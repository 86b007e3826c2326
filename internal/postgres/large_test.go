package postgres_test

import (
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/postgres"
	"github.com/chartctl/chartctl/internal/testkit/pgtest"
)

// BenchmarkLargeRepository measures the reads that matter for one
// repository of 100,000 chart versions (100 charts of 1,000 versions) on
// PostgreSQL: the first page of the chart list as the API serves it
// (p50 reported), and loading the whole Helm index, which each replica
// does once at start-up (or after an invalidation). The versions are
// inserted in one statement, as rows the store itself would have written.
func BenchmarkLargeRepository(b *testing.B) {
	url := pgtest.Shared(b).NewDatabase(b)
	db, err := postgres.Open(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	r := &chartctl.Repository{Name: "big"}
	if err := db.CreateRepository(ctx, r); err != nil {
		b.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `INSERT INTO chart_versions
		(repository_id, name, version, digest, size, created_at, metadata, index_entry, canonical_version)
		SELECT $1, 'chart-' || (i % 100), v, 'sha256:' || encode(sha256(i::text::bytea), 'hex'), 1000, now(),
			convert_to('{"apiVersion":"v2","name":"chart-' || (i % 100) || '","version":"' || v || '"}', 'UTF8'),
			convert_to('  - apiVersion: v2' || chr(10) || '    name: chart-' || (i % 100) || chr(10) || '    version: ' || v || chr(10), 'UTF8'),
			v
		FROM generate_series(0, 99999) AS i, LATERAL (SELECT '1.' || (i / 100) || '.0' AS v) AS x`, r.ID); err != nil {
		b.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `ANALYZE chart_versions`); err != nil {
		b.Fatal(err)
	}
	p50 := func(b *testing.B, fn func() error) {
		b.Helper()
		times := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for range b.N {
			start := time.Now()
			if err := fn(); err != nil {
				b.Fatal(err)
			}
			times = append(times, time.Since(start))
		}
		b.StopTimer()
		slices.Sort(times)
		b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
	}
	b.Run("ChartListFirstPage", func(b *testing.B) {
		p50(b, func() error {
			cvs, total, err := db.ChartVersionPage(ctx, "big", chartctl.ChartFilter{}, 0, 30)
			if err == nil && (len(cvs) != 30 || total != 100000) {
				b.Fatalf("page of %d of %d", len(cvs), total)
			}
			return err
		})
	})
	b.Run("LatestFirstPage", func(b *testing.B) {
		p50(b, func() error {
			_, _, err := db.ChartVersionPage(ctx, "big", chartctl.ChartFilter{Latest: true}, 0, 30)
			return err
		})
	})
	b.Run("IndexLoad", func(b *testing.B) {
		p50(b, func() error {
			cvs, err := db.IndexEntries(ctx, "big")
			if err == nil && len(cvs) != 100000 {
				b.Fatalf("%d entries", len(cvs))
			}
			return err
		})
	})
}
