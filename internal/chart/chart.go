// Package chart reads and validates Helm chart archives (.tgz) as a stream,
// and validates the chart names and versions that arrive in URLs.
//
// Read applies every check Helm v4's own archive loader
// (helm.sh/helm/v4/pkg/chart/loader/archive) applies — absolute paths, "..",
// drive letters, one top-level directory, a decompressed size cap — and
// stricter ones: only regular files and directories, no backslashes, an
// entry-count cap, a per-file cap, caps enforced while decompressing, a
// single chart whose Chart.yaml name equals its directory, and Chart.yaml
// parsed with a size cap and validated as Helm validates it.
package chart

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/chartctl/chartctl/internal/bufpool"
	"github.com/chartctl/chartctl/internal/chartctl"
	"sigs.k8s.io/yaml"
)

// Limits bound what Read accepts. A zero or negative field means the
// default from DefaultLimits.
type Limits struct {
	// MaxFiles caps the number of archive entries (files and directories).
	MaxFiles int
	// MaxFileSize caps the decompressed size of one file.
	MaxFileSize int64
	// MaxTotalSize caps the decompressed size of all files together.
	MaxTotalSize int64
	// MaxChartYAMLSize caps the size of Chart.yaml (and requirements.yaml),
	// the only files Read holds in memory.
	MaxChartYAMLSize int64
}

// DefaultLimits returns the limits Read applies by default: 5,000 entries,
// 5 MiB per file (Helm 3's per-file cap), 100 MiB decompressed in total
// (Helm's cap) and 256 KiB for Chart.yaml. Real charts stay far below all
// of them; the largest public charts hold a few hundred files, and a
// Chart.yaml of even a hundred dependencies is a few KiB. The Chart.yaml cap
// also bounds what a hostile document can make the YAML decoder allocate
// before it refuses excessive aliasing (about 90 MiB at 1 MiB).
func DefaultLimits() Limits {
	return Limits{
		MaxFiles:         5000,
		MaxFileSize:      5 << 20,
		MaxTotalSize:     100 << 20,
		MaxChartYAMLSize: 256 << 10,
	}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxFiles <= 0 {
		l.MaxFiles = d.MaxFiles
	}
	if l.MaxFileSize <= 0 {
		l.MaxFileSize = d.MaxFileSize
	}
	if l.MaxTotalSize <= 0 {
		l.MaxTotalSize = d.MaxTotalSize
	}
	if l.MaxChartYAMLSize <= 0 {
		l.MaxChartYAMLSize = d.MaxChartYAMLSize
	}
	return l
}

// Chart is what Read learned about a valid chart archive.
type Chart struct {
	// Name and Version are Chart.yaml's, validated; Name equals the
	// archive's top-level directory.
	Name    string
	Version string
	// APIVersion is "v1" or "v2" ("v1" when Chart.yaml omits it, as Helm
	// assumes).
	APIVersion  string
	AppVersion  string
	Description string
	Keywords    []string
	// Metadata is Chart.yaml as Helm models and sanitizes it.
	Metadata *Metadata
	// MetadataJSON is Metadata marshalled with encoding/json: Helm's field
	// names, exactly what a Helm repository index records for the chart.
	MetadataJSON []byte
	// Files is the number of regular files in the archive.
	Files int
	// Size is the decompressed size of those files in bytes.
	Size int64
	// ContentDigest is "sha256:<hex>" of the chart's content: every
	// regular file's path (relative to the chart directory) and bytes,
	// independent of the order of entries, of the gzip and tar encoding
	// and of times, modes and owners; Chart.yaml counts as its metadata
	// in canonical JSON (MetadataJSON), since `helm package` rewrites the
	// file from it. Two `helm package` runs of one directory, and a
	// `chartctl chart push` of it, give different archive bytes and the
	// same ContentDigest.
	// It is the SHA-256 of the files' 64-byte records, sorted bytewise and
	// concatenated, each record being SHA-256(path) followed by
	// SHA-256(bytes).
	ContentDigest string
}

// fileDigest is one file of a chart for the content digest: the SHA-256
// of its path, then the SHA-256 of its bytes. Hashing the path keeps the
// memory per entry fixed whatever the length of the names.
type fileDigest [2 * sha256.Size]byte

