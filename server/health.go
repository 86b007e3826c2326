package server

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/httpx"
)

// readyTimeout bounds each readiness check, so a hung store makes /readyz
// answer 503 rather than hang the probe.
const readyTimeout = 5 * time.Second

// pinger is implemented by blob stores that can say cheaply whether they
// answer.
type pinger interface {
	Ping(ctx context.Context) error
}

// pingBlobs checks the blob store: with its Ping when it has one, else by
// opening a blob no store holds (not found is an answer).
func pingBlobs(ctx context.Context, blobs chartctl.BlobStore) error {
	if p, ok := blobs.(pinger); ok {
		return p.Ping(ctx)
	}
	b, err := blobs.Open(ctx, probeDigest)
	if err == nil {
		return b.Close()
	}
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		return nil
	}
	return err
}

// probeDigest names a blob no store holds; opening it checks that the blob
// store answers without reading or writing anything.
var probeDigest = "sha256:" + strings.Repeat("0", 64)

// handleHealthz answers 200 while the process serves (liveness).
func (s *Server) handleHealthz(c echo.Context) error {
	return httpx.WriteJSON(c, http.StatusOK, map[string]string{"status": "ok"})
}

// handleLivez answers 200 while the process runs (CONTRACT §14).
func (s *Server) handleLivez(c echo.Context) error {
	return httpx.WriteJSON(c, http.StatusOK, map[string]string{"status": "ok"})
}

// handleReadyz answers 200 {"status":"ok"} when the metadata store and the
// blob store answer and the server is not shutting down; otherwise 503 in
// the error envelope, naming the failing part (CONTRACT §14).
func (s *Server) handleReadyz(c echo.Context) error {
	if !s.ready.Load() {
		return chartctl.Errorf(chartctl.EUNAVAILABLE, "Not ready: the server is shutting down.")
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), readyTimeout)
	defer cancel()
	if _, err := s.Store.UserCount(ctx); err != nil {
		s.Logger.Error("readiness: metadata store", "err", err)
		return chartctl.Errorf(chartctl.EUNAVAILABLE, "Not ready: the metadata store does not answer.")
	}
	if err := pingBlobs(ctx, s.Blobs); err != nil {
		s.Logger.Error("readiness: blob store", "err", err)
		return chartctl.Errorf(chartctl.EUNAVAILABLE, "Not ready: the blob store does not answer.")
	}
	return httpx.WriteJSON(c, http.StatusOK, map[string]string{"status": "ok"})
}
