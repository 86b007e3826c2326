package client

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"iter"
	"mime/multipart"
	"net/http"
	"net/url"
	"path/filepath"
	"sync"
	"time"
)

// ChartsService lists, uploads, downloads and deletes chart versions
// (/v1/repositories/:repo/charts).
type ChartsService service

// ChartListOptions filters a repository's chart list.
type ChartListOptions struct {
	// Name, when set, keeps only the chart with this name.
	Name string
	// Version, when set, keeps only this version.
	Version string
	ListOptions
}

// chartsPath returns the path of a repository's charts, with optional
// further segments, each escaped.
func chartsPath(repo string, segments ...string) string {
	p := "v1/repositories/" + url.PathEscape(repo) + "/charts"
	for _, s := range segments {
		p += "/" + url.PathEscape(s)
	}
	return p
}

// List returns one page of a repository's chart versions, by name then by
// version, newest first.
func (s *ChartsService) List(ctx context.Context, repo string, opts *ChartListOptions) ([]*Chart, *Response, error) {
	q := url.Values{}
	if opts != nil {
		if opts.Name != "" {
			q.Set("name", opts.Name)
		}
		if opts.Version != "" {
			q.Set("version", opts.Version)
		}
		opts.values(q)
	}
	return s.list(ctx, withQuery(chartsPath(repo), q))
}

// All iterates over every chart version of a repository that opts selects.
func (s *ChartsService) All(ctx context.Context, repo string, opts ChartListOptions) iter.Seq2[*Chart, error] {
	return paginate(ctx, opts.ListOptions, func(ctx context.Context, lo *ListOptions) ([]*Chart, *Response, error) {
		o := opts
		o.ListOptions = *lo
		return s.List(ctx, repo, &o)
	})
}

// Versions returns one page of the versions of the chart name in repo,
// newest first.
func (s *ChartsService) Versions(ctx context.Context, repo, name string, opts *ListOptions) ([]*Chart, *Response, error) {
	q := url.Values{}
	if opts != nil {
		opts.values(q)
	}
	return s.list(ctx, withQuery(chartsPath(repo, name), q))
}

// AllVersions iterates over every version of the chart name in repo.
func (s *ChartsService) AllVersions(ctx context.Context, repo, name string) iter.Seq2[*Chart, error] {
	return paginate(ctx, ListOptions{}, func(ctx context.Context, lo *ListOptions) ([]*Chart, *Response, error) {
		return s.Versions(ctx, repo, name, lo)
	})
}

// list fetches one page of charts at path.
func (s *ChartsService) list(ctx context.Context, path string) ([]*Chart, *Response, error) {
	req, err := s.client.NewRequest(http.MethodGet, path, nil)
	if err != nil {
		return nil, nil, err
	}
	var charts []*Chart
	resp, err := s.client.Do(ctx, req, &charts)
	if err != nil {
		return nil, resp, err
	}
	return charts, resp, nil
}

// Get returns one chart version's metadata.
func (s *ChartsService) Get(ctx context.Context, repo, name, version string) (*Chart, *Response, error) {
	req, err := s.client.NewRequest(http.MethodGet, chartsPath(repo, name, version), nil)
	if err != nil {
		return nil, nil, err
	}
	c := new(Chart)
	resp, err := s.client.Do(ctx, req, c)
	if err != nil {
		return nil, resp, err
	}
	return c, resp, nil
}

// Delete deletes one chart version.
func (s *ChartsService) Delete(ctx context.Context, repo, name, version string) (*Response, error) {
	req, err := s.client.NewRequest(http.MethodDelete, chartsPath(repo, name, version), nil)
	if err != nil {
		return nil, err
	}
	return s.client.Do(ctx, req, nil)
}

