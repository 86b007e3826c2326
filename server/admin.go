package server

import (
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/backup"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/httpx"
)

// handleBackup streams a consistent backup (§14): the records of one read
// transaction and every blob they refer to, which stay on disk until the
// backup has copied them even if their charts are deleted meanwhile.
func (s *Server) handleBackup(c echo.Context) error {
	if err := requireAdmin(c); err != nil {
		return err
	}
	exp, ok := s.Store.(chartctl.Exporter)
	if !ok {
		return chartctl.Errorf(chartctl.EUNAVAILABLE, "This server's metadata store cannot take backups.")
	}
	release := s.app.HoldBlobDeletes()
	defer release()
	ctx := c.Request().Context()
	h := c.Response().Header()
	h.Set("Content-Type", backup.MediaType)
	h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="chartctl-backup-%s.tar"`, s.Now().UTC().Format("20060102T150405Z")))
	h.Set("Cache-Control", "no-store")
	c.Response().WriteHeader(http.StatusOK)
	_, err := backup.Write(ctx, c.Response(), backup.Source{Store: exp, Blobs: s.Blobs, Now: s.Now, Snapshot: s.BackupSnapshotHook})
	// After the status is sent a failure can only cut the archive short:
	// it then lacks its manifest, which the CLI (checking as it
	// downloads), restore and verify all refuse. The error is logged, and
	// audited as a failed backup.download by the audit middleware.
	if err == nil {
		s.app.AuditSuccess(ctx, "backup.download", "server", "")
	}
	return err
}

// handleVerify checks the live store and blobs (§14).
func (s *Server) handleVerify(c echo.Context) error {
	if err := requireAdmin(c); err != nil {
		return err
	}
	// Orphans younger than the grace period await collection; they are
	// not problems.
	res, err := backup.VerifyStore(c.Request().Context(), s.Store, s.Blobs, backup.PendingSince(s.app.Now().Add(-s.app.BlobGrace())))
	if err != nil {
		return err
	}
	s.app.AuditSuccess(c.Request().Context(), "backup.verify", "server", "")
	return httpx.Data(c, res)
}
