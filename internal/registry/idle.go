package registry

import (
	"io"
	"net/http"
	"os"
	"time"

	"github.com/chartctl/chartctl/internal/httpx"
)

// Long transfers (blob PATCH, PUT and GET) are bounded by an idle timeout,
// not a total deadline (CONTRACT §11): every read of the request body and
// every write of a blob pushes the connection's deadline Config.IdleTimeout
// into the future, so a 1 GiB push over a slow link lives as long as bytes
// keep flowing, and a stalled one is cut after the idle timeout.

// idleBody wraps a request body so each read extends the read deadline.
type idleBody struct {
	io.Reader
	rc   *http.ResponseController
	idle time.Duration
}

func (b *idleBody) Read(p []byte) (int, error) {
	// An error means the server cannot set deadlines (a test recorder);
	// the server's own timeouts then apply.
	_ = b.rc.SetReadDeadline(time.Now().Add(b.idle))
	return b.Reader.Read(p)
}

// idleContent wraps blob content served with http.ServeContent so each
// read, which a write follows, extends the write deadline.
type idleContent struct {
	io.ReadSeeker
	rc   *http.ResponseController
	idle time.Duration
}

func (c *idleContent) Read(p []byte) (int, error) {
	_ = c.rc.SetWriteDeadline(time.Now().Add(c.idle))
	return c.ReadSeeker.Read(p)
}

// idleReader returns the request body bounded by the idle timeout.
func (r *Registry) idleReader(w http.ResponseWriter, req *http.Request) io.Reader {
	if r.Config.IdleTimeout <= 0 {
		return req.Body
	}
	return &idleBody{Reader: req.Body, rc: http.NewResponseController(w), idle: r.Config.IdleTimeout}
}

// idleSeeker returns content bounded by the idle timeout.
func (r *Registry) idleSeeker(w http.ResponseWriter, content io.ReadSeeker) io.ReadSeeker {
	if r.Config.IdleTimeout <= 0 {
		return content
	}
	rc := http.NewResponseController(w)
	if f, ok := content.(interface{ OSFile() *os.File }); ok {
		// A file goes by sendfile, the deadline extended per chunk.
		return &httpx.IdleFile{File: f.OSFile(), Extend: func() { _ = rc.SetWriteDeadline(time.Now().Add(r.Config.IdleTimeout)) }}
	}
	return &idleContent{ReadSeeker: content, rc: rc, idle: r.Config.IdleTimeout}
}