// Download writes one chart version's archive (.tgz) to w. The response's
// ETag is the archive's digest. A failed request writes nothing to w.
func (s *ChartsService) Download(ctx context.Context, repo, name, version string, w io.Writer) (*Response, error) {
	req, err := s.client.NewRequest(http.MethodGet, chartsPath(repo, name, version, "archive"), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/gzip, application/octet-stream")
	return s.client.Do(ctx, req, w)
}

// UploadOptions tunes Upload.
type UploadOptions struct {
	// Filename is the archive's file name in the form; the default is the
	// reader's Name() when it has one (an *os.File), else "chart.tgz".
	Filename string
	// Prov, when set, is the provenance file, sent in the field "prov".
	Prov io.Reader
	// Force asks the server to replace a version already stored with a
	// different digest (the server must run with --allow-overwrite).
	Force bool
	// Size is the archive's size in bytes, the total given to Progress;
	// when 0 it is measured from an io.Seeker, else it is unknown (-1).
	Size int64
	// Progress, when set, is called with (0, total) as the archive starts,
	// then with the bytes sent so far as it streams into the request; the
	// last call has sent equal to the archive's length. A retry sends the
	// archive again, so the count then starts over from 0.
	Progress func(sent, total int64)
	// CreatedAt, when set, asks the server to keep this as the version's
	// creation time (form field "created_at"); only a credential with the
	// admin scope may send it (an import keeping the source's times).
	CreatedAt time.Time
}

// Upload streams a chart archive (a .tgz) to repo as multipart/form-data
// (field "chart"), without holding it in memory. Uploading the same
// archive again answers the stored record; the same version with another
// digest is a 409 (see IsConflict) unless opts.Force is set.
//
// An upload is retried only when the server refused it with 429 (it was
// then not executed) and the archive (and provenance) are io.ReadSeekers,
// so that they can be read again from where they started.
func (s *ChartsService) Upload(ctx context.Context, repo string, archive io.Reader, opts *UploadOptions) (*ChartUpload, *Response, error) {
	up := new(ChartUpload)
	resp, err := s.upload(ctx, repo, archive, opts, false, up)
	if err != nil {
		return nil, resp, err
	}
	return up, resp, nil
}

// upload sends archive as an upload (dryRun: a check of the repository's
// admission policy that stores nothing) and decodes the answer into out.
func (s *ChartsService) upload(ctx context.Context, repo string, archive io.Reader, opts *UploadOptions, dryRun bool, out any) (*Response, error) {
	if archive == nil {
		return nil, fmt.Errorf("chartctl: upload: nil archive")
	}
	var o UploadOptions
	if opts != nil {
		o = *opts
	}
	if o.Filename == "" {
		o.Filename = "chart.tgz"
		if n, ok := archive.(interface{ Name() string }); ok && n.Name() != "" {
			o.Filename = filepath.Base(n.Name())
		}
	}
	b, err := newUploadBody(archive, o)
	if err != nil {
		return nil, err
	}
	q := url.Values{}
	if o.Force {
		q.Set("force", "true")
	}
	if dryRun {
		q.Set("dry_run", "true")
	}
	body, err := b.open()
	if err != nil {
		return nil, err
	}
	req, err := s.client.newRequest(http.MethodPost, withQuery(chartsPath(repo), q), body)
	if err != nil {
		_ = body.Close()
		return nil, err
	}
	req.Header.Set("Content-Type", "multipart/form-data; boundary="+b.boundary)
	// The server answers a refused upload (bad credentials, no such
	// repository) before reading its body: waiting for its "100 Continue"
	// sends no archive it would refuse, and the refusal cannot be lost to
	// a connection reset while the archive is still being written.
	req.Header.Set("Expect", "100-continue")
	if b.replayable {
		req.GetBody = b.open
	}
	defer b.stop()
	return s.client.Do(ctx, req, out)
}

// uploadBody produces the multipart body of an upload through a pipe,
// once per attempt.
type uploadBody struct {
	archive    io.Reader
	prov       io.Reader
	opts       UploadOptions
	boundary   string
	total      int64
	replayable bool
	// start offsets of archive and prov, to seek back to on a retry.
	archiveStart, provStart int64

	mu   sync.Mutex
	pr   *io.PipeReader
	done chan struct{}
}

func newUploadBody(archive io.Reader, o UploadOptions) (*uploadBody, error) {
	var rnd [16]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return nil, fmt.Errorf("chartctl: upload: boundary: %w", err)
	}
	b := &uploadBody{
		archive:  archive,
		prov:     o.Prov,
		opts:     o,
		boundary: "chartctl-" + hex.EncodeToString(rnd[:]),
		total:    o.Size,
	}
	measured := b.total > 0
	if as, ok := archive.(io.Seeker); ok {
		// An *os.File on a pipe is a Seeker whose Seek fails: then the
		// archive can be neither measured nor replayed.
		if start, err := as.Seek(0, io.SeekCurrent); err == nil {
			b.replayable = true
			b.archiveStart = start
			if !measured {
				end, err := as.Seek(0, io.SeekEnd)
				if err != nil {
					return nil, fmt.Errorf("chartctl: upload: measure archive: %w", err)
				}
				if _, err := as.Seek(start, io.SeekStart); err != nil {
					return nil, fmt.Errorf("chartctl: upload: measure archive: %w", err)
				}
				b.total = end - start
				measured = true
			}
		}
	}
	if !measured {
		b.total = -1
	}
	if o.Prov != nil {
		ps, ok := o.Prov.(io.Seeker)
		if !ok {
			b.replayable = false
		} else if start, err := ps.Seek(0, io.SeekCurrent); err != nil {
			b.replayable = false
		} else {
			b.provStart = start
		}
	}
	return b, nil
}

