package chart

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	helmchart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
)

func TestReadValid(t *testing.T) {
	data := mustArchive(t, append([]entry{dir("web/"), dir("web/templates/")}, validEntries("web", "1.2.3-rc.1")...)...)
	src := &countingReader{r: bytes.NewReader(data)}
	c, err := Read(src, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "web" || c.Version != "1.2.3-rc.1" || c.AppVersion != "1.16.0" || c.Description != "A test chart" || c.APIVersion != "v2" {
		t.Errorf("chart = %+v", c)
	}
	if strings.Join(c.Keywords, ",") != "web,test" {
		t.Errorf("keywords = %q", c.Keywords)
	}
	if c.Files != 3 {
		t.Errorf("files = %d, want 3", c.Files)
	}
	if src.n != int64(len(data)) {
		t.Errorf("Read consumed %d of %d bytes; it must read to EOF", src.n, len(data))
	}
	want := `{"name":"web","version":"1.2.3-rc.1","description":"A test chart","keywords":["web","test"],"apiVersion":"v2","appVersion":"1.16.0"}`
	if string(c.MetadataJSON) != want {
		t.Errorf("metadata JSON = %s\nwant %s", c.MetadataJSON, want)
	}
}

func TestReadAcceptsWhatHelmAccepts(t *testing.T) {
	cases := map[string][]entry{
		// No apiVersion: Helm assumes v1.
		"no apiVersion": {file("old/Chart.yaml", "name: old\nversion: 0.1.0\n")},
		// Helm's lenient SemVer.
		"v-prefixed short version": {file("c/Chart.yaml", "apiVersion: v2\nname: c\nversion: v1.2\n")},
		// A numeric version is converted to a string, as Helm does.
		"numeric version": {file("c/Chart.yaml", "apiVersion: v2\nname: c\nversion: 1\n")},
		"BOM":             {file("c/Chart.yaml", "\xEF\xBB\xBFapiVersion: v2\nname: c\nversion: 1.0.0\n")},
		"subchart archive and dir": {
			file("app/Chart.yaml", chartYAML("app", "1.0.0")),
			file("app/charts/dep-0.1.0.tgz", "not inspected"),
			file("app/charts/lib/Chart.yaml", chartYAML("lib", "0.1.0")),
		},
		"dot segments inside": {file("c/./templates//a.yaml", "a: 1\n"), file("c/Chart.yaml", chartYAML("c", "1.0.0"))},
		"uppercase and dots":  {file("My.Chart_1/Chart.yaml", chartYAML("My.Chart_1", "1.0.0"))},
		"colon in a file name": {
			file("c/Chart.yaml", chartYAML("c", "1.0.0")),
			file("c/files/a:b.txt", "x"),
		},
		"requirements.yaml of a v1 chart": {
			file("c/Chart.yaml", "apiVersion: v1\nname: c\nversion: 1.0.0\n"),
			file("c/requirements.yaml", "dependencies:\n- name: redis\n  version: 1.x\n  repository: https://example.com\n"),
		},
		"PAX global header": {
			{hdr: tar.Header{Typeflag: tar.TypeXGlobalHeader, Name: "pax_global_header", PAXRecords: map[string]string{"comment": "x"}}},
			file("c/Chart.yaml", chartYAML("c", "1.0.0")),
		},
	}
	for name, entries := range cases {
		t.Run(name, func(t *testing.T) {
			c, err := Read(bytes.NewReader(mustArchive(t, entries...)), DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			if err := ValidateName(c.Name); err != nil {
				t.Error(err)
			}
			if err := ValidateVersion(c.Version); err != nil {
				t.Error(err)
			}
			if name == "requirements.yaml of a v1 chart" && (len(c.Metadata.Dependencies) != 1 || c.Metadata.Dependencies[0].Name != "redis") {
				t.Errorf("dependencies = %+v", c.Metadata.Dependencies)
			}
			if name == "numeric version" && c.Version != "1" {
				t.Errorf("version = %q", c.Version)
			}
		})
	}
}

func TestReadRejects(t *testing.T) {
	ok := file("c/Chart.yaml", chartYAML("c", "1.0.0"))
	link := func(name, target string, flag byte) entry {
		return entry{hdr: tar.Header{Name: name, Linkname: target, Typeflag: flag, Mode: 0o777}}
	}
	dev := func(name string, flag byte) entry {
		return entry{hdr: tar.Header{Name: name, Typeflag: flag, Mode: 0o600, Devmajor: 1, Devminor: 3}}
	}
	truncated := mustArchive(t, validEntries("c", "1.0.0")...)
	validTar := mustTar(t, validEntries("c", "1.0.0")...)

	cases := []struct {
		name string
		data []byte
		msg  string
	}{
		{"traversal", mustArchive(t, ok, file("c/../../etc/x", "x")), `Invalid chart archive: entry "c/../../etc/x" escapes the chart directory.`},
		{"traversal at top", mustArchive(t, file("../x", "x")), `Invalid chart archive: entry "../x" escapes the chart directory.`},
		{"absolute path", mustArchive(t, file("/etc/passwd", "x")), `Invalid chart archive: entry "/etc/passwd" has an absolute path.`},
		{"backslash", mustArchive(t, ok, file(`c\..\..\x`, "x")), `Invalid chart archive: entry "c\\..\\..\\x" contains a backslash.`},
		{"drive letter", mustArchive(t, ok, file("c/C:/Windows/x", "x")), `Invalid chart archive: entry "c/C:/Windows/x" contains a drive letter.`},
		{"double slash", mustArchive(t, ok, file("c//etc/x", "x")), `Invalid chart archive: entry "c//etc/x" has an absolute path.`},
		{"dotdot name", mustArchive(t, ok, file("c/..data", "x")), `Invalid chart archive: entry "c/..data" has a name starting with "..".`},
		{"dot top", mustArchive(t, file("./c/Chart.yaml", chartYAML("c", "1.0.0"))), `Invalid chart archive: entry "./c/Chart.yaml" is not inside a chart directory.`},
		{"top-level file", mustArchive(t, file("Chart.yaml", chartYAML("c", "1.0.0"))), `Invalid chart archive: entry "Chart.yaml" is outside the chart directory.`},
		{"symlink", mustArchive(t, ok, link("c/templates/x.yaml", "/etc/passwd", tar.TypeSymlink)), `Invalid chart archive: entry "c/templates/x.yaml" is a symbolic link; only regular files and directories are allowed.`},
		{"hard link", mustArchive(t, ok, link("c/values.yaml", "c/Chart.yaml", tar.TypeLink)), `Invalid chart archive: entry "c/values.yaml" is a hard link; only regular files and directories are allowed.`},
		{"char device", mustArchive(t, ok, dev("c/null", tar.TypeChar)), `Invalid chart archive: entry "c/null" is a device file; only regular files and directories are allowed.`},
		{"block device", mustArchive(t, ok, dev("c/sda", tar.TypeBlock)), `Invalid chart archive: entry "c/sda" is a device file; only regular files and directories are allowed.`},
		{"fifo", mustArchive(t, ok, dev("c/pipe", tar.TypeFifo)), `Invalid chart archive: entry "c/pipe" is a named pipe; only regular files and directories are allowed.`},
		{"two charts", mustArchive(t, append(validEntries("a", "1.0.0"), validEntries("b", "1.0.0")...)...), `Invalid chart archive: more than one top-level directory ("a" and "b"); a chart archive holds exactly one chart.`},
		{"missing Chart.yaml", mustArchive(t, file("c/values.yaml", "a: 1\n")), `Invalid chart archive: no Chart.yaml in the chart directory "c".`},
		{"Chart.yaml in a subdirectory only", mustArchive(t, file("c/sub/Chart.yaml", chartYAML("c", "1.0.0"))), `Invalid chart archive: no Chart.yaml in the chart directory "c".`},
		{"two Chart.yaml", mustArchive(t, ok, file("c/./Chart.yaml", chartYAML("c", "2.0.0"))), `Invalid chart archive: more than one Chart.yaml in the chart directory.`},
		{"name differs from dir", mustArchive(t, file("c/Chart.yaml", chartYAML("other", "1.0.0"))), `Invalid chart archive: Chart.yaml name "other" does not match the chart directory "c".`},
		{"bad version", mustArchive(t, file("c/Chart.yaml", chartYAML("c", "one.two"))), `Invalid chart archive: Chart.yaml: chart.metadata.version "one.two" is invalid.`},
		{"missing version", mustArchive(t, file("c/Chart.yaml", "apiVersion: v2\nname: c\n")), `Invalid chart archive: Chart.yaml: chart.metadata.version is required.`},
		{"missing name", mustArchive(t, file("c/Chart.yaml", "apiVersion: v2\nversion: 1.0.0\n")), `Invalid chart archive: Chart.yaml: chart.metadata.name is required.`},
		{"name with slash", mustArchive(t, file("c/Chart.yaml", chartYAML("a/c", "1.0.0"))), `Invalid chart archive: Chart.yaml: chart.metadata.name "a/c" is invalid.`},
		{"name dotdot", mustArchive(t, file("c/Chart.yaml", chartYAML("..", "1.0.0"))), `Invalid chart archive: Chart.yaml: chart.metadata.name ".." is not allowed.`},
		{"name with space", mustArchive(t, file("c/Chart.yaml", chartYAML("my chart", "1.0.0"))), `Invalid chart archive: Chart.yaml name "my chart" is invalid: use letters, digits, '-', '_' and '.', starting with a letter or digit.`},
		{"apiVersion v3", mustArchive(t, file("c/Chart.yaml", "apiVersion: v3\nname: c\nversion: 1.0.0\n")), `Invalid chart archive: Chart.yaml apiVersion "v3" is not supported; use v2 (or v1).`},
		{"bad type", mustArchive(t, file("c/Chart.yaml", chartYAML("c", "1.0.0")+"type: plugin\n")), `Invalid chart archive: Chart.yaml: chart.metadata.type must be application or library.`},
		{"null maintainer", mustArchive(t, file("c/Chart.yaml", chartYAML("c", "1.0.0")+"maintainers: [null]\n")), `Invalid chart archive: Chart.yaml: maintainers must not contain empty or null nodes.`},
		{"null dependency", mustArchive(t, file("c/Chart.yaml", chartYAML("c", "1.0.0")+"dependencies:\n- ~\n")), `Invalid chart archive: Chart.yaml: dependencies must not contain empty or null nodes.`},
		{"null document", mustArchive(t, file("c/Chart.yaml", "null\n")), `Invalid chart archive: Chart.yaml: chart.metadata.name is required.`},
		{"list document", mustArchive(t, file("c/Chart.yaml", "- a\n- b\n")), `Invalid chart archive: cannot parse Chart.yaml: cannot unmarshal array into Go value of type chart.Metadata.`},
		{"keywords not a list", mustArchive(t, file("c/Chart.yaml", "apiVersion: v2\nname: c\nversion: 1.0.0\nkeywords: web\n")), `Invalid chart archive: cannot parse Chart.yaml: cannot unmarshal string into Go struct field Metadata.keywords of type []string.`},
		{"version a map", mustArchive(t, file("c/Chart.yaml", "apiVersion: v2\nname: c\nversion: {a: 1}\n")), `Invalid chart archive: cannot parse Chart.yaml: cannot unmarshal object into Go struct field Metadata.version of type string.`},
		{"invalid YAML", mustArchive(t, file("c/Chart.yaml", "name: [\n")), `Invalid chart archive: cannot parse Chart.yaml: line 1: did not find expected node content.`},
		{"not gzip", []byte("apiVersion: v1\nentries: {}\n"), `Invalid chart archive: not gzip-compressed.`},
		{"plain tar", validTar, `Invalid chart archive: not gzip-compressed.`},
		{"empty", nil, `Invalid chart archive: the file is empty.`},
		{"not tar", mustGzip(t, bytes.Repeat([]byte("hello world\n"), 100)), `Invalid chart archive: not a tar archive.`},
		{"short not tar", mustGzip(t, []byte("hello")), `Invalid chart archive: not a tar archive.`},
		{"empty tar", mustGzip(t, mustTar(t)), `Invalid chart archive: the archive contains no files.`},
		{"truncated gzip", truncated[:len(truncated)-20], `Invalid chart archive: truncated gzip stream.`},
		{"truncated gzip header", truncated[:5], `Invalid chart archive: truncated gzip stream.`},
		{"truncated tar", mustGzip(t, validTar[:1540]), `Invalid chart archive: truncated tar archive.`},
		{"corrupt tar", mustGzip(t, append(mustTar(t, ok)[:1024:1024], bytes.Repeat([]byte("x"), 1024)...)), `Invalid chart archive: corrupt tar entry after "c/Chart.yaml".`},
		{"bad crc", func() []byte {
			b := bytes.Clone(truncated)
			b[len(b)-8] ^= 0xff
			return b
		}(), `Invalid chart archive: gzip checksum mismatch; the archive is corrupt.`},
		{"trailing garbage", append(bytes.Clone(truncated), "garbage"...), `Invalid chart archive: unexpected data after the end of the gzip stream.`},
		{"trailing zeros", append(bytes.Clone(truncated), make([]byte, 512)...), `Invalid chart archive: unexpected data after the end of the gzip stream.`},
		{"data after tar end", mustGzip(t, append(bytes.Clone(validTar), "hidden payload"...)), `Invalid chart archive: unexpected data after the end of the tar archive.`},
		{"GNU sparse", mustGzip(t, withTypeflag(t, mustTar(t, file("c/Chart.yaml", chartYAML("c", "1.0.0")), file("c/big", "")), 1, tar.TypeGNUSparse)), `Invalid chart archive: corrupt tar entry after "c/Chart.yaml".`},
		{"contiguous file", mustGzip(t, withTypeflag(t, mustTar(t, file("c/Chart.yaml", chartYAML("c", "1.0.0")), file("c/big", "")), 1, tar.TypeCont)), `Invalid chart archive: entry "c/big" has unsupported type "7"; only regular files and directories are allowed.`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Read(bytes.NewReader(tc.data), DefaultLimits())
			if err == nil {
				t.Fatalf("accepted: %+v", c)
			}
			wantInvalid(t, err, tc.msg)
		})
	}
}

func TestReadAcceptsConcatenatedGzipMembers(t *testing.T) {
	tr := mustTar(t, validEntries("c", "1.0.0")...)
	data := append(mustGzip(t, tr[:1000]), mustGzip(t, tr[1000:])...)
	if _, err := Read(bytes.NewReader(data), DefaultLimits()); err != nil {
		t.Fatal(err)
	}
}

func TestReadSizeLimits(t *testing.T) {
	lim := Limits{MaxFiles: 10, MaxFileSize: 1000, MaxTotalSize: 2500, MaxChartYAMLSize: 200}
	ok := file("c/Chart.yaml", chartYAML("c", "1.0.0"))
	big := func(name string, size int64) entry {
		return entry{hdr: tar.Header{Name: name, Size: size, Typeflag: tar.TypeReg, Mode: 0o644}}
	}
	cases := []struct {
		name    string
		entries []entry
		msg     string
	}{
		{"file over cap", []entry{ok, big("c/a", 1001)}, `Invalid chart archive: file "c/a" is larger than 1000 bytes decompressed.`},
		{"total over cap", []entry{ok, big("c/a", 1000), big("c/b", 1000), big("c/c", 1000)}, `Invalid chart archive: decompressed size exceeds 2500 bytes.`},
		{"Chart.yaml over cap", []entry{file("c/Chart.yaml", chartYAML("c", "1.0.0")+"# "+strings.Repeat("x", 200)+"\n")}, `Invalid chart archive: Chart.yaml is larger than 200 bytes.`},
		{"too many entries", append([]entry{ok}, func() []entry {
			var es []entry
			for i := range 10 {
				es = append(es, file(fmt.Sprintf("c/f%d", i), ""))
			}
			return es
		}()...), `Invalid chart archive: more than 10 entries.`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(bytes.NewReader(mustArchive(t, tc.entries...)), lim)
			wantInvalid(t, err, tc.msg)
		})
	}
	// Exactly at the caps is fine.
	if _, err := Read(bytes.NewReader(mustArchive(t, ok, big("c/a", 1000), big("c/b", 1000))), lim); err != nil {
		t.Fatal(err)
	}
}

