package registry

import (
	"bytes"
	"github.com/labstack/echo/v4"
	"io"
	"net/http"
	"time"

	"github.com/opencontainers/go-digest"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// handleBlob answers GET, HEAD and DELETE on /v2/<name>/blobs/<digest>. A
// blob is readable only in the names that hold it (pushed or mounted
// there, or a chart version's archive, provenance file or config there).
func (r *Registry) handleBlob(c echo.Context, m []string) error {
	w, req := c.Response(), c.Request()
	name, ref := m[1], m[2]
	act := actionPull
	if req.Method == http.MethodDelete {
		act = actionDelete
	}
	p, _, err := r.authorize(c, name, act)
	if err != nil {
		return err
	}
	d, err := parseDigest(ref)
	if err != nil {
		return err
	}
	if act == actionDelete {
		return r.deleteBlob(c, p, name, d)
	}
	ctx := req.Context()
	var content io.ReadSeeker
	if _, err := r.OCI.BlobLink(ctx, name, d.String()); err == nil {
		b, err := r.Blobs.Open(ctx, d.String())
		if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
			return errBlobUnknown(d.String())
		} else if err != nil {
			return err
		}
		defer b.Close()
		content = b
		if req.Method == http.MethodGet {
			// A chart's layer pushed over OCI is also linked: a pull of it is
			// a download of the archive.
			if cb, err := r.chartBlob(ctx, name, d.String()); err == nil && cb != nil && cb.chart.Digest == d.String() {
				r.App.CountDownload(cb.chart.Repository, cb.chart.Name, cb.chart.Version)
			}
		}
	} else if chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
		return err
	} else {
		cb, err := r.chartBlob(ctx, name, d.String())
		if err != nil {
			return err
		}
		if cb == nil {
			return errBlobUnknown(d.String())
		}
		if req.Method == http.MethodGet && cb.chart.Digest == d.String() {
			// A pull of the chart layer is a download of the archive.
			r.App.CountDownload(cb.chart.Repository, cb.chart.Name, cb.chart.Version)
		}
		if cb.data != nil {
			content = bytes.NewReader(cb.data)
		} else {
			b, err := r.Blobs.Open(ctx, d.String())
			if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
				return errBlobUnknown(d.String())
			} else if err != nil {
				return err
			}
			defer b.Close()
			content = b
		}
	}
	h := w.Header()
	h.Set("Docker-Content-Digest", d.String())
	h.Set("ETag", `"`+d.String()+`"`)
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Cache-Control", "max-age=31536000")
	// ServeContent answers Range (206, 416) and If-None-Match on the ETag.
	http.ServeContent(w, req, "", time.Time{}, r.idleSeeker(w, content))
	return nil
}

// deleteBlob unlinks a blob from name. A blob a chart version of the
// repository refers to is refused: delete the chart version instead.
func (r *Registry) deleteBlob(c echo.Context, p *chartctl.Principal, name string, d digest.Digest) error {
	ctx := c.Request().Context()
	if err := r.charge(c, p, ""); err != nil {
		return err
	}
	cb, err := r.chartBlob(ctx, name, d.String())
	if err != nil {
		return err
	}
	var owner *chartctl.ChartVersion
	if cb != nil {
		owner = cb.chart
	} else if owner, err = r.chartManifestBlob(ctx, name, d.String()); err != nil {
		return err
	}
	if owner != nil {
		return errDenied("Blob %s belongs to chart %s version %s; delete the chart version (its manifest) instead.", d, owner.Name, owner.Version)
	}
	if err := r.OCI.UnlinkBlob(ctx, name, d.String()); chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		return errBlobUnknown(d.String())
	} else if err != nil {
		return err
	}
	r.App.DeleteIfOrphan(ctx, d.String())
	c.Response().WriteHeader(http.StatusAccepted)
	return nil
}

// parseDigest parses a digest of a supported algorithm (sha256, sha512).
func parseDigest(s string) (digest.Digest, error) {
	d, err := digest.Parse(s)
	if err != nil {
		return "", errDigestInvalid("Invalid digest %q.", s)
	}
	if d.Algorithm() != digest.SHA256 && d.Algorithm() != digest.SHA512 {
		return "", errDigestInvalid("Unsupported digest algorithm %q; use sha256 or sha512.", d.Algorithm())
	}
	return d, nil
}
