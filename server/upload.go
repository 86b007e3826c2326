package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sort"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/chart"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/helmindex"
)

// maxProvSize bounds a provenance file; real ones are a few KiB.
const maxProvSize = 1 << 20

// errTooLarge marks a body that passed the archive size limit while it was
// being streamed.
var errTooLarge = errors.New("archive exceeds the maximum size")

// upload is a received, validated, not yet committed chart archive.
type upload struct {
	chart *chart.Chart
	blob  chartctl.BlobWriter
	prov  chartctl.BlobWriter
}

func (u *upload) abort() {
	if u.blob != nil {
		_ = u.blob.Abort()
	}
	if u.prov != nil {
		_ = u.prov.Abort()
	}
}

// receiveMultipart streams a multipart/form-data upload into blob writers,
// validating the archive on the way: field "chart" (required) and "prov"
// (optional). The size limit applies while streaming, never after
// buffering. The caller must call abort or commit.
func (s *Server) receiveMultipart(c echo.Context) (*upload, error) {
	req := c.Request()
	mt, _, err := mime.ParseMediaType(req.Header.Get(echo.HeaderContentType))
	if err != nil || mt != "multipart/form-data" {
		return nil, chartctl.Errorf(chartctl.EMEDIATYPE, "Upload the chart as multipart/form-data with the archive in field \"chart\".")
	}
	req.Body = http.MaxBytesReader(c.Response(), req.Body, s.Config.MaxChartSize+maxProvSize+1<<20)
	mr, err := req.MultipartReader()
	if err != nil {
		return nil, chartctl.Invalid("body", "Malformed multipart body.")
	}
	u := &upload{}
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			u.abort()
			return nil, s.bodyError(err, "Malformed multipart body.")
		}
		switch part.FormName() {
		case "chart":
			if u.blob != nil {
				u.abort()
				return nil, chartctl.Invalid("chart", "Send one chart archive per upload.")
			}
			err = s.receiveChart(req.Context(), u, part)
		case "prov":
			if u.prov != nil {
				u.abort()
				return nil, chartctl.Invalid("prov", "Send one provenance file per upload.")
			}
			err = s.receiveProv(req.Context(), u, part)
		default:
			err = chartctl.Invalid(part.FormName(), "Unknown form field %q: send the archive in \"chart\" and an optional provenance file in \"prov\".", part.FormName())
		}
		part.Close()
		if err != nil {
			u.abort()
			return nil, err
		}
	}
	if u.blob == nil {
		u.abort()
		return nil, chartctl.Invalid("chart", "Missing form field \"chart\" holding the chart archive (.tgz).")
	}
	return u, nil
}

// receiveRaw reads a chart archive sent as the whole request body.
func (s *Server) receiveRaw(c echo.Context) (*upload, error) {
	req := c.Request()
	req.Body = http.MaxBytesReader(c.Response(), req.Body, s.Config.MaxChartSize+1)
	u := &upload{}
	if err := s.receiveChart(req.Context(), u, req.Body); err != nil {
		u.abort()
		return nil, err
	}
	return u, nil
}

// receiveChart streams one archive into a new blob while validating it.
func (s *Server) receiveChart(ctx context.Context, u *upload, r io.Reader) error {
	bw, err := s.Blobs.Create(ctx)
	if err != nil {
		return err
	}
	u.blob = bw
	lr := &limitedReader{r: r, n: s.Config.MaxChartSize}
	sw := &storeWriter{w: bw}
	tee := io.TeeReader(lr, sw)
	ch, err := chart.Read(tee, s.Config.ChartLimits)
	if lr.exceeded {
		return s.tooLarge()
	}
	if sw.err != nil {
		// The disk, not the archive: full, read-only or failing.
		return fmt.Errorf("store chart archive: %w", sw.err)
	}
	if err != nil {
		// An oversized body is 413 whatever else is wrong with it; finding
		// out reads at most the limit.
		if _, derr := io.Copy(io.Discard, lr); lr.exceeded || errors.Is(derr, errTooLarge) {
			return s.tooLarge()
		}
		if chartctl.ErrorCode(err) == chartctl.EINTERNAL {
			return s.bodyError(err, "Could not read the chart archive.")
		}
		return err
	}
	// Read consumes its input to the end; this catches what it left.
	if _, err := io.Copy(io.Discard, tee); err != nil || lr.exceeded {
		if lr.exceeded {
			return s.tooLarge()
		}
		if sw.err != nil {
			return fmt.Errorf("store chart archive: %w", sw.err)
		}
		return s.bodyError(err, "Could not read the chart archive.")
	}
	u.chart = ch
	return nil
}

