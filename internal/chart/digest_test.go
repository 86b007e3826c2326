package chart

import (
	"bytes"
	"compress/gzip"
	"testing"
	"time"
)

func contentDigestOf(t *testing.T, archive []byte) string {
	t.Helper()
	ch, err := Read(bytes.NewReader(archive), DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if len(ch.ContentDigest) != len("sha256:")+64 {
		t.Fatalf("ContentDigest = %q", ch.ContentDigest)
	}
	return ch.ContentDigest
}

// The content digest covers every file's path and bytes and nothing else:
// not entry order, times, modes, directory entries or the gzip encoding.
func TestContentDigest(t *testing.T) {
	base := contentDigestOf(t, mustArchive(t, validEntries("web", "1.0.0")...))

	e := validEntries("web", "1.0.0")
	reordered := []entry{dir("web/"), e[2], e[1], e[0]}
	for i := range reordered {
		reordered[i].hdr.ModTime = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
		reordered[i].hdr.Uname = "ci"
		if reordered[i].hdr.Typeflag != 0 && reordered[i].hdr.Size > 0 {
			reordered[i].hdr.Mode = 0o600
		}
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	zw.Name = "web-1.0.0.tar"
	zw.ModTime = time.Now()
	if _, err := zw.Write(mustTar(t, reordered...)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if got := contentDigestOf(t, buf.Bytes()); got != base {
		t.Fatalf("same files, other encoding: %s, want %s", got, base)
	}

	changed := validEntries("web", "1.0.0")
	changed[1] = file("web/values.yaml", "replicaCount: 2\n")
	if contentDigestOf(t, mustArchive(t, changed...)) == base {
		t.Fatal("a changed file kept the content digest")
	}
	// `helm package` rewrites Chart.yaml from its metadata: comments and
	// key order go, the chart stays the same.
	rewritten := validEntries("web", "1.0.0")
	rewritten[0] = file("web/Chart.yaml", "# The web chart.\n"+chartYAML("web", "1.0.0"))
	if got := contentDigestOf(t, mustArchive(t, rewritten...)); got != base {
		t.Fatalf("Chart.yaml written otherwise, same metadata: %s, want %s", got, base)
	}
	described := validEntries("web", "1.0.0")
	described[0] = file("web/Chart.yaml", chartYAML("web", "1.0.0")+"description: changed\n")
	if contentDigestOf(t, mustArchive(t, described...)) == base {
		t.Fatal("changed metadata kept the content digest")
	}

	renamed := validEntries("web", "1.0.0")
	renamed[1] = file("web/values2.yaml", "replicaCount: 1\n")
	if contentDigestOf(t, mustArchive(t, renamed...)) == base {
		t.Fatal("a renamed file kept the content digest")
	}
	// Moving bytes from one file to another changes the digest even though
	// the concatenated content is the same.
	split := append(validEntries("web", "1.0.0"), file("web/templates/a.yaml", "ab"), file("web/templates/b.yaml", ""))
	moved := append(validEntries("web", "1.0.0"), file("web/templates/a.yaml", "a"), file("web/templates/b.yaml", "b"))
	if contentDigestOf(t, mustArchive(t, split...)) == contentDigestOf(t, mustArchive(t, moved...)) {
		t.Fatal("moving bytes between files kept the content digest")
	}
}
