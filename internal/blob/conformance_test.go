package blob_test

import (
	"testing"

	"github.com/chartctl/chartctl/internal/blob"
	"github.com/chartctl/chartctl/internal/blobtest"
	"github.com/chartctl/chartctl/internal/chartctl"
)

// TestConformance runs the blob store suite on real files in a temp dir.
func TestConformance(t *testing.T) {
	blobtest.Run(t, func(t *testing.T) chartctl.BlobStore {
		s, err := blob.Open(t.TempDir())
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		return s
	})
}

// BenchmarkBlobStore runs the engine-neutral blob benchmarks on files.
func BenchmarkBlobStore(b *testing.B) {
	blobtest.Benchmark(b, func(b *testing.B) chartctl.BlobStore {
		s, err := blob.Open(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		return s
	})
}
