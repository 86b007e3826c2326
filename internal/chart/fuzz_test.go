package chart

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/internal/chartctl"
)

func FuzzRead(f *testing.F) {
	ok := file("c/Chart.yaml", chartYAML("c", "1.0.0"))
	valid := mustArchive(f, validEntries("c", "1.2.3-rc.1")...)
	seeds := [][]byte{
		valid,
		valid[:len(valid)/2],
		mustArchive(f, ok, file("c/../x", "x")),
		mustArchive(f, ok, entry{hdr: tarSymlink("c/l", "/etc/passwd")}),
		mustArchive(f, append(validEntries("a", "1.0.0"), validEntries("b", "1.0.0")...)...),
		mustArchive(f, file("c/Chart.yaml", "apiVersion: v2\nname: c\nversion: 1.0.0\nmaintainers: [null]\n")),
		mustArchive(f, file("c/Chart.yaml", "a: &a [1,2]\nb: [*a,*a]\nname: c\nversion: 1\n")),
		mustGzip(f, []byte("not a tar")),
		[]byte("not gzip"),
		nil,
	}
	for _, s := range seeds {
		f.Add(s)
	}
	lim := Limits{MaxFiles: 50, MaxFileSize: 64 << 10, MaxTotalSize: 256 << 10, MaxChartYAMLSize: 16 << 10}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Read(bytes.NewReader(data), lim)
		if err != nil {
			// bytes.Reader never fails, so every error is about the archive.
			var ce *chartctl.Error
			if !errors.As(err, &ce) || ce.Code != chartctl.EINVALID || ce.Parameter != "chart" || !strings.HasPrefix(ce.Message, "Invalid chart archive: ") {
				t.Fatalf("error %v is not an invalid-chart error", err)
			}
			return
		}
		if ValidateName(c.Name) != nil || ValidateVersion(c.Version) != nil {
			t.Fatalf("accepted invalid name or version %q %q", c.Name, c.Version)
		}
		var md Metadata
		if err := json.Unmarshal(c.MetadataJSON, &md); err != nil {
			t.Fatalf("metadata JSON: %v", err)
		}
		if md.Name != c.Name || md.Version != c.Version {
			t.Fatalf("metadata JSON %s disagrees with %q %q", c.MetadataJSON, c.Name, c.Version)
		}
		if c.Size > lim.MaxTotalSize || c.Files > lim.MaxFiles {
			t.Fatalf("limits passed: %d files, %d bytes", c.Files, c.Size)
		}
	})
}

// BenchmarkRead reads a realistic chart: the files `helm create` makes,
// packaged by Helm (about 4 KiB compressed).
func BenchmarkRead(b *testing.B) {
	data, _ := mustHelmPackage(b, "bench", "1.2.3")
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Read(bytes.NewReader(data), DefaultLimits()); err != nil {
			b.Fatal(err)
		}
	}
}
