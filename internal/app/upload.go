package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/chartctl/chartctl/internal/chart"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/text"
)

// maxProvSize bounds a provenance file; real ones are a few KiB.
const maxProvSize = 1 << 20

// errTooLarge marks a body that passed the archive size limit while it was
// being streamed.
var errTooLarge = errors.New("archive exceeds the maximum size")

// Upload is a received, validated, not yet committed chart archive with
// its optional provenance file. Pass it to PutChart, or call Abort.
type Upload struct {
	// Chart is what the archive holds.
	Chart *chart.Chart
	// CreatedAt is the time the form field "created_at" asked to keep
	// (zero when absent). Only a server admin may set it (CheckCreatedAt).
	CreatedAt time.Time
	blob      chartctl.BlobWriter
	prov      chartctl.BlobWriter
	// archive and provBytes keep what was received in memory too, for
	// the admission policy (CheckPolicy), which reads every file and may
	// refuse the chart before anything is stored. Both are bounded: by
	// the maximum chart size and by maxProvSize.
	archive   *bytes.Buffer
	provBytes *bytes.Buffer
}

// HasProvenance reports whether a provenance file came with the upload.
func (u *Upload) HasProvenance() bool { return u.prov != nil }

// Abort discards the upload's uncommitted blobs. It is safe after PutChart.
func (u *Upload) Abort() {
	if u.blob != nil {
		_ = u.blob.Abort()
	}
	if u.prov != nil {
		_ = u.prov.Abort()
	}
}

// ReceiveMultipart streams a multipart/form-data upload into blob writers,
// validating the archive on the way: field "chart" (required) and "prov"
// (optional). The size limit applies while streaming, never after
// buffering. The caller must pass the upload to PutChart or Abort it.
func (a *App) ReceiveMultipart(w http.ResponseWriter, req *http.Request) (*Upload, error) {
	u, err := a.receiveMultipart(w, req)
	if err != nil {
		a.observeUpload(false, err)
	}
	return u, err
}

func (a *App) receiveMultipart(w http.ResponseWriter, req *http.Request) (*Upload, error) {
	mt, _, err := mime.ParseMediaType(req.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		return nil, chartctl.Errorf(chartctl.EMEDIATYPE, "Upload the chart as multipart/form-data with the archive in field \"chart\".")
	}
	req.Body = http.MaxBytesReader(w, req.Body, a.Config.MaxChartSize+maxProvSize+1<<20)
	mr, err := req.MultipartReader()
	if err != nil {
		return nil, chartctl.Invalid("body", "Malformed multipart body.")
	}
	u := &Upload{}
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			u.Abort()
			return nil, a.bodyError(err, "Malformed multipart body.")
		}
		switch part.FormName() {
		case "chart":
			if u.blob != nil {
				u.Abort()
				return nil, chartctl.Invalid("chart", "Send one chart archive per upload.")
			}
			err = a.receiveChart(req.Context(), u, part)
		case "prov":
			if u.prov != nil {
				u.Abort()
				return nil, chartctl.Invalid("prov", "Send one provenance file per upload.")
			}
			err = a.receiveProv(req.Context(), u, part)
		case "created_at":
			u.CreatedAt, err = readCreatedAt(part)
		default:
			err = chartctl.Invalid(part.FormName(), "Unknown form field %q: send the archive in \"chart\", an optional provenance file in \"prov\" and an optional \"created_at\".", part.FormName())
		}
		part.Close()
		if err != nil {
			u.Abort()
			return nil, err
		}
	}
	if u.blob == nil {
		u.Abort()
		return nil, chartctl.Invalid("chart", "Missing form field \"chart\" holding the chart archive (.tgz).")
	}
	return u, nil
}

