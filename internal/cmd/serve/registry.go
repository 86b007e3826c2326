package serve

import (
	"log/slog"
	"path/filepath"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/registry"
	"github.com/chartctl/chartctl/server"
)

// mountRegistry adds the OCI registry (/v2, CONTRACT §11) to srv, on the
// server's own application layer, so a chart pushed over OCI is the same
// chart version /v1 and the Helm repository serve. It chains any Extra
// hook already set and returns the registry, whose background work
// (garbage collection) the caller runs.
func mountRegistry(srv *server.Server, db chartctl.OCIStore, blobs chartctl.AlgorithmBlobStore, cfg *Config, logger *slog.Logger) *registry.Registry {
	reg := registry.New(nil, db, blobs, filepath.Join(cfg.Data, "uploads"))
	reg.Auth, reg.Limits, reg.Uploads = srv, srv, srv
	reg.Logger = logger
	reg.Config.BaseURL = cfg.BaseURL
	reg.Config.MaxBlobSize = int64(cfg.MaxBlobSize)
	reg.Config.IdleTimeout = cfg.IdleTimeout
	reg.Config.GCGrace = cfg.GCGrace
	prev := srv.Extra
	srv.Extra = func(e *echo.Echo) {
		reg.App = srv.App()
		reg.Register(e)
		reg.RegisterAdmin(srv.API())
		if prev != nil {
			prev(e)
		}
	}
	return reg
}
