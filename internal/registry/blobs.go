package registry

import (
	"bytes"
	"io"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/opencontainers/go-digest"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/httpx"
	"github.com/chartctl/chartctl/internal/smallblobs"
)

// handleBlob answers GET, HEAD and DELETE on /v2/<name>/blobs/<digest>. A
// blob is readable only in the names that hold it (pushed or mounted
// there, or a chart version's archive, provenance file or config there).
func (r *Registry) handleBlob(c echo.Context, m pathMatch) error {
	req := c.Request()
	name, ref := m[1], m[2]
	act := actionPull
	if req.Method == http.MethodDelete {
		act = actionDelete
	}
	p, repo, err := r.authorize(c, name, act)
	if err != nil {
		return err
	}
	d, err := parseDigest(ref)
	if err != nil {
		return err
	}
	if act == actionDelete {
		return r.deleteBlob(c, p, repo, name, d)
	}
	ctx := req.Context()
	ds := d.String()
	// A blob of one of the chart's versions is found in memory (the chart
	// digest index); other blobs by the name's links.
	cb, err := r.chartBlob(ctx, name, ds)
	if err != nil {
		return err
	}
	if cb == nil {
		if _, err := r.OCI.BlobLink(ctx, name, ds); err == nil {
			return r.serveBlob(c, ds, nil)
		} else if chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
			return err
		}
		if b, err := r.artifactHubBlob(ctx, name, ds); err != nil {
			return err
		} else if b != nil {
			return r.serveBlob(c, ds, b)
		}
		return errBlobUnknown(ds)
	}
	if cb.chart.Held() {
		// A held version's blobs are served to nobody (CONTRACT §18).
		return errBlobUnknown(ds)
	}
	if req.Method == http.MethodGet && cb.chart.Digest == ds {
		// A pull of the chart layer is a download of the archive.
		r.App.CountDownload(cb.chart.Repository, cb.chart.Name, cb.chart.Version)
	}
	return r.serveBlob(c, ds, cb.data)
}

// Header values of every blob answer (assigned, never modified; capacity
// equal to length, so an Add elsewhere copies).
var (
	hdrOctetStream = []string{"application/octet-stream"}[:1:1]
	hdrImmutable   = []string{"max-age=31536000"}[:1:1]
)

// serveBlob answers a GET or HEAD of blob ds: data when it is given (a
// derived config), else the stored blob through the application layer,
// which holds small ones in memory. Ranges and If-None-Match on the ETag
// are answered (httpx.ServeContent); a stored blob read from disk is
// bounded by the idle timeout.
func (r *Registry) serveBlob(c echo.Context, ds string, data []byte) error {
	w := c.Response()
	var content io.ReadSeeker
	var etag, digestHdr []string
	if data != nil {
		content = bytes.NewReader(data)
	} else {
		b, err := r.App.OpenBlob(c.Request().Context(), ds)
		if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
			return errBlobUnknown(ds)
		} else if err != nil {
			return err
		}
		defer b.Close()
		if mem, ok := b.(*smallblobs.Reader); ok {
			// In memory: nothing to wait for but the client, whom the
			// server's write timeout bounds.
			content, etag, digestHdr = mem, mem.Blob().ETagHeader(), mem.Blob().DigestHeader()
		} else {
			content = r.idleSeeker(w, b)
		}
	}
	if etag == nil {
		etag, digestHdr = []string{`"` + ds + `"`}, []string{ds}
	}
	h := w.Header()
	h["Docker-Content-Digest"] = digestHdr
	h["Etag"] = etag
	h["Content-Type"] = hdrOctetStream
	h["Cache-Control"] = hdrImmutable
	httpx.ServeContent(c, content)
	return nil
}

// deleteBlob unlinks a blob from name, in repository repo, with its audit
// entry. A blob a chart version of the repository refers to is refused:
// delete the chart version instead.
func (r *Registry) deleteBlob(c echo.Context, p *chartctl.Principal, repo *chartctl.Repository, name string, d digest.Digest) error {
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
	rctx := r.App.Record(ctx, "blob.delete", name+"@"+d.String(), repo.Organization)
	if err := r.OCI.UnlinkBlob(rctx, name, d.String()); chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
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
	if wellFormedDigest(s) {
		// What every client sends; go-digest would say the same after
		// two regular expressions.
		return digest.Digest(s), nil
	}
	d, err := digest.Parse(s)
	if err != nil {
		return "", errDigestInvalid("Invalid digest %q.", s)
	}
	if d.Algorithm() != digest.SHA256 && d.Algorithm() != digest.SHA512 {
		return "", errDigestInvalid("Unsupported digest algorithm %q; use sha256 or sha512.", d.Algorithm())
	}
	return d, nil
}

// wellFormedDigest reports whether s is "sha256:" and 64, or "sha512:"
// and 128, lowercase hexadecimal digits: a valid digest of a supported
// algorithm, as digest.Parse would find it.
func wellFormedDigest(s string) bool {
	var hex string
	switch {
	case strings.HasPrefix(s, "sha256:"):
		hex = s[len("sha256:"):]
		if len(hex) != 64 {
			return false
		}
	case strings.HasPrefix(s, "sha512:"):
		hex = s[len("sha512:"):]
		if len(hex) != 128 {
			return false
		}
	default:
		return false
	}
	for i := 0; i < len(hex); i++ {
		if c := hex[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
