package bolt_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/bolt"
	"github.com/chartctl/chartctl/internal/storetest"
)

// TestConformance runs the storage conformance suite on a real bbolt file.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Store {
		db, err := bolt.Open(filepath.Join(t.TempDir(), "chartctl.db"), bolt.BatchDelay(time.Millisecond))
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		t.Cleanup(func() { _ = db.Close() })
		return db
	})
}

// BenchmarkStore runs the engine-neutral benchmarks on a bbolt file.
func BenchmarkStore(b *testing.B) {
	storetest.Benchmark(b, func(b *testing.B) storetest.Store {
		db, err := bolt.Open(filepath.Join(b.TempDir(), "chartctl.db"))
		if err != nil {
			b.Fatalf("Open: %v", err)
		}
		b.Cleanup(func() { _ = db.Close() })
		return db
	})
}

// TestChartPages checks the kept chart pages (not part of the Store).
func TestChartPages(t *testing.T) {
	db, err := bolt.Open(filepath.Join(t.TempDir(), "chartctl.db"))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer db.Close()
	storetest.ChartPages(t, db)
}
