package web

import (
	"bytes"
	"io"
	"net/http"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/chart"
	"github.com/chartctl/chartctl/internal/chartctl"
)

// maxChartFile is the largest file of a chart the files route serves.
const maxChartFile = 4 << 20

// chartFilePolicy is the Content-Security-Policy of a chart's own file:
// nothing loads, no script runs (an SVG opened on its own included), and
// the document is sandboxed to a unique origin.
const chartFilePolicy = "default-src 'none'; style-src 'unsafe-inline'; sandbox"

// chartFileType is the Content-Type a chart file is served with, by its
// name: the raster images and SVG a README shows, text for the rest when it
// is UTF-8 (Markdown, YAML), else an attachment. Never HTML: a chart's
// files are hostile.
func chartFileType(name string, content []byte) (ctype string, attachment bool) {
	switch strings.ToLower(path.Ext(name)) {
	case ".png":
		return "image/png", false
	case ".jpg", ".jpeg":
		return "image/jpeg", false
	case ".gif":
		return "image/gif", false
	case ".webp":
		return "image/webp", false
	case ".svg":
		return "image/svg+xml", false
	}
	if utf8.Valid(content) {
		return "text/plain; charset=utf-8", false
	}
	return "application/octet-stream", true
}

// handleChartFile serves one file of a chart version's archive (the
// README's relative links and images lead here), to those who may see the
// version, with the headers of chartFilePolicy and nosniff.
func (d *Dashboard) handleChartFile(c echo.Context) error {
	p, r, ok, err := d.visibleRepo(c)
	if !ok {
		return err
	}
	ctx := c.Request().Context()
	want := strings.TrimPrefix(path.Clean("/"+c.Param("*")), "/")
	if want == "" {
		return d.notFound(c)
	}
	cv, err := d.opts.App.ChartVersion(ctx, r, c.Param("name"), c.Param("version"))
	if err == nil {
		// A held version's files are not served: its archive is not.
		err = d.opts.App.ServableVersion(ctx, p, cv)
	}
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		return d.notFound(c)
	} else if err != nil {
		return err
	}
	b, err := d.opts.App.Blobs.Open(ctx, cv.Digest)
	if err != nil {
		return err
	}
	defer b.Close()
	var content []byte
	found := false
	_, err = chart.Walk(b, d.opts.App.Config.ChartLimits, func(p string, size int64, rd io.Reader) error {
		if p != want || size > maxChartFile {
			return nil
		}
		buf, err := io.ReadAll(io.LimitReader(rd, maxChartFile))
		content, found = buf, err == nil
		return err
	})
	if err != nil {
		// The archive was valid when stored; one that no longer reads is
		// the store's fault, not the visitor's.
		return err
	}
	if !found {
		return d.notFound(c)
	}
	ctype, attach := chartFileType(want, content)
	h := c.Response().Header()
	h.Set("Content-Type", ctype)
	h.Set("Content-Security-Policy", chartFilePolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "private, no-cache")
	h.Set("ETag", `"`+cv.Digest+"/"+want+`"`)
	if attach {
		h.Set("Content-Disposition", `attachment; filename="`+strings.ReplaceAll(path.Base(want), `"`, "")+`"`)
	}
	http.ServeContent(c.Response(), c.Request(), "", cv.CreatedAt, bytes.NewReader(content))
	return nil
}
