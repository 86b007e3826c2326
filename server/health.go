package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/httpx"
)

// handleHealthz answers 200 while the process serves (liveness).
func (s *Server) handleHealthz(c echo.Context) error {
	return httpx.WriteJSON(c, http.StatusOK, map[string]string{"status": "ok"})
}

// handleReadyz answers 200 when the store answers and the server is not
// shutting down (readiness), 503 otherwise.
func (s *Server) handleReadyz(c echo.Context) error {
	if !s.ready.Load() {
		return httpx.WriteJSON(c, http.StatusServiceUnavailable, map[string]string{"status": "shutting down"})
	}
	if _, err := s.Store.UserCount(c.Request().Context()); err != nil {
		s.Logger.Error("readiness", "err", err)
		return httpx.WriteJSON(c, http.StatusServiceUnavailable, map[string]string{"status": "storage unavailable"})
	}
	return httpx.WriteJSON(c, http.StatusOK, map[string]string{"status": "ready"})
}