// allocated returns the bytes allocated while fn ran.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestReadZeroBombFile(t *testing.T) {
	// A 1 GiB file of zeros (about 1 MiB compressed), produced on the fly:
	// it is rejected from its header, after reading a few kilobytes.
	src := &countingReader{r: streamArchive(t, func(tw *tar.Writer, _ io.Writer) error {
		return writeEntries(tw, []entry{
			file("c/Chart.yaml", chartYAML("c", "1.0.0")),
			{hdr: tar.Header{Name: "c/zeros", Size: 1 << 30, Typeflag: tar.TypeReg, Mode: 0o644}},
		})
	})}
	var err error
	alloc := allocated(func() { _, err = Read(src, DefaultLimits()) })
	wantInvalid(t, err, `Invalid chart archive: file "c/zeros" is larger than 5 MiB decompressed.`)
	if src.n > 1<<20 {
		t.Errorf("read %d compressed bytes before rejecting", src.n)
	}
	if alloc > 16<<20 {
		t.Errorf("allocated %d bytes", alloc)
	}
}

func TestReadZeroBombStream(t *testing.T) {
	// Sizes announced in headers are checked up front, but data past the
	// tar end-of-archive marker is not announced anywhere: 1 GiB of zeros
	// there is inflated only up to the stream cap, in bounded memory.
	src := &countingReader{r: streamArchive(t, func(tw *tar.Writer, zw io.Writer) error {
		if err := writeEntries(tw, validEntries("c", "1.0.0")); err != nil {
			return err
		}
		if err := tw.Close(); err != nil {
			return err
		}
		_, err := io.Copy(zw, io.LimitReader(zeros{}, 1<<30))
		return err
	})}
	lim := DefaultLimits()
	lim.MaxTotalSize = 8 << 20
	var err error
	alloc := allocated(func() { _, err = Read(src, lim) })
	wantInvalid(t, err, `Invalid chart archive: decompressed size exceeds 8 MiB.`)
	// BestSpeed compresses zeros about 200:1 here; the cap is 8 MiB plus
	// 20 MiB of header allowance, so well under 1 MiB should be read.
	if src.n > 1<<20 {
		t.Errorf("read %d compressed bytes before rejecting", src.n)
	}
	if alloc > 16<<20 {
		t.Errorf("allocated %d bytes", alloc)
	}
}

