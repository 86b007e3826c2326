package httpx

import (
	"context"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/coalesce"
	"github.com/chartctl/chartctl/internal/smallblobs"
)

// osFile is implemented by blobs that are files on the local filesystem
// (internal/blob). Served as the *os.File itself, such a blob goes from
// the page cache to the socket with sendfile, never through user space.
type osFile interface {
	OSFile() *os.File
}

// IdleFile is a file on the local filesystem served by sendfile whose
// transfer an idle timeout bounds, not a total deadline: Extend is called
// before each chunk of at most idleChunk bytes goes to the socket, so a
// transfer lives as long as bytes flow. Wrapping the file in a reader
// that extends the deadline on every Read would hide the *os.File from
// the connection and copy every byte through user space.
type IdleFile struct {
	*os.File
	// Extend pushes the connection's write deadline into the future.
	Extend func()
}

// idleChunk is how many bytes of an IdleFile one sendfile call sends
// before the deadline is extended again: at 1 MiB/s, 4 s of transfer.
const idleChunk = 4 << 20

// resident returns the blob in memory content reads (the application
// layer's cache of small blobs), if it is one.
func resident(content io.ReadSeeker) (*smallblobs.Blob, bool) {
	if r, ok := content.(*smallblobs.Reader); ok {
		return r.Blob(), true
	}
	return nil, false
}

// BlobOpener opens stored blobs for downloads (the application layer,
// which serves small ones from memory).
type BlobOpener interface {
	OpenBlob(ctx context.Context, digest string) (chartctl.Blob, error)
}

// Header values every blob download shares (assigned, never modified;
// capacity equal to length, so an Add elsewhere copies).
var (
	hdrPrivateRevalidate = []string{"private, max-age=0, must-revalidate"}[:1:1]
	hdrAcceptRanges      = []string{"bytes"}[:1:1]
	hdrGzipType          = []string{"application/gzip"}[:1:1]
	hdrProvType          = []string{"application/pgp-signature"}[:1:1]
)

// ServeBlob serves the stored blob digest, opened through blobs (from
// memory when the application layer keeps it), as a download named
// filename, with ranges, conditional requests and the digest as a strong
// ETag.
func ServeBlob(c echo.Context, blobs BlobOpener, digest, filename, contentType string) error {
	b, err := blobs.OpenBlob(c.Request().Context(), digest)
	if err != nil {
		return err
	}
	defer b.Close()
	h := c.Response().Header()
	h["Content-Type"] = headerValue(contentType)
	if rb, ok := resident(b); ok {
		h["Etag"] = rb.ETagHeader()
	} else {
		h["Etag"] = []string{strconv.Quote(digest)}
	}
	h["Cache-Control"] = hdrPrivateRevalidate
	h["Content-Disposition"] = []string{`attachment; filename="` + filename + `"`}
	ServeContent(c, b)
	return nil
}

// headerValue returns a header value of one element, shared for the
// content types of chart downloads.
func headerValue(v string) []string {
	switch v {
	case "application/gzip":
		return hdrGzipType
	case "application/pgp-signature":
		return hdrProvType
	}
	return []string{v}
}

// ServeContent answers a GET or HEAD with content, a blob whose
// Content-Type and ETag the caller has set: Range requests (206, 416) and
// conditional ones (If-None-Match, If-Match on the ETag) are answered by
// http.ServeContent, a file's body going by sendfile. A blob held in
// memory asked for whole and without conditions, which is what a chart
// download is, takes the shorter path: the headers http.ServeContent
// would send (Accept-Ranges, Content-Length), then its bytes in one write,
// joined to the headers' (coalesce.Write).
func ServeContent(c echo.Context, content io.ReadSeeker) {
	req, resp := c.Request(), c.Response()
	if rb, ok := resident(content); ok && wholeUnconditional(req.Header) {
		h := resp.Header()
		h["Accept-Ranges"] = hdrAcceptRanges
		h["Content-Length"] = rb.LengthHeader()
		resp.WriteHeader(http.StatusOK)
		if req.Method != http.MethodHead {
			_, _ = coalesce.Write(resp, req, rb.Bytes())
		}
		return
	}
	if f, ok := content.(osFile); ok {
		content = f.OSFile()
	}
	http.ServeContent(sendfileWriter{resp}, req, "", time.Time{}, content)
}