// contentDigest returns "sha256:<hex>" of files sorted bytewise and
// concatenated; files is sorted in place.
func contentDigest(files []fileDigest) string {
	slices.SortFunc(files, func(a, b fileDigest) int { return bytes.Compare(a[:], b[:]) })
	h := sha256.New()
	for i := range files {
		h.Write(files[i][:])
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// newFileDigest starts the digest of the file at rel (its path relative to
// the chart directory); the content hash is filled in by the caller.
func newFileDigest(rel string) fileDigest {
	var fd fileDigest
	p := sha256.Sum256([]byte(rel))
	copy(fd[:sha256.Size], p[:])
	return fd
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// errInflateLimit stops decompression past the bound on the whole
// decompressed stream (file contents plus tar headers and padding).
var errInflateLimit = errors.New("decompressed stream limit reached")

// errTrailing reports bytes after the last gzip member that do not start
// another member.
var errTrailing = errors.New("data after the gzip stream")

// Read reads a chart archive (gzip-compressed tar) from r as a stream and
// validates it. Memory stays bounded whatever the input: file contents are
// discarded as they are read, except Chart.yaml and requirements.yaml (at
// most lim.MaxChartYAMLSize each); decompression stops as soon as a cap is
// passed, and caps announced in tar headers are checked before any content
// is inflated.
//
// On success Read has consumed r to EOF, so a caller that tees r into a
// blob writer has stored every byte; the gzip stream was verified to its
// end (CRC and length) and nothing may follow it: trailing bytes after the
// gzip stream, or non-zero bytes after the tar end-of-archive marker, are
// rejected (Helm would ignore them; they have no place in a chart and
// would be served to every client). Concatenated gzip members are
// accepted as gzip defines them. Bounding the total input size (and so the
// work) is the caller's job, for example with http.MaxBytesReader.
//
// On error r may be left partly read. Every rejection of the archive's
// content is a *chartctl.Error with code EINVALID and Parameter "chart"
// whose message says what was wrong. An error from r itself is returned
// wrapped, so the caller can recognise its own size-limit error with
// errors.As.
func Read(r io.Reader, lim Limits) (*Chart, error) {
	return Walk(r, lim, nil)
}

// WalkFunc receives one regular file of a chart archive during Walk: its
// path relative to the chart directory (cleaned, slash-separated, never
// "." and never escaping the directory), its decompressed size, and its
// content, which yields at most size bytes. The function may read all,
// part or none of content; what it leaves unread is discarded. An error
// it returns stops Walk and is returned as is.
type WalkFunc func(path string, size int64, content io.Reader) error

// Walk reads and validates a chart archive exactly as Read does, and
// calls fn (when not nil) for every regular file of the chart, in archive
// order, after the file's entry passed every check and before its content
// is discarded. fn runs before the archive is known to be valid as a whole:
// a caller must ignore what it gathered when Walk returns an error. Memory
// stays bounded as for Read, plus what fn keeps (each file is at most
// lim.MaxFileSize).
func Walk(r io.Reader, lim Limits, fn WalkFunc) (*Chart, error) {
	lim = lim.withDefaults()
	rd := &reader{lim: lim, src: &sourceReader{r: r}, visit: fn}
	return rd.read()
}

// sourceReader remembers the first error of the caller's reader other than
// io.EOF, so that it is reported as such and not as a corrupt archive.
type sourceReader struct {
	r   io.Reader
	err error
}

func (s *sourceReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF && s.err == nil {
		s.err = err
	}
	return n, err
}

// inflated counts decompressed bytes, stops at max, and remembers the
// decompressor's first error.
type inflated struct {
	r   io.Reader
	n   int64
	max int64
	err error
}

func (z *inflated) Read(p []byte) (int, error) {
	if z.n >= z.max {
		if z.err == nil {
			z.err = errInflateLimit
		}
		return 0, errInflateLimit
	}
	if int64(len(p)) > z.max-z.n {
		p = p[:z.max-z.n]
	}
	n, err := z.r.Read(p)
	z.n += int64(n)
	if err != nil && z.err == nil {
		z.err = err
	}
	return n, err
}

// counted counts what is read through it and remembers the first error.
type counted struct {
	r   io.Reader
	n   int64
	err error
}

func (c *counted) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err != nil && c.err == nil {
		c.err = err
	}
	return n, err
}

// members reads a gzip stream member after member (RFC 1952 allows
// several), telling a following member from trailing bytes.
type members struct {
	br  *bufio.Reader
	gz  *gzip.Reader
	err error
}

func (m *members) Read(p []byte) (int, error) {
	for m.err == nil {
		n, err := m.gz.Read(p)
		if !errors.Is(err, io.EOF) {
			if err != nil {
				m.err = err
			}
			return n, err
		}
		// The member ended with a valid checksum; what follows is another
		// member, the end of the input, or trailing data.
		if _, perr := m.br.Peek(1); perr != nil {
			m.err = perr
		} else if rerr := m.gz.Reset(m.br); rerr != nil {
			m.err = errTrailing
		} else {
			m.gz.Multistream(false)
		}
		if n > 0 {
			return n, nil
		}
	}
	return 0, m.err
}

type reader struct {
	lim Limits
	src *sourceReader
	br  *bufio.Reader
	z   *inflated

	entries  int
	files    int
	size     int64
	top      string
	lastName string

	chartYAML    []byte
	requirements []byte

	// digests holds each regular file's path and hash for ContentDigest.
	digests []fileDigest

	// visit is Walk's callback, nil for Read.
	visit WalkFunc
}

// invalidPrefix opens the message of every archive Read refuses.
const invalidPrefix = "Invalid chart archive: "

// invalid returns the EINVALID error naming "chart".
func invalid(format string, args ...any) error {
	return chartctl.Invalid("chart", invalidPrefix+format, args...)
}

// Reason is why Read refused an archive, for a sentence of the caller's
// own ("web-1.0.0.tgz is not a valid chart archive: …"): err's message
// without its opening "Invalid chart archive: ".
func Reason(err error) string {
	return strings.TrimPrefix(chartctl.ErrorMessage(err), invalidPrefix)
}

// gzipReaders keeps read's gzip readers: a new one allocates its 32 KiB
// window, and every upload and page render reads an archive.
var gzipReaders sync.Pool

func (rd *reader) read() (*Chart, error) {
	// bufio.Reader is an io.ByteReader, so the gzip reader reads no
	// further than each member's end and trailing bytes can be told apart
	// from a following member.
	rd.br = bufio.NewReader(rd.src)
	// A short file that does not even start like gzip is "not gzip", not
	// "truncated gzip".
	if magic, _ := rd.br.Peek(2); len(magic) > 0 && !bytes.HasPrefix([]byte{0x1f, 0x8b}, magic) {
		return nil, invalid("not gzip-compressed.")
	}
	gz, _ := gzipReaders.Get().(*gzip.Reader)
	if gz == nil {
		gz = new(gzip.Reader)
	}
	defer gzipReaders.Put(gz)
	if err := gz.Reset(rd.br); err != nil {
		switch {
		case rd.src.err != nil:
			return nil, fmt.Errorf("read chart archive: %w", rd.src.err)
		case errors.Is(err, io.EOF):
			return nil, invalid("the file is empty.")
		case errors.Is(err, io.ErrUnexpectedEOF):
			return nil, invalid("truncated gzip stream.")
		default:
			return nil, invalid("not gzip-compressed.")
		}
	}
	gz.Multistream(false)

	// Bound the whole decompressed stream, not just file contents: tar
	// headers (and PAX records of up to 1 MiB each) are inflated too. Each
	// entry gets 4 KiB of header and padding allowance, far more than a
	// real archive uses.
	rd.z = &inflated{r: &members{br: rd.br, gz: gz}, max: rd.lim.MaxTotalSize + int64(rd.lim.MaxFiles)*4096 + 1<<20}

	tr := tar.NewReader(rd.z)
	for {
		hd, err := tr.Next()
		if errors.Is(err, io.EOF) && (rd.z.err == nil || rd.z.err == io.EOF) {
			break
		}
		if err != nil {
			return nil, rd.streamError(err)
		}
		if err := rd.entry(tr, hd); err != nil {
			return nil, err
		}
	}
	if rd.entries == 0 {
		return nil, invalid("the archive contains no files.")
	}
	if rd.chartYAML == nil {
		return nil, invalid("no Chart.yaml in the chart directory %q.", rd.top)
	}
	if err := rd.drain(); err != nil {
		return nil, err
	}
	return rd.metadata()
}

// entry checks one tar entry and consumes its content.
func (rd *reader) entry(tr *tar.Reader, hd *tar.Header) error {
	if hd.Typeflag == tar.TypeXGlobalHeader {
		// A PAX global header is metadata, not an entry (Helm skips it).
		return nil
	}
	rd.entries++
	if rd.entries > rd.lim.MaxFiles {
		return invalid("more than %d entries.", rd.lim.MaxFiles)
	}
	rel, err := rd.entryPath(hd)
	if err != nil {
		return err
	}
	rd.lastName = hd.Name
	switch hd.Typeflag {
	case tar.TypeDir:
		return nil
	case tar.TypeReg:
	case tar.TypeSymlink:
		return invalid("entry %q is a symbolic link; only regular files and directories are allowed.", quoteName(hd.Name))
	case tar.TypeLink:
		return invalid("entry %q is a hard link; only regular files and directories are allowed.", quoteName(hd.Name))
	case tar.TypeChar, tar.TypeBlock:
		return invalid("entry %q is a device file; only regular files and directories are allowed.", quoteName(hd.Name))
	case tar.TypeFifo:
		return invalid("entry %q is a named pipe; only regular files and directories are allowed.", quoteName(hd.Name))
	default:
		return invalid("entry %q has unsupported type %q; only regular files and directories are allowed.", quoteName(hd.Name), string(hd.Typeflag))
	}
	for k := range hd.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return invalid("entry %q is a sparse file; only regular files and directories are allowed.", quoteName(hd.Name))
		}
	}
	if rel == "." {
		return invalid("entry %q is outside the chart directory.", quoteName(hd.Name))
	}

	// Caps are checked against the header first, so an oversized file is
	// rejected before a byte of it is inflated; Go's tar reader then yields
	// exactly hd.Size bytes, so the header cannot understate the content.
	if hd.Size > rd.lim.MaxFileSize {
		return invalid("file %q is larger than %s decompressed.", quoteName(hd.Name), formatSize(rd.lim.MaxFileSize))
	}
	if hd.Size > rd.lim.MaxTotalSize-rd.size {
		return invalid("decompressed size exceeds %s.", formatSize(rd.lim.MaxTotalSize))
	}

	var keep *[]byte
	switch rel {
	case "Chart.yaml":
		keep = &rd.chartYAML
	case "requirements.yaml":
		keep = &rd.requirements
	}
	if keep != nil {
		if *keep != nil {
			return invalid("more than one %s in the chart directory.", rel)
		}
		if hd.Size > rd.lim.MaxChartYAMLSize {
			return invalid("%s is larger than %s.", rel, formatSize(rd.lim.MaxChartYAMLSize))
		}
		buf := make([]byte, hd.Size)
		if _, err := io.ReadFull(tr, buf); err != nil {
			return rd.streamError(err)
		}
		*keep = buf
		// Chart.yaml counts by what it says, not how it is written (see
		// ContentDigest); requirements.yaml by its bytes.
		if rel != "Chart.yaml" {
			fd, sum := newFileDigest(rel), sha256.Sum256(buf)
			copy(fd[sha256.Size:], sum[:])
			rd.digests = append(rd.digests, fd)
		}
		if rd.visit != nil {
			if err := rd.visit(rel, hd.Size, bytes.NewReader(buf)); err != nil {
				return err
			}
		}
	} else {
		// What the callback reads is hashed too: the tee sits below it.
		h := sha256.New()
		content := &counted{r: io.TeeReader(tr, h)}
		if rd.visit != nil {
			if err := rd.visit(rel, hd.Size, content); err != nil {
				// A problem of the archive met while the callback read is
				// reported as such, not as the callback's error.
				if content.err != nil && content.err != io.EOF {
					return rd.streamError(content.err)
				}
				return err
			}
		}
		if _, err := io.Copy(io.Discard, content); err != nil {
			return rd.streamError(err)
		}
		if content.n != hd.Size {
			return rd.streamError(io.ErrUnexpectedEOF)
		}
		fd := newFileDigest(rel)
		h.Sum(fd[sha256.Size:sha256.Size])
		rd.digests = append(rd.digests, fd)
	}
	rd.files++
	rd.size += hd.Size
	return nil
}