func (s *Server) receiveProv(ctx context.Context, u *upload, r io.Reader) error {
	bw, err := s.Blobs.Create(ctx)
	if err != nil {
		return err
	}
	u.prov = bw
	lr := &limitedReader{r: r, n: maxProvSize}
	sw := &storeWriter{w: bw}
	if _, err := io.Copy(sw, lr); err != nil || lr.exceeded {
		if lr.exceeded {
			return chartctl.Errorf(chartctl.ETOOLARGE, "The provenance file is larger than 1 MiB.")
		}
		if sw.err != nil {
			return fmt.Errorf("store provenance file: %w", sw.err)
		}
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return s.tooLarge()
		}
		return chartctl.Invalid("prov", "Could not read the provenance file.")
	}
	if bw.Size() == 0 {
		return chartctl.Invalid("prov", "The provenance file is empty.")
	}
	return nil
}

func (s *Server) tooLarge() error {
	return chartctl.Errorf(chartctl.ETOOLARGE, "The chart archive is larger than the maximum of %s.", humanBytes(s.Config.MaxChartSize))
}

// bodyError turns a failure to read the request body into a client error:
// a body over the byte limit is 413, anything else 400.
func (s *Server) bodyError(err error, msg string) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) || errors.Is(err, errTooLarge) {
		return s.tooLarge()
	}
	return chartctl.Invalid("chart", "%s", msg)
}

// commit makes the upload durable and records it: blobs are fsynced and
// renamed into place before the metadata transaction that refers to them,
// all under the digests' locks so no orphan sweep can remove them between.
// countUpload records an upload's outcome in the metrics.
func (s *Server) countUpload(created bool, err error) {
	switch {
	case err != nil:
		s.metrics.uploads.WithLabelValues("rejected", chartctl.ErrorCode(err)).Inc()
	case created:
		s.metrics.uploads.WithLabelValues("accepted", "created").Inc()
	default:
		s.metrics.uploads.WithLabelValues("accepted", "unchanged").Inc()
	}
}

func (s *Server) commit(ctx context.Context, repo *chartctl.Repository, u *upload, overwrite bool) (*chartctl.ChartVersion, bool, error) {
	defer u.abort()
	digests := []string{u.blob.Digest()}
	if u.prov != nil {
		digests = append(digests, u.prov.Digest())
	}
	// RepositoryID binds the upload to the repository it was authorized
	// against: if that one is deleted and its name re-created meanwhile,
	// the store refuses it.
	cv := &chartctl.ChartVersion{
		Repository: repo.Name, RepositoryID: repo.ID, Name: u.chart.Name, Version: u.chart.Version,
		AppVersion: u.chart.AppVersion, Description: u.chart.Description, Keywords: u.chart.Keywords,
		ContentDigest: u.chart.ContentDigest, Size: u.blob.Size(), CreatedAt: s.Now().UTC(), Metadata: u.chart.MetadataJSON,
	}
	stored, created, orphans, err := func() (*chartctl.ChartVersion, bool, []string, error) {
		unlock := s.locks.lockAll(digests)
		defer unlock()
		d, err := u.blob.Commit()
		if err != nil {
			return nil, false, nil, err
		}
		cv.Digest = d
		if u.prov != nil {
			if cv.ProvDigest, err = u.prov.Commit(); err != nil {
				return nil, false, nil, err
			}
		}
		cv.IndexEntry = helmindex.RenderEntry(cv)
		return s.Store.PutChartVersion(ctx, cv, overwrite)
	}()
	if err != nil || !created {
		// A refused or repeated upload may leave its freshly written blob
		// unreferenced.
		for _, d := range digests {
			s.deleteIfOrphan(ctx, d)
		}
	}
	for _, d := range orphans {
		s.deleteIfOrphan(ctx, d)
	}
	if err != nil {
		return nil, false, err
	}
	// The index entry is re-read from the store, not taken from this
	// upload: a delete or another overwrite of the same version may have
	// committed after this one and reached the cache first.
	s.index.Refresh(context.WithoutCancel(ctx), repo.Name, stored.Name, stored.Version)
	return stored, created, nil
}

// lockAll takes the stripes of several digests in a fixed order.
func (l *digestLocks) lockAll(digests []string) func() {
	idx := map[int]bool{}
	for _, d := range digests {
		idx[l.stripe(d)] = true
	}
	order := make([]int, 0, len(idx))
	for i := range idx {
		order = append(order, i)
	}
	sort.Ints(order)
	for _, i := range order {
		l.stripes[i].Lock()
	}
	return func() {
		for _, i := range order {
			l.stripes[i].Unlock()
		}
	}
}

// storeWriter remembers the first error of the blob writer it wraps, so
// a failure to store the upload (a full or read-only disk) is told apart
// from a failure to read it, which is the client's.
type storeWriter struct {
	w   io.Writer
	err error
}

func (s *storeWriter) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	if err != nil && s.err == nil {
		s.err = err
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

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	v := strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/float64(div)), ".0")
	return v + " " + string("KMGTPE"[exp]) + "iB"
}
