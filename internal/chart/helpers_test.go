package chart

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// entry is one tar entry for the archive builders. A nil body with a
// regular-file header writes Size zero bytes from a generator.
type entry struct {
	hdr  tar.Header
	body []byte
}

func file(name, content string) entry {
	return entry{hdr: tar.Header{Name: name, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg}, body: []byte(content)}
}

func dir(name string) entry {
	return entry{hdr: tar.Header{Name: name, Mode: 0o755, Typeflag: tar.TypeDir}}
}

func chartYAML(name, version string) string {
	return fmt.Sprintf("apiVersion: v2\nname: %s\nversion: %s\ndescription: A test chart\nappVersion: \"1.16.0\"\nkeywords:\n  - web\n  - test\n", name, version)
}

// validEntries is a small chart named name.
func validEntries(name, version string) []entry {
	return []entry{
		file(name+"/Chart.yaml", chartYAML(name, version)),
		file(name+"/values.yaml", "replicaCount: 1\n"),
		file(name+"/templates/deployment.yaml", "kind: Deployment\n"),
	}
}

// writeEntries writes entries to tw, generating zero content for entries
// without a body.
func writeEntries(tw *tar.Writer, entries []entry) error {
	for _, e := range entries {
		hdr := e.hdr
		if err := tw.WriteHeader(&hdr); err != nil {
			return fmt.Errorf("write header %s: %w", hdr.Name, err)
		}
		if hdr.Typeflag != tar.TypeReg || hdr.Size == 0 {
			continue
		}
		var src io.Reader = bytes.NewReader(e.body)
		if e.body == nil {
			src = io.LimitReader(zeros{}, hdr.Size)
		}
		if _, err := io.Copy(tw, src); err != nil {
			return fmt.Errorf("write %s: %w", hdr.Name, err)
		}
	}
	return nil
}

// zeros is an endless stream of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// mustTar returns an uncompressed tar of entries.
func mustTar(tb testing.TB, entries ...entry) []byte {
	tb.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := writeEntries(tw, entries); err != nil {
		tb.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// mustGzip compresses b.
func mustGzip(tb testing.TB, b []byte) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		tb.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// mustArchive returns a .tgz of entries, built in memory.
func mustArchive(tb testing.TB, entries ...entry) []byte {
	tb.Helper()
	return mustGzip(tb, mustTar(tb, entries...))
}

// streamArchive returns a reader of a .tgz produced on the fly by gen, so
// that huge archives are never materialized: the generator runs only as
// far as the reader reads, and stops when the test ends.
func streamArchive(tb testing.TB, gen func(tw *tar.Writer, zw io.Writer) error) io.Reader {
	tb.Helper()
	pr, pw := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		zw, err := gzip.NewWriterLevel(pw, gzip.BestSpeed)
		if err != nil {
			pw.CloseWithError(err)
			return
		}
		tw := tar.NewWriter(zw)
		err = gen(tw, zw)
		if err == nil {
			err = zw.Close()
		}
		pw.CloseWithError(err)
	}()
	tb.Cleanup(func() {
		pr.CloseWithError(errors.New("test over"))
		<-done
	})
	return pr
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// wantInvalid fails unless err is EINVALID naming "chart" with message msg.
func wantInvalid(tb testing.TB, err error, msg string) {
	tb.Helper()
	var ce *chartctl.Error
	if !errors.As(err, &ce) {
		tb.Fatalf("error = %v, want *chartctl.Error %q", err, msg)
	}
	if ce.Code != chartctl.EINVALID || ce.Parameter != "chart" {
		tb.Errorf("code, parameter = %q, %q; want %q, %q", ce.Code, ce.Parameter, chartctl.EINVALID, "chart")
	}
	if ce.Message != msg {
		tb.Errorf("message = %q\n            want %q", ce.Message, msg)
	}
}

func tarSymlink(name, target string) tar.Header {
	return tar.Header{Name: name, Linkname: target, Typeflag: tar.TypeSymlink, Mode: 0o777}
}