// readCreatedAt parses the form field "created_at": an RFC 3339 time.
func readCreatedAt(r io.Reader) (time.Time, error) {
	b, err := io.ReadAll(io.LimitReader(r, 65))
	if err != nil {
		return time.Time{}, chartctl.Invalid("created_at", "Could not read the created_at field.")
	}
	v := strings.TrimSpace(string(b))
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil || len(b) > 64 {
		return time.Time{}, chartctl.Invalid("created_at", "created_at must be an RFC 3339 time such as 2024-05-01T12:00:00Z, not %q.", truncate(v, 40))
	}
	return t.UTC(), nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// CheckCreatedAt refuses an upload that sets created_at (CONTRACT §14:
// an import keeping a version's original time) unless p is a server admin
// whose credential carries the admin scope, chartctl.ScopeAdmin (see
// RequireAdmin). The refusal names the admin scope.
func CheckCreatedAt(p *chartctl.Principal, u *Upload) error {
	if u.CreatedAt.IsZero() {
		return nil
	}
	if RequireAdmin(p) != nil {
		return &chartctl.Error{Code: chartctl.EFORBIDDEN, MissingScope: chartctl.ScopeAdmin,
			Message: "Only a server admin's credential with the admin scope may set created_at; upload without it to stamp the version with the current time."}
	}
	return nil
}

// ReceiveRaw reads a chart archive sent as the whole request body.
func (a *App) ReceiveRaw(w http.ResponseWriter, req *http.Request) (*Upload, error) {
	req.Body = http.MaxBytesReader(w, req.Body, a.Config.MaxChartSize+1)
	return a.ReceiveArchive(req.Context(), req.Body)
}

// ReceiveArchive streams a chart archive from r into a new blob while
// validating it.
func (a *App) ReceiveArchive(ctx context.Context, r io.Reader) (*Upload, error) {
	u := &Upload{}
	if err := a.receiveChart(ctx, u, r); err != nil {
		u.Abort()
		a.observeUpload(false, err)
		return nil, err
	}
	return u, nil
}

// ReceiveStoredArchive validates the chart archive already in the blob
// store as digest (b, open on it): an OCI push's chart layer, which the
// registry stored and verified when it was uploaded. Unlike
// ReceiveArchive it writes nothing; committing the upload checks the blob
// is still there.
func (a *App) ReceiveStoredArchive(ctx context.Context, digest string, b chartctl.Blob) (*Upload, error) {
	u, err := a.receiveStored(ctx, digest, b)
	if err != nil {
		a.observeUpload(false, err)
	}
	return u, err
}

func (a *App) receiveStored(ctx context.Context, digest string, b chartctl.Blob) (*Upload, error) {
	if b.Size() > a.Config.MaxChartSize {
		return nil, a.tooLarge()
	}
	ch, err := chart.Read(b, a.Config.ChartLimits)
	if chartctl.ErrorCode(err) == chartctl.EINTERNAL {
		return nil, fmt.Errorf("read stored chart archive %s: %w", digest, err)
	} else if err != nil {
		return nil, err
	}
	return &Upload{Chart: ch, blob: &storedBlob{ctx: ctx, blobs: a.Blobs, digest: digest, size: b.Size(), recent: a.CommittedRecently}}, nil
}

// storedBlob is an upload's blob that the blob store holds already.
type storedBlob struct {
	ctx    context.Context
	blobs  chartctl.BlobStore
	digest string
	size   int64
	// recent reports a blob this process committed so recently that it
	// is still stored (CommittedRecently).
	recent func(digest string) bool
}

func (s *storedBlob) Write([]byte) (int, error) {
	return 0, errors.New("a stored blob is not written")
}
func (s *storedBlob) Digest() string { return s.digest }
func (s *storedBlob) Size() int64    { return s.size }
func (s *storedBlob) Abort() error   { return nil }

// Commit checks the blob is still stored (the caller's claim on its
// digest, or the link of an OCI push (linkedUpload), keeps it so until
// the chart version refers to it): a stat, not a
// read (on S3 a HEAD, not a GET), unless this process has just committed
// it (CommittedRecently: no process deletes it yet).
func (s *storedBlob) Commit() (string, error) {
	if s.recent != nil && s.recent(s.digest) {
		return s.digest, nil
	}
	if _, err := s.blobs.ModTime(s.ctx, s.digest); err != nil {
		return "", fmt.Errorf("stored chart archive %s: %w", s.digest, err)
	}
	return s.digest, nil
}

// receiveChart streams one archive into a new blob while validating it.
func (a *App) receiveChart(ctx context.Context, u *Upload, r io.Reader) error {
	bw, err := a.Blobs.Create(ctx)
	if err != nil {
		return err
	}
	u.blob = bw
	lr := &limitedReader{r: r, n: a.Config.MaxChartSize}
	u.archive = &bytes.Buffer{}
	sw := &storeWriter{w: bw, copy: u.archive}
	tee := io.TeeReader(lr, sw)
	ch, err := chart.Read(tee, a.Config.ChartLimits)
	if lr.exceeded {
		return a.tooLarge()
	}
	if sw.err != nil {
		// The disk, not the archive: full, read-only or failing.
		return fmt.Errorf("store chart archive: %w", sw.err)
	}
	if err != nil {
		// An oversized body is 413 whatever else is wrong with it; finding
		// out reads at most the limit.
		if _, derr := io.Copy(io.Discard, lr); lr.exceeded || errors.Is(derr, errTooLarge) {
			return a.tooLarge()
		}
		if chartctl.ErrorCode(err) == chartctl.EINTERNAL {
			return a.bodyError(err, "Could not read the chart archive.")
		}
		return err
	}
	// Read consumes its input to the end; this catches what it left.
	if _, err := io.Copy(io.Discard, tee); err != nil || lr.exceeded {
		if lr.exceeded {
			return a.tooLarge()
		}
		if sw.err != nil {
			return fmt.Errorf("store chart archive: %w", sw.err)
		}
		return a.bodyError(err, "Could not read the chart archive.")
	}
	u.Chart = ch
	return nil
}

func (a *App) receiveProv(ctx context.Context, u *Upload, r io.Reader) error {
	bw, err := a.Blobs.Create(ctx)
	if err != nil {
		return err
	}
	u.prov = bw
	lr := &limitedReader{r: r, n: maxProvSize}
	u.provBytes = &bytes.Buffer{}
	sw := &storeWriter{w: bw, copy: u.provBytes}
	if _, err := io.Copy(sw, lr); err != nil || lr.exceeded {
		if lr.exceeded {
			return chartctl.Errorf(chartctl.ETOOLARGE, "The provenance file is larger than 1 MiB.")
		}
		if sw.err != nil {
			return fmt.Errorf("store provenance file: %w", sw.err)
		}
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return a.tooLarge()
		}
		return chartctl.Invalid("prov", "Could not read the provenance file.")
	}
	if bw.Size() == 0 {
		return chartctl.Invalid("prov", "The provenance file is empty.")
	}
	return nil
}

