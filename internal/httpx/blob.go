package httpx

import (
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// osFile is implemented by blobs that are files on the local filesystem
// (internal/blob). Served as the *os.File itself, such a blob goes from
// the page cache to the socket with sendfile, never through user space.
type osFile interface {
	OSFile() *os.File
}

// ServeBlob serves a stored blob as a download named filename, with
// ranges, conditional requests and the digest as a strong ETag.
func ServeBlob(c echo.Context, blobs chartctl.BlobStore, digest, filename, contentType string) error {
	b, err := blobs.Open(c.Request().Context(), digest)
	if err != nil {
		return err
	}
	defer b.Close()
	h := c.Response().Header()
	h["Content-Type"] = []string{contentType}
	h["Etag"] = []string{strconv.Quote(digest)}
	h["Cache-Control"] = hdrPrivateRevalidate
	h["Content-Disposition"] = []string{`attachment; filename="` + filename + `"`}
	var content io.ReadSeeker = b
	if f, ok := b.(osFile); ok {
		content = f.OSFile()
	}
	http.ServeContent(sendfileWriter{c.Response()}, c.Request(), "", time.Time{}, content)
	return nil
}

// hdrPrivateRevalidate is the Cache-Control of every blob download,
// shared by all of them (assigned, never modified).
var hdrPrivateRevalidate = []string{"private, max-age=0, must-revalidate"}[:1:1]

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
	n, err := io.Copy(w.Writer, src)
	w.Size += n
	return n, err
}

// writerOnly hides a writer's ReadFrom, so io.CopyBuffer uses the buffer.
type writerOnly struct{ io.Writer }
