package proxy

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chartctl"
)

// fetchProv adds to up, the archive just fetched from archive on r's
// Helm upstream, the provenance file the upstream serves beside it
// (`<archive>.prov`, as `helm package --sign` writes it and Helm's
// `--verify` fetches it), so the version is stored with it and verifies
// like a pushed one. An upstream without one (404, or any other client
// error: static hosts answer 403 for a missing object) adds none; a
// server error or a failed connection fails the fill, which is tried
// again after the negative cache's time, rather than store the version
// for good without its signature.
func (c *Cache) fetchProv(ctx context.Context, r *chartctl.Repository, up *app.Upload, archive *url.URL) error {
	pu := *archive
	pu.Path += ".prov"
	if pu.RawPath != "" {
		pu.RawPath += ".prov"
	}
	req, err := c.request(ctx, r, &pu)
	if err != nil {
		return err
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return c.upstreamError(r, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusOK:
	case resp.StatusCode >= 500:
		return c.upstreamError(r, fmt.Errorf("the provenance file %s answered %s", pu.Redacted(), resp.Status))
	default:
		return nil
	}
	body := &readErr{r: resp.Body}
	if err := c.app.ReceiveProv(ctx, up, body); err != nil {
		if body.err != nil {
			return c.upstreamError(r, body.err)
		}
		return err
	}
	return nil
}