func TestReadManyEntries(t *testing.T) {
	src := &countingReader{r: streamArchive(t, func(tw *tar.Writer, _ io.Writer) error {
		if err := writeEntries(tw, []entry{file("c/Chart.yaml", chartYAML("c", "1.0.0"))}); err != nil {
			return err
		}
		for i := range 50000 {
			if err := writeEntries(tw, []entry{file(fmt.Sprintf("c/templates/f%05d.yaml", i), "a: 1\n")}); err != nil {
				return err
			}
		}
		return tw.Close()
	})}
	_, err := Read(src, DefaultLimits())
	wantInvalid(t, err, `Invalid chart archive: more than 5000 entries.`)
}

func TestReadLargeChartYAML(t *testing.T) {
	body := chartYAML("c", "1.0.0") + "description: " + strings.Repeat("x", 5<<20) + "\n"
	_, err := Read(bytes.NewReader(mustArchive(t, file("c/Chart.yaml", body))), DefaultLimits())
	// Over both the per-file cap and Chart.yaml's; the per-file cap is
	// checked first.
	wantInvalid(t, err, `Invalid chart archive: file "c/Chart.yaml" is larger than 5 MiB decompressed.`)

	body = chartYAML("c", "1.0.0") + "# " + strings.Repeat("x", 4<<20) + "\n"
	_, err = Read(bytes.NewReader(mustArchive(t, file("c/Chart.yaml", body))), DefaultLimits())
	wantInvalid(t, err, `Invalid chart archive: Chart.yaml is larger than 256 KiB.`)
}

func TestReadAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString(chartYAML("c", "1.0.0"))
	b.WriteString(`a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]` + "\n")
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		fmt.Fprintf(&b, "%s: &%s [*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s]\n", n, n, prev, prev, prev, prev, prev, prev, prev, prev, prev)
		prev = n
	}
	var err error
	alloc := allocated(func() {
		_, err = Read(bytes.NewReader(mustArchive(t, file("c/Chart.yaml", b.String()))), DefaultLimits())
	})
	wantInvalid(t, err, `Invalid chart archive: cannot parse Chart.yaml: document contains excessive aliasing.`)
	if alloc > 64<<20 {
		t.Errorf("allocated %d bytes", alloc)
	}
}

func TestReadWideAliases(t *testing.T) {
	// The most expansion the YAML decoder's alias ratio allows in a
	// Chart.yaml as large as the default cap: many aliases of one list. It
	// must stay in bounded memory whether it is accepted or refused.
	for _, width := range []int{10, 100, 1000, 10000} {
		var b strings.Builder
		b.WriteString(chartYAML("c", "1.0.0"))
		b.WriteString("x: &x [")
		for i := range width {
			fmt.Fprintf(&b, "%d,", i%10)
		}
		b.WriteString("0]\ny: [")
		for b.Len() < int(DefaultLimits().MaxChartYAMLSize)-100 {
			b.WriteString("*x,")
		}
		b.WriteString("*x]\n")
		var err error
		alloc := allocated(func() {
			_, err = Read(bytes.NewReader(mustArchive(t, file("c/Chart.yaml", b.String()))), DefaultLimits())
		})
		t.Logf("width %d: err=%v, allocated %d MiB", width, err, alloc>>20)
		if alloc > 64<<20 {
			t.Errorf("width %d: allocated %d bytes", width, alloc)
		}
	}
}