// entryPath checks an entry's name and returns its path relative to the
// chart directory, cleaned ("." for the directory itself).
func (rd *reader) entryPath(hd *tar.Header) (string, error) {
	name := hd.Name
	q := quoteName(name)
	if name == "" {
		return "", invalid("an entry has an empty name.")
	}
	if strings.ContainsRune(name, '\\') {
		return "", invalid("entry %q contains a backslash.", q)
	}
	if strings.HasPrefix(name, "/") {
		return "", invalid("entry %q has an absolute path.", q)
	}
	parts := strings.Split(name, "/")
	for _, p := range parts {
		if p == ".." {
			return "", invalid("entry %q escapes the chart directory.", q)
		}
		// "C:" as a path element is a Windows drive (Helm rejects the
		// same after its own path normalisation).
		if len(p) == 2 && p[1] == ':' && isASCIILetter(p[0]) {
			return "", invalid("entry %q contains a drive letter.", q)
		}
	}
	first := parts[0]
	if first == "." || first == "" {
		return "", invalid("entry %q is not inside a chart directory.", q)
	}
	rel := strings.Join(parts[1:], "/")
	if path.IsAbs(rel) {
		// "c//x" is absolute once the directory is stripped; Helm rejects
		// it as such.
		return "", invalid("entry %q has an absolute path.", q)
	}
	rel = path.Clean(rel)
	if strings.HasPrefix(rel, "..") {
		// Helm's loader rejects every cleaned path that starts with "..",
		// "..data" included.
		return "", invalid("entry %q has a name starting with \"..\".", q)
	}
	if rd.top == "" {
		rd.top = first
	} else if first != rd.top {
		return "", invalid("more than one top-level directory (%q and %q); a chart archive holds exactly one chart.", quoteName(rd.top), quoteName(first))
	}
	return rel, nil
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// drain reads what follows the tar end-of-archive marker: zero padding up
// to the end of the gzip stream, then the end of r.
func (rd *reader) drain() error {
	// Every archive read ends here: a buffer of its own each time was
	// about half of what a read allocated.
	bp := bufpool.Get()
	defer bufpool.Put(bp)
	buf := *bp
	for {
		n, err := rd.z.Read(buf)
		for _, b := range buf[:n] {
			if b != 0 {
				return invalid("unexpected data after the end of the tar archive.")
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return rd.streamError(err)
		}
	}
	// members stops only at the end of the input, so this normally reads
	// nothing; it keeps the promise to consume r independent of that.
	n, err := io.Copy(io.Discard, rd.br)
	if err != nil {
		return fmt.Errorf("read chart archive: %w", err)
	}
	if n > 0 {
		return invalid("unexpected data after the end of the gzip stream.")
	}
	return nil
}

// streamError explains an error met while reading the tar stream: an
// error of the caller's reader, a cap, a gzip problem or a tar problem.
func (rd *reader) streamError(err error) error {
	if rd.src.err != nil {
		return fmt.Errorf("read chart archive: %w", rd.src.err)
	}
	zerr := rd.z.err
	var corrupt flate.CorruptInputError
	switch {
	case errors.Is(zerr, errInflateLimit) || errors.Is(err, errInflateLimit):
		return invalid("decompressed size exceeds %s.", formatSize(rd.lim.MaxTotalSize))
	case errors.Is(zerr, gzip.ErrChecksum):
		return invalid("gzip checksum mismatch; the archive is corrupt.")
	case errors.Is(zerr, errTrailing):
		return invalid("unexpected data after the end of the gzip stream.")
	case errors.Is(zerr, io.ErrUnexpectedEOF):
		return invalid("truncated gzip stream.")
	case errors.As(zerr, &corrupt):
		return invalid("corrupt gzip data.")
	case zerr != nil && zerr != io.EOF:
		return invalid("corrupt gzip data.")
	}
	// The gzip stream is sound so far: the problem is the tar inside.
	if rd.entries == 0 && rd.lastName == "" {
		return invalid("not a tar archive.")
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return invalid("truncated tar archive.")
	}
	return invalid("corrupt tar entry after %q.", quoteName(rd.lastName))
}

// metadata parses and validates Chart.yaml.
func (rd *reader) metadata() (*Chart, error) {
	md := new(Metadata)
	// sigs.k8s.io/yaml is what Helm's loader uses: YAML is converted to
	// JSON (by go.yaml.in/yaml/v2, which refuses alias bombs) and decoded
	// with encoding/json, so a field of the wrong type is an error.
	if err := yaml.Unmarshal(bytes.TrimPrefix(rd.chartYAML, utf8BOM), md); err != nil {
		return nil, invalid("cannot parse Chart.yaml: %s.", yamlProblem(err))
	}
	// Helm 2 accepted charts without an apiVersion; Helm assumes v1.
	if md.APIVersion == "" {
		md.APIVersion = APIVersionV1
	}
	if rd.requirements != nil {
		// Helm merges requirements.yaml (the v1 way to declare
		// dependencies) into the metadata after Chart.yaml.
		if err := yaml.Unmarshal(bytes.TrimPrefix(rd.requirements, utf8BOM), md); err != nil {
			return nil, invalid("cannot parse requirements.yaml: %s.", yamlProblem(err))
		}
	}
	if md.APIVersion != APIVersionV1 && md.APIVersion != APIVersionV2 {
		return nil, invalid("Chart.yaml apiVersion %q is not supported; use v2 (or v1).", quoteName(md.APIVersion))
	}
	if err := md.Validate(); err != nil {
		return nil, invalid("Chart.yaml: %s.", err.Error())
	}
	if msg := nameProblem(md.Name); msg != "" {
		return nil, invalid("Chart.yaml name %q is invalid: %s.", quoteName(md.Name), msg)
	}
	if msg := versionProblem(md.Version); msg != "" {
		return nil, invalid("Chart.yaml version %q is invalid: %s.", quoteName(md.Version), msg)
	}
	if md.Name != rd.top {
		return nil, invalid("Chart.yaml name %q does not match the chart directory %q.", quoteName(md.Name), quoteName(rd.top))
	}
	js, err := json.Marshal(md)
	if err != nil {
		// Every field is a string, bool, slice or map of JSON values
		// decoded from JSON, so this cannot fail; report it as a bug.
		return nil, fmt.Errorf("encode chart metadata: %w", err)
	}
	// `helm package` writes Chart.yaml anew from its metadata (keys
	// sorted, comments dropped), so the same chart directory packaged by
	// Helm and by chartctl differs in Chart.yaml's bytes only: it enters
	// the content digest as its metadata in canonical JSON.
	fd, sum := newFileDigest("Chart.yaml"), sha256.Sum256(js)
	copy(fd[sha256.Size:], sum[:])
	rd.digests = append(rd.digests, fd)
	return &Chart{
		Name:          md.Name,
		Version:       md.Version,
		APIVersion:    md.APIVersion,
		AppVersion:    md.AppVersion,
		Description:   md.Description,
		Keywords:      md.Keywords,
		Metadata:      md,
		MetadataJSON:  js,
		Files:         rd.files,
		Size:          rd.size,
		ContentDigest: contentDigest(rd.digests),
	}, nil
}

// yamlProblem turns a sigs.k8s.io/yaml error into a short explanation for
// the uploader (it carries no server detail, only the document's own).
func yamlProblem(err error) string {
	msg := err.Error()
	for _, p := range []string{"error converting YAML to JSON: ", "error unmarshaling JSON: ", "while decoding JSON: ", "yaml: ", "json: "} {
		msg = strings.ReplaceAll(msg, p, "")
	}
	msg = strings.TrimSuffix(strings.TrimSpace(msg), ".")
	if len(msg) > 200 {
		msg = strings.ToValidUTF8(msg[:200], "") + "…"
	}
	return msg
}

// quoteName shortens a name from the archive before it is quoted in a
// message (names may be up to a megabyte long in PAX headers).
func quoteName(s string) string {
	const max = 256
	if len(s) <= max {
		return s
	}
	return strings.ToValidUTF8(s[:max], "") + "…"
}

// formatSize renders a byte count as the largest exact binary unit.
func formatSize(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