// open stops the previous attempt's writer, rewinds the sources when this is
// not the first attempt, and starts a writer for a new pipe.
func (b *uploadBody) open() (io.ReadCloser, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pr != nil {
		b.pr.CloseWithError(errUploadRestarted)
		<-b.done
		if err := b.rewind(); err != nil {
			return nil, err
		}
	}
	pr, pw := io.Pipe()
	done := make(chan struct{})
	b.pr, b.done = pr, done
	go func() {
		defer close(done)
		pw.CloseWithError(b.write(pw))
	}()
	return pr, nil
}

// stop ends the writer of the last attempt, once the request is over.
func (b *uploadBody) stop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pr != nil {
		b.pr.CloseWithError(errUploadRestarted)
		<-b.done
	}
}

// errUploadRestarted ends a writer whose attempt is over.
var errUploadRestarted = errors.New("chartctl: upload attempt ended")

// rewind seeks the sources back to where they started.
func (b *uploadBody) rewind() error {
	if _, err := b.archive.(io.Seeker).Seek(b.archiveStart, io.SeekStart); err != nil {
		return fmt.Errorf("chartctl: upload: rewind archive: %w", err)
	}
	if b.prov != nil {
		if _, err := b.prov.(io.Seeker).Seek(b.provStart, io.SeekStart); err != nil {
			return fmt.Errorf("chartctl: upload: rewind provenance: %w", err)
		}
	}
	return nil
}

// write encodes the form into w.
func (b *uploadBody) write(w io.Writer) error {
	mw := multipart.NewWriter(w)
	if err := mw.SetBoundary(b.boundary); err != nil {
		return fmt.Errorf("chartctl: upload: %w", err)
	}
	if !b.opts.CreatedAt.IsZero() {
		if err := mw.WriteField("created_at", b.opts.CreatedAt.UTC().Format(time.RFC3339Nano)); err != nil {
			return fmt.Errorf("chartctl: upload: %w", err)
		}
	}
	part, err := mw.CreateFormFile("chart", b.opts.Filename)
	if err != nil {
		return fmt.Errorf("chartctl: upload: %w", err)
	}
	src := b.archive
	if b.opts.Progress != nil {
		b.opts.Progress(0, b.total)
		src = &progressReader{r: src, total: b.total, fn: b.opts.Progress}
	}
	if _, err := io.Copy(part, src); err != nil {
		return fmt.Errorf("chartctl: upload: read archive: %w", err)
	}
	if b.prov != nil {
		part, err := mw.CreateFormFile("prov", b.opts.Filename+".prov")
		if err != nil {
			return fmt.Errorf("chartctl: upload: %w", err)
		}
		if _, err := io.Copy(part, b.prov); err != nil {
			return fmt.Errorf("chartctl: upload: read provenance: %w", err)
		}
	}
	if err := mw.Close(); err != nil {
		return fmt.Errorf("chartctl: upload: %w", err)
	}
	return nil
}

// progressReader reports how much of r was read.
type progressReader struct {
	r     io.Reader
	sent  int64
	total int64
	fn    func(sent, total int64)
}

func (p *progressReader) Read(buf []byte) (int, error) {
	n, err := p.r.Read(buf)
	if n > 0 {
		p.sent += int64(n)
		p.fn(p.sent, p.total)
	}
	return n, err
}