func TestReadReportsSourceErrors(t *testing.T) {
	// The caller's own error (such as http.MaxBytesReader's) comes back
	// wrapped, not disguised as an invalid archive.
	data := mustArchive(t, validEntries("c", "1.0.0")...)
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(data))
	body := http.MaxBytesReader(rec, req.Body, int64(len(data)/2))
	_, err := Read(body, DefaultLimits())
	var mbe *http.MaxBytesError
	if !errors.As(err, &mbe) {
		t.Fatalf("error = %v, want *http.MaxBytesError", err)
	}
}

// mustHelmPackage creates a chart with Helm's own `helm create` code, loads
// it with Helm's loader and packages it with Helm's Save, as `helm package`
// does. It returns the archive bytes and Helm's loaded metadata.
func mustHelmPackage(tb testing.TB, name, version string) ([]byte, *helmchart.Metadata) {
	tb.Helper()
	tmp := tb.TempDir()
	chartDir, err := chartutil.Create(name, tmp)
	if err != nil {
		tb.Fatal(err)
	}
	ch, err := loader.Load(chartDir)
	if err != nil {
		tb.Fatal(err)
	}
	ch.Metadata.Version = version
	ch.Metadata.Keywords = []string{"web", "demo"}
	ch.Metadata.Maintainers = []*helmchart.Maintainer{{Name: "Jane", Email: "jane@example.com"}}
	ch.Metadata.Annotations = map[string]string{"category": "Demo"}
	out := filepath.Join(tmp, "out")
	file, err := chartutil.Save(ch, out)
	if err != nil {
		tb.Fatal(err)
	}
	if filepath.Base(file) != ArchiveFileName(name, version) {
		tb.Errorf("Helm named the package %s, ArchiveFileName says %s", filepath.Base(file), ArchiveFileName(name, version))
	}
	data, err := os.ReadFile(file)
	if err != nil {
		tb.Fatal(err)
	}
	// What Helm itself reads back from the package.
	loaded, err := loader.LoadArchive(bytes.NewReader(data))
	if err != nil {
		tb.Fatal(err)
	}
	return data, loaded.Metadata
}