// wholeUnconditional reports whether a request asks for the whole
// representation without preconditions that http.ServeContent would
// evaluate for content served without a modification time: no Range, no
// If-Match, no If-None-Match. (If-Modified-Since and If-Unmodified-Since
// are ignored without a modification time, and If-Range only qualifies a
// Range.)
func wholeUnconditional(h http.Header) bool {
	return h.Get("Range") == "" && h.Get("If-None-Match") == "" && h.Get("If-Match") == ""
}

// sendfileWriter is echo's response with io.ReaderFrom: http.ServeContent
// copies the body with io.CopyN, which hands a file to the connection's
// ReadFrom (sendfile) only when the writer has one; echo's Response has
// none, so without this the copy goes through a buffer in user space.
type sendfileWriter struct{ *echo.Response }

// smallBody is the largest body copied rather than sent with sendfile:
// it fits, with the header, in the connection's 4 KiB write buffer, so it
// leaves in one write and one TCP segment, where sendfile costs a write
// for the header, a sendfile for the body and two segments.
const smallBody = 3 << 10

// smallBufs holds the buffers small bodies are copied through.
var smallBufs = sync.Pool{New: func() any { return new([smallBody]byte) }}

// ReadFrom writes the header if no byte was written yet (as Write does)
// and copies src to the underlying ResponseWriter, keeping the response's
// byte count: a small body (http.ServeContent hands over an
// io.LimitedReader) through a pooled buffer, anything larger by the
// connection's ReadFrom, which is sendfile for a file.
func (w sendfileWriter) ReadFrom(src io.Reader) (int64, error) {
	if !w.Committed {
		if w.Status == 0 {
			w.Status = http.StatusOK
		}
		w.WriteHeader(w.Status)
	}
	if lr, ok := src.(*io.LimitedReader); ok && lr.N <= smallBody {
		buf := smallBufs.Get().(*[smallBody]byte)
		defer smallBufs.Put(buf)
		n, err := io.CopyBuffer(writerOnly{w.Writer}, lr, buf[:])
		w.Size += n
		return n, err
	}
	if lr, ok := src.(*io.LimitedReader); ok {
		if f, ok := lr.R.(*IdleFile); ok {
			return w.readIdle(f, lr)
		}
	}
	n, err := io.Copy(w.Writer, src)
	w.Size += n
	return n, err
}

// readIdle sends lr (whose reader is f) in chunks of at most idleChunk
// bytes, each a sendfile of the file itself (a LimitedReader over an
// *os.File is what the connection's ReadFrom hands to sendfile),
// extending the write deadline before each.
func (w sendfileWriter) readIdle(f *IdleFile, lr *io.LimitedReader) (int64, error) {
	var total int64
	for lr.N > 0 {
		f.Extend()
		n, err := io.Copy(w.Writer, &io.LimitedReader{R: f.File, N: min(lr.N, idleChunk)})
		lr.N -= n
		total += n
		w.Size += n
		if err != nil || n == 0 {
			return total, err
		}
	}
	return total, nil
}

// writerOnly hides a writer's ReadFrom, so io.CopyBuffer uses the buffer.
type writerOnly struct{ io.Writer }

// SendFile answers with the first n bytes of f as the body, after the
// headers the caller has set (Content-Length among them) and a 200: by
// sendfile when the connection offers it, as for a stored blob. HEAD gets
// the headers only.
func SendFile(c echo.Context, f *os.File, n int64) error {
	resp := c.Response()
	resp.WriteHeader(http.StatusOK)
	if c.Request().Method == http.MethodHead {
		return nil
	}
	_, err := sendfileWriter{resp}.ReadFrom(&io.LimitedReader{R: f, N: n})
	return err
}