// ReceiveProv adds a provenance file read from r to u.
func (a *App) ReceiveProv(ctx context.Context, u *Upload, r io.Reader) error {
	if u.prov != nil {
		return chartctl.Invalid("prov", "Send one provenance file per upload.")
	}
	return a.receiveProv(ctx, u, r)
}

func (a *App) tooLarge() error {
	return chartctl.Errorf(chartctl.ETOOLARGE, "The chart archive is larger than the maximum of %s.", text.HumanBytes(a.Config.MaxChartSize))
}

// bodyError turns a failure to read the request body into a client error:
// a body over the byte limit is 413, anything else 400.
func (a *App) bodyError(err error, msg string) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) || errors.Is(err, errTooLarge) {
		return a.tooLarge()
	}
	return chartctl.Invalid("chart", "%s", msg)
}

// storeWriter remembers the first error of the blob writer it wraps, so
// a failure to store the upload (a full or read-only disk) is told apart
// from a failure to read it, which is the client's.
type storeWriter struct {
	w   io.Writer
	err error
	// copy, if set, receives what was written too.
	copy *bytes.Buffer
}

func (s *storeWriter) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	if err != nil && s.err == nil {
		s.err = err
	}
	if s.copy != nil {
		s.copy.Write(p[:n])
	}
	return n, err
}

// limitedReader reads at most n bytes and records whether the input had
// more.
type limitedReader struct {
	r        io.Reader
	n        int64
	exceeded bool
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.exceeded {
		return 0, errTooLarge
	}
	if int64(len(p)) > l.n+1 {
		p = p[:l.n+1]
	}
	n, err := l.r.Read(p)
	if int64(n) > l.n {
		l.exceeded = true
		return int(l.n), errTooLarge
	}
	l.n -= int64(n)
	return n, err
}