func TestReadHelmPackagedChart(t *testing.T) {
	data, helmMD := mustHelmPackage(t, "mychart", "0.3.0-beta.1+build.7")
	c, err := Read(bytes.NewReader(data), DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "mychart" || c.Version != "0.3.0-beta.1+build.7" || c.AppVersion != helmMD.AppVersion || c.Description != helmMD.Description || c.APIVersion != "v2" {
		t.Errorf("chart = %+v", c)
	}
	if c.Files < 10 {
		t.Errorf("files = %d; helm create makes more", c.Files)
	}
	want, err := json.Marshal(helmMD)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(c.MetadataJSON, want) {
		t.Errorf("metadata JSON differs from Helm's:\n got %s\nwant %s", c.MetadataJSON, want)
	}
}

// withTypeflag rewrites the type of the n-th (0-based) header of an
// uncompressed tar whose entries are empty or one block long, fixing the
// header checksum: tar.Writer refuses to write some types.
func withTypeflag(tb testing.TB, tarball []byte, n int, flag byte) []byte {
	tb.Helper()
	b := bytes.Clone(tarball)
	off := 0
	for i := 0; i < n; i++ {
		size, err := strconv.ParseInt(strings.Trim(string(b[off+124:off+136]), " \x00"), 8, 64)
		if err != nil {
			tb.Fatal(err)
		}
		off += 512 + int((size+511)/512)*512
	}
	hdr := b[off : off+512]
	hdr[156] = flag
	copy(hdr[148:156], "        ")
	sum := 0
	for _, c := range hdr {
		sum += int(c)
	}
	copy(hdr[148:156], fmt.Sprintf("%06o\x00 ", sum))
	return b
}
