package blobtest

import (
	"io"
	"testing"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// Benchmark measures an engine's commit and read of a chart-sized blob
// (64 KiB) and a large one (past one S3 part), the same way for every
// engine.
func Benchmark(b *testing.B, open func(b *testing.B) chartctl.BlobStore) {
	for _, c := range []struct {
		name string
		size int
	}{{"64KiB", 64 << 10}, {"9MiB", 9 << 20}} {
		b.Run("Commit"+c.name, func(b *testing.B) {
			s := open(b)
			b.SetBytes(int64(c.size))
			b.ResetTimer()
			for i := range b.N {
				Put(b, s, Bytes(uint64(i), c.size), 32<<10)
			}
		})
		b.Run("Read"+c.name, func(b *testing.B) {
			s := open(b)
			d := Put(b, s, Bytes(1, c.size), 32<<10)
			b.SetBytes(int64(c.size))
			b.ResetTimer()
			for range b.N {
				blob, err := s.Open(ctx, d)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := io.Copy(io.Discard, blob); err != nil {
					b.Fatal(err)
				}
				_ = blob.Close()
			}
		})
	}
}
