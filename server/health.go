package server

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/httpx"
)

// handleHealthz answers 200 while the process serves (liveness).
func (s *Server) handleHealthz(c echo.Context) error {
	return httpx.WriteJSON(c, http.StatusOK, map[string]string{"status": "ok"})
}

// pinger is a store that can say whether it answers (the PostgreSQL and
// S3 engines, the blob directory).
type pinger interface {
	Ping(ctx context.Context) error
}

// handleReadyz answers 200 when the metadata store and the blob store
// answer and the server is not shutting down (readiness), 503 naming the
// failing part otherwise, so a load balancer sends no requests to a
// replica that has lost its database or its object store.
func (s *Server) handleReadyz(c echo.Context) error {
	if !s.ready.Load() {
		return httpx.WriteJSON(c, http.StatusServiceUnavailable, map[string]string{"status": "shutting down"})
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), 5*time.Second)
	defer cancel()
	var err error
	if p, ok := s.Store.(pinger); ok {
		err = p.Ping(ctx)
	} else {
		_, err = s.Store.UserCount(ctx)
	}
	if err != nil {
		s.Logger.Error("readiness: metadata store", "err", err)
		return httpx.WriteJSON(c, http.StatusServiceUnavailable, map[string]string{"status": "database unavailable"})
	}
	if p, ok := s.Blobs.(pinger); ok {
		if err := p.Ping(ctx); err != nil {
			s.Logger.Error("readiness: blob store", "err", err)
			return httpx.WriteJSON(c, http.StatusServiceUnavailable, map[string]string{"status": "blob store unavailable"})
		}
	}
	return httpx.WriteJSON(c, http.StatusOK, map[string]string{"status": "ready"})
}
